"""The client says why it cancels a stdio request, in the notification and in its log
(basic/patterns/cancellation.mdx §Implementation Notes: both parties SHOULD log cancellation reasons)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from mcpref.client import Client
from tests.client.test_stdio import spawn


@pytest.mark.anyio
async def test_the_client_says_why_it_cancels(caplog: pytest.LogCaptureFixture) -> None:
    stderr: list[str] = []
    with caplog.at_level(logging.DEBUG, logger="mcpref.client.stdio"):
        async with Client(spawn("tests.stdio_server", on_stderr=stderr.append)) as client:
            await client.list_tools()  # started and probed: the timeout below hits the call itself
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call_tool("wait"), 0.3)
            for _ in range(200):
                if any("wait was cancelled" in s for s in stderr):
                    break
                await asyncio.sleep(0.02)
    assert any(
        "cancelling tools/call" in r.getMessage() and "stopped waiting" in r.getMessage() for r in caplog.records
    )
    assert any("wait was cancelled" in s for s in stderr)
