"""The shape rules of an InputRequiredResult (basic/patterns/mrtr.mdx §Server Requirements):
one with neither input requests nor a state is a server bug, never sent to the client."""

from __future__ import annotations

import pytest

from mcpref import Server
from mcpref.mrtr import InputRequired
from tests.test_server import call


def test_an_input_required_result_with_nothing_to_ask_is_never_sent() -> None:
    server = Server("unit", "1")

    @server.tool()
    def empty() -> InputRequired:
        return InputRequired({})

    with pytest.raises(ValueError, match="input requests, a state, or both"):
        call(server, "tools/call", {"name": "empty"})
