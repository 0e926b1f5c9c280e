"""A per-call timeout (basic/patterns/cancellation.mdx §Timeouts): it bounds the whole call even
while progress keeps arriving, and the server learns the call was cancelled."""

from __future__ import annotations

import asyncio
import time

import pytest

from mcpref import Server, StreamableHTTP
from tests.client.conftest import connect, endpoint

pytestmark = pytest.mark.anyio

server = Server("busy", "1")
stopped: list[str] = []


@server.tool()
async def busy(ctx) -> str:  # type: ignore[no-untyped-def]
    step = 0
    try:
        while True:  # progress every 50 ms, forever
            step += 1
            await ctx.report_progress(step)
            await asyncio.sleep(0.05)
    except asyncio.CancelledError:
        stopped.append("busy")
        raise


async def test_a_call_that_keeps_reporting_progress_still_times_out_and_is_cancelled() -> None:
    seen: list[dict] = []
    stopped.clear()  # the tool is module-level: a second run in one process (mutmut's) starts clean
    with endpoint(StreamableHTTP(server)) as url:
        async with connect(url) as (client, _):
            started = time.monotonic()
            # A second of progress every 50 ms: room for at least two notifications on a busy machine.
            with pytest.raises(TimeoutError):
                await client.call_tool("busy", on_progress=seen.append, timeout=1.0)
            assert time.monotonic() - started < 4
            for _ in range(100):
                if stopped:
                    break
                await asyncio.sleep(0.02)
    assert len(seen) >= 2 and stopped == ["busy"]
