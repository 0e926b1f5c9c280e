"""The shape rules of an InputRequiredResult (basic/patterns/mrtr.mdx §Server Requirements):
one with neither input requests nor a state is a server bug, never sent to the client."""

from __future__ import annotations

import pytest

from mcpref import MCPError, Server
from mcpref.jsonrpc import INTERNAL_ERROR
from mcpref.mrtr import InputRequired
from tests.test_server import call


def test_an_input_required_result_with_nothing_to_ask_is_never_sent() -> None:
    server = Server("unit", "1")

    @server.tool()
    def empty() -> InputRequired:
        return InputRequired({})

    # The handler's bug stops the answer: as the error it raises, or as -32603 once the dispatcher
    # turns it into one; either way no input_required result reaches the client.
    with pytest.raises((ValueError, MCPError)) as caught:
        call(server, "tools/call", {"name": "empty"})
    assert not isinstance(caught.value, MCPError) or caught.value.code == INTERNAL_ERROR
