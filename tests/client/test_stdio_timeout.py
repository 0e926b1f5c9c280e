"""A stdio request that gets no answer (basic/patterns/cancellation.mdx §Timeouts): the client
stops waiting after its timeout and tells the server to stop with notifications/cancelled."""

from __future__ import annotations

import sys

import pytest

from mcpref.client import Client, StdioTransport, TransportError
from tests.client.test_stdio import ROOT, eventually

pytestmark = pytest.mark.anyio


async def test_a_request_without_an_answer_times_out_and_is_cancelled():
    stderr: list[str] = []
    transport = StdioTransport(
        [sys.executable, "-m", "tests.client.stdio_server", "--stdio"],
        cwd=str(ROOT),
        timeout=0.5,
        on_stderr=stderr.append,
    )
    async with Client(transport) as client:
        with pytest.raises(TransportError, match="no answer to tools/call within 0.5 s"):
            await client.call_tool("forever")
        await eventually(lambda: "forever: cancelled" in stderr)
