"""A cancellation's reason is logged on the server, at DEBUG (basic/patterns/cancellation.mdx §Implementation
Notes: both parties SHOULD log cancellation reasons)."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from typing import Any

import pytest

from mcpref import Server
from mcpref.transports.stdio import StdioServerTransport
from tests.conftest import META


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_the_reason_of_a_cancellation_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("unit", "1")

    @server.tool()
    async def wait() -> str:
        await asyncio.sleep(30)
        return "never"

    async def run() -> bytes:
        reader, output = asyncio.StreamReader(), io.BytesIO()
        transport = StdioServerTransport(server, reader=reader, output=output)
        serving = asyncio.ensure_future(transport.run())
        call = {"name": "wait", "arguments": {}, "_meta": META}
        reader.feed_data(line({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call}))
        await asyncio.sleep(0.1)
        cancel = {"requestId": 7, "reason": "the user pressed stop"}
        reader.feed_data(line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": cancel}))
        reader.feed_eof()
        await asyncio.wait_for(serving, 5)
        return output.getvalue()

    with caplog.at_level(logging.DEBUG, logger="mcpref.stdio"):
        written = asyncio.run(run())
    assert written == b""  # no answer for the cancelled request
    assert any("7" in r.getMessage() and "the user pressed stop" in r.getMessage() for r in caplog.records)
