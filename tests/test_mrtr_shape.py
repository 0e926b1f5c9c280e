"""The shape rules of an InputRequiredResult (basic/patterns/mrtr.mdx §Server Requirements):
one with neither input requests nor a state is a server bug, never sent to the client."""

from __future__ import annotations

from mcpref import Server
from mcpref.jsonrpc import INTERNAL_ERROR
from mcpref.mrtr import InputRequired
from tests.test_server import fails


def test_an_input_required_result_with_nothing_to_ask_is_never_sent() -> None:
    server = Server("unit", "1")

    @server.tool()
    def empty() -> InputRequired:
        return InputRequired({})

    # The handler's bug stops the answer: the dispatcher turns it into -32603 (Internal error),
    # so no input_required result reaches the client.
    assert fails(server, "tools/call", {"name": "empty"}).code == INTERNAL_ERROR
