"""Progress notifications (basic/patterns/progress.mdx §Progress Flow): only for a request that
asked with a progressToken, and each one's progress greater than the last."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpref.context import RequestContext
from mcpref.meta import read_request_meta
from tests.conftest import META


def progress_sent(meta: dict[str, Any], reports: list[float]) -> list[float]:
    sent: list[dict[str, Any]] = []

    async def notify(message: dict[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        ctx = RequestContext(1, "tools/call", {"_meta": meta}, read_request_meta({"_meta": meta}), notify)
        for value in reports:
            await ctx.report_progress(value, 10)

    asyncio.run(run())
    return [message["params"]["progress"] for message in sent]


def test_progress_that_does_not_increase_is_not_sent() -> None:
    assert progress_sent({**META, "progressToken": "p"}, [1, 1, 0.5, 2, 2.5, 2.5]) == [1, 2, 2.5]


def test_no_token_means_no_progress() -> None:
    assert progress_sent(META, [1, 2]) == []
