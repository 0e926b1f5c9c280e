"""What a handler's `RequestContext` sends on its own: progress and log messages, only when asked."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

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


def context(meta: dict[str, Any], sent: list[dict[str, Any]] | None, **options: Any) -> RequestContext:
    """A context whose notifications land in `sent` (None: a request with no stream to send on)."""

    async def notify(message: dict[str, Any]) -> None:
        assert sent is not None
        sent.append(message)

    params = {"_meta": meta}
    return RequestContext(
        1, "tools/call", params, read_request_meta(params), notify if sent is not None else None, **options
    )


def test_a_log_message_is_sent_at_or_above_the_level_asked_for() -> None:
    sent: list[dict[str, Any]] = []
    ctx = context({**META, "io.modelcontextprotocol/logLevel": "warning"}, sent)
    for level in ("debug", "info", "notice", "warning", "error", "emergency"):
        asyncio.run(ctx.log(level, {"n": level}))
    asyncio.run(ctx.log("error", "named", logger="db"))
    assert sent == [
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": level, "data": {"n": level}}}
        for level in ("warning", "error", "emergency")
    ] + [
        {
            "jsonrpc": "2.0",
            "method": "notifications/message",
            "params": {"level": "error", "data": "named", "logger": "db"},
        }
    ]


def test_nothing_is_logged_without_the_capability_a_stream_or_a_known_level() -> None:
    sent: list[dict[str, Any]] = []
    asyncio.run(context({**META, "io.modelcontextprotocol/logLevel": "debug"}, sent, may_log=False).log("error", "x"))
    asyncio.run(context({**META, "io.modelcontextprotocol/logLevel": "debug"}, None).log("error", "x"))
    assert sent == []


def test_progress_says_its_token_and_only_what_was_given() -> None:
    sent: list[dict[str, Any]] = []
    ctx = context({**META, "progressToken": 7}, sent)
    asyncio.run(ctx.report_progress(1))
    asyncio.run(ctx.report_progress(2, 10))
    asyncio.run(ctx.report_progress(3, message="almost"))
    asyncio.run(ctx.report_progress(4, 0, ""))
    assert [message["params"] for message in sent] == [
        {"progressToken": 7, "progress": 1},
        {"progressToken": 7, "progress": 2, "total": 10},
        {"progressToken": 7, "progress": 3, "message": "almost"},
        {"progressToken": 7, "progress": 4, "total": 0, "message": ""},
    ]
    assert {message["method"] for message in sent} == {"notifications/progress"}


def test_progress_without_a_stream_is_not_sent_and_not_remembered() -> None:
    ctx = context({**META, "progressToken": "p"}, None)
    asyncio.run(ctx.report_progress(5))
    sent: list[dict[str, Any]] = []
    ctx.notify = context(META, sent).notify
    asyncio.run(ctx.report_progress(1))
    assert [message["params"]["progress"] for message in sent] == [1]


def test_progress_that_does_not_increase_is_logged_as_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    sent: list[dict[str, Any]] = []
    ctx = context({**META, "progressToken": "p"}, sent)
    with caplog.at_level(logging.WARNING, logger="mcpref.server"):
        asyncio.run(ctx.report_progress(2))
        asyncio.run(ctx.report_progress(2))
    assert [(record.name, record.getMessage()) for record in caplog.records] == [
        ("mcpref.server", "tools/call: progress 2 after 2 does not increase; not sent")
    ]


def test_a_context_reads_the_request_it_serves() -> None:
    capabilities = {"sampling": {}}
    ctx = context(
        {**META, "io.modelcontextprotocol/clientCapabilities": capabilities},
        [],
        input_responses={"ask": {"action": "accept"}},
    )
    assert ctx.client_capabilities == capabilities
    assert ctx.input_response("ask") == {"action": "accept"}
    assert ctx.input_response("other") is None
    assert (ctx.principal, ctx.state, ctx.may_log) == (None, None, True)
    assert RequestContext(1, "m", {}, ctx.meta).input_responses == {}
