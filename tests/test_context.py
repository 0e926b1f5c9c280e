"""What a handler's `RequestContext` sends on its own: progress and log messages, only when asked."""

from __future__ import annotations

import asyncio
from typing import Any

from mcpref.context import RequestContext
from mcpref.meta import read_request_meta
from tests.conftest import META


def sent_by(meta: dict[str, Any]) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def notify(message: dict[str, Any]) -> None:
        sent.append(message)

    ctx = RequestContext(1, "tools/call", {"_meta": meta}, read_request_meta({"_meta": meta}), notify)
    asyncio.run(ctx.log("error", "the disk is full"))
    return sent


def test_no_log_level_means_no_log_messages() -> None:
    assert sent_by(META) == []
    asked = sent_by({**META, "io.modelcontextprotocol/logLevel": "warning"})
    assert [message["method"] for message in asked] == ["notifications/message"]
