"""The last line of defence (`mcpref.catchall`): one uniform 500 for a bug, a bounded log, and
the plain responses every other refusal is written with. Driven as ASGI directly; the same
answers over a real server are in tests/hostile/test_defences.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import MutableMapping
from typing import Any

import pytest

from mcpref import Server, catchall
from mcpref.catchall import INTERNAL_ERROR_BODY, CatchAll, LogBudget, internal_error, plain_response
from mcpref.jsonrpc import MCPError, Request
from mcpref.meta import CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY
from tests.conftest import SteppedClock

HTTP_SCOPE = {"type": "http", "method": "POST", "path": "/mcp"}


async def nothing() -> MutableMapping[str, Any]:
    return {"type": "http.disconnect"}


class Sent(list[MutableMapping[str, Any]]):
    """An ASGI `send` that keeps what it is given."""

    async def __call__(self, message: MutableMapping[str, Any]) -> None:
        self.append(message)


def answered(scope: dict[str, Any], app: Any) -> list[MutableMapping[str, Any]]:
    """What `CatchAll(app)` sends for one request."""
    sent = Sent()
    asyncio.run(CatchAll(app)(scope, nothing, sent))
    return sent


async def broken(scope: Any, receive: Any, send: Any) -> None:
    raise RuntimeError("secret detail: db password is hunter2")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SteppedClock:
    fake = SteppedClock(1000.25)
    monkeypatch.setattr(catchall, "time", fake)
    monkeypatch.setattr(catchall, "_budget", LogBudget(catchall.LINES_PER_SECOND))
    return fake


def test_a_bug_is_a_uniform_json_500_without_details(clock: SteppedClock) -> None:
    start, body = answered(HTTP_SCOPE, broken)
    assert start == {
        "type": "http.response.start",
        "status": 500,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(INTERNAL_ERROR_BODY)).encode()),
            (b"x-content-type-options", b"nosniff"),
        ],
    }
    assert body == {"type": "http.response.body", "body": INTERNAL_ERROR_BODY}
    assert json.loads(INTERNAL_ERROR_BODY) == {"jsonrpc": "2.0", "error": {"code": -32603, "message": "Internal error"}}


def test_a_working_app_is_left_alone() -> None:
    async def fine(scope: Any, receive: Any, send: Any) -> None:
        message = await receive()
        await plain_response(send, 200, f"{scope['path']} {message['type']}".encode())

    assert answered(HTTP_SCOPE, fine)[1]["body"] == b"/mcp http.disconnect"


def test_outside_http_the_exception_is_the_servers_to_handle() -> None:
    with pytest.raises(RuntimeError, match="hunter2"):
        answered({"type": "lifespan"}, broken)


def test_a_failure_is_one_log_line_naming_request_and_exception_type(
    clock: SteppedClock, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG, logger="mcpref.errors"):
        answered(HTTP_SCOPE, broken)
        answered({"type": "http", "path": "/x" * 300}, broken)
    errors = [record for record in caplog.records if record.levelno == logging.ERROR]
    assert [record.getMessage() for record in errors] == [
        "POST /mcp failed: RuntimeError",
        f"- {'/x' * 100} failed: RuntimeError",
    ]
    assert all(record.name == "mcpref.errors" for record in caplog.records)
    debug = [record for record in caplog.records if record.levelno == logging.DEBUG]
    assert [record.getMessage() for record in debug] == ["traceback of the failure above"] * 2
    assert debug[0].exc_info is not None and "hunter2" in str(debug[0].exc_info[1])


def test_the_log_takes_five_lines_a_second_and_counts_the_rest(
    clock: SteppedClock, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcpref.errors"):
        for _ in range(8):
            answered(HTTP_SCOPE, broken)
        clock.now += 0.5  # the same second
        answered(HTTP_SCOPE, broken)
        clock.now += 1  # the next second
        answered(HTTP_SCOPE, broken)
        answered(HTTP_SCOPE, broken)
    lines = [record.getMessage() for record in caplog.records]
    assert lines == ["POST /mcp failed: RuntimeError"] * 5 + [
        "POST /mcp failed: RuntimeError (4 more not logged)",
        "POST /mcp failed: RuntimeError",
    ]


@pytest.mark.parametrize("start", [0.5, 1000.25])
def test_a_log_budget_reports_what_it_dropped_once(clock: SteppedClock, start: float) -> None:
    clock.now = start  # 0.5: the clock's first second, the window a fresh budget starts in
    budget = LogBudget(2)
    assert [budget.take() for _ in range(4)] == [0, 0, None, None]
    clock.now += 1
    assert [budget.take() for _ in range(3)] == [2, 0, None]
    clock.now += 1
    assert budget.take() == 1


def test_once_the_answer_has_begun_a_bug_sends_nothing_more(clock: SteppedClock) -> None:
    async def half(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise RuntimeError("after the status line")

    sent: list[MutableMapping[str, Any]] = []

    async def send(message: MutableMapping[str, Any]) -> None:
        if sent:  # a server refuses a second start
            raise RuntimeError("response already started")
        sent.append(message)

    asyncio.run(CatchAll(half)(HTTP_SCOPE, nothing, send))
    assert [message["status"] for message in sent] == [200]


def test_a_plain_response_says_its_length_type_and_nosniff() -> None:
    sent = Sent()
    asyncio.run(plain_response(sent, 404, b"Not Found"))
    asyncio.run(plain_response(sent, 204, b"", extra=[(b"vary", b"Origin")]))
    plain = (b"content-type", b"text/plain; charset=utf-8")
    assert [message["type"] for message in sent] == ["http.response.start", "http.response.body"] * 2
    assert (sent[0]["status"], sent[0]["headers"], sent[1]["body"]) == (
        404,
        [plain, (b"content-length", b"9"), (b"x-content-type-options", b"nosniff")],
        b"Not Found",
    )
    assert (sent[2]["status"], sent[2]["headers"], sent[3]["body"]) == (
        204,
        [plain, (b"content-length", b"0"), (b"x-content-type-options", b"nosniff"), (b"vary", b"Origin")],
        b"",
    )


def test_internal_error_answers_even_without_a_method_or_path_in_scope(
    clock: SteppedClock, caplog: pytest.LogCaptureFixture
) -> None:
    sent = Sent()
    with caplog.at_level(logging.ERROR, logger="mcpref.errors"):
        asyncio.run(internal_error({"type": "http"}, sent, ValueError("x")))
    assert sent[0]["status"] == 500
    assert [record.getMessage() for record in caplog.records] == ["-  failed: ValueError"]


def test_failing_handlers_log_their_tracebacks_within_the_same_budget(
    clock: SteppedClock, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 25: every failing handler logged a whole traceback, with no budget (1,000 requests,
    16,500 lines in 2.3 s). Now `log_bug` spends the catch-all's budget: a few a second, with their
    tracebacks, then a count of what was not logged."""
    server = Server("bugs", "1")

    @server.tool()
    def crash() -> str:
        raise RuntimeError("a bug")

    @server.prompt()
    def crash_prompt() -> str:
        raise RuntimeError("a bug")

    async def calls(method: str, name: str, times: int) -> None:
        meta = {PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}}
        for _ in range(times):
            with contextlib.suppress(MCPError):
                await server.handle(Request(1, method, {"name": name, "_meta": meta}))

    with caplog.at_level(logging.ERROR):
        asyncio.run(calls("tools/call", "crash", 30))
        asyncio.run(calls("prompts/get", "crash_prompt", 30))
        clock.now += 1
        asyncio.run(calls("prompts/get", "crash_prompt", 1))
    logged = [(record.getMessage(), record.exc_info is not None) for record in caplog.records]
    assert logged == [("tool 'crash' raised", True)] * catchall.LINES_PER_SECOND + [
        ("prompts/get handler raised (55 more not logged)", True)
    ]
