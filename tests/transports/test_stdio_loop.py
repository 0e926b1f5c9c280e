"""The stdio server's line loop, in this process (`StdioServerTransport` fed through a `StreamReader`
or a real pipe): the same rules the child-process tests in test_stdio.py check end to end, here
where the mutation run (scripts/mutate) can see them, plus the edges a child process hides
(the line limit, the EOF grace period, the stdin thread)."""

from __future__ import annotations

import asyncio
import errno
import io
import json
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from mcpref import Server
from mcpref.transports import stdio
from mcpref.transports.stdio import StdioServerTransport
from tests.conftest import META

Feed = Callable[[bytes], Awaitable[None]]


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def call(request_id: Any, tool: str, **arguments: Any) -> bytes:
    params = {"name": tool, "arguments": arguments, "_meta": META}
    return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def cancel(request_id: Any, **extra: Any) -> bytes:
    return line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request_id, **extra}})


def make_server() -> tuple[Server, asyncio.Event]:
    """A server, and the event its `hold` tool waits for (an Event binds to a loop on first use)."""
    server = Server("loop", "1")
    gate = asyncio.Event()

    @server.tool(input_schema={"type": "object", "properties": {"message": {"type": "string"}}})
    async def echo(message: str = "") -> str:
        return message

    @server.tool()
    async def hold() -> str:
        await gate.wait()
        return "released"

    @server.tool()
    async def nap(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return "woke"

    @server.tool()
    async def progress(ctx) -> str:  # type: ignore[no-untyped-def]
        await ctx.report_progress(1, 2, "halfway")
        return "done"

    @server.tool()
    def add_tool() -> str:
        server.tool(name=f"extra_{len(server.tools)}")(lambda: "")
        return "added"

    return server, gate


def serve(
    script: Callable[[Feed, StdioServerTransport, asyncio.Event], Awaitable[None]],
    *,
    limit: int = stdio.DEFAULT_MAX_LINE_BYTES,
    grace_seconds: float = 5.0,
) -> tuple[list[dict[str, Any]], bytes]:
    """Run the transport in this process; `script(feed, transport, gate)` writes its stdin, after
    which stdin closes. Returns the answers (one JSON message per line) and the raw output."""
    server, gate = make_server()

    async def run() -> bytes:
        reader, output = asyncio.StreamReader(limit=limit), io.BytesIO()
        transport = StdioServerTransport(
            server, reader=reader, output=output, max_line_bytes=limit, grace_seconds=grace_seconds
        )
        serving = asyncio.ensure_future(transport.run())

        async def feed(data: bytes) -> None:
            reader.feed_data(data)
            await asyncio.sleep(0.05)

        await script(feed, transport, gate)
        reader.feed_eof()
        await asyncio.wait_for(serving, 10)
        return output.getvalue()

    raw = asyncio.run(run())
    assert raw == b"" or raw.endswith(b"\n")
    return [json.loads(text) for text in raw.splitlines()], raw


def test_each_answer_is_one_line_of_json_with_the_request_id() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(call(1, "echo", message="a") + call("two", "echo", message="b"))

    answers, raw = serve(script)
    assert len(raw.splitlines()) == 2 and raw.count(b"\n") == 2
    assert {a["id"]: a["result"]["content"][0]["text"] for a in answers} == {1: "a", "two": "b"}


def test_request_scoped_notifications_are_written_as_they_happen() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        params = {"name": "progress", "arguments": {}, "_meta": {**META, "progressToken": "t"}}
        await feed(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))

    note, answer = serve(script)[0]
    assert note["method"] == "notifications/progress"
    assert note["params"] == {"progressToken": "t", "progress": 1, "total": 2, "message": "halfway"}
    assert answer["id"] == 1 and answer["result"]["content"][0]["text"] == "done"


def test_a_last_line_without_a_newline_is_still_served() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(call(1, "echo", message="end").rstrip(b"\n"))

    answers, _ = serve(script)
    assert [a["id"] for a in answers] == [1]


def test_blank_lines_and_notifications_get_no_answer() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(b"\n   \n\t\n")
        await feed(line({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}))
        await feed(b"   \n")

    answers, raw = serve(script)
    assert raw == b"" and answers == []


def test_a_malformed_line_is_answered_and_the_loop_goes_on() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(b"not json\n")
        await feed(b'{"jsonrpc":"1.0","id":7,"method":"ping"}\n')
        await feed(call(8, "echo", message="after"))

    parse, invalid, after = serve(script)[0]
    assert "id" not in parse and parse["error"]["code"] == -32700  # no id could be read
    assert invalid["id"] == 7 and invalid["error"]["code"] == -32600  # the id it could read is echoed
    assert after["id"] == 8 and after["result"]["content"][0]["text"] == "after"


def test_a_line_longer_than_the_limit_is_refused_whole_and_the_loop_goes_on() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        long = call(1, "echo", message="x" * 1000)
        for start in range(0, len(long), 100):  # arrives in pieces: the skip spans several reads
            await feed(long[start : start + 100])
        await feed(call(2, "echo", message="short"))

    refused, short = serve(script, limit=256)[0]
    assert refused == {
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": "Invalid Request: message longer than 256 bytes"},
    }
    assert short["id"] == 2 and short["result"]["content"][0]["text"] == "short"


def test_an_overlong_line_cut_off_by_eof_is_refused_once() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(b"x" * 1000)

    answers, _ = serve(script, limit=256)
    assert [a["error"]["code"] for a in answers] == [-32600]


def test_an_id_already_in_use_is_refused_until_its_request_ends() -> None:
    async def script(feed: Feed, transport: StdioServerTransport, gate: asyncio.Event) -> None:
        await feed(call(1, "hold"))
        await feed(call(1, "echo", message="same id"))
        gate.set()
        await asyncio.sleep(0.05)
        await feed(call(1, "echo", message="free again"))

    refused, held, again = serve(script)[0]
    assert refused == {
        "jsonrpc": "2.0",
        "id": 1,
        "error": {"code": -32600, "message": "Invalid Request: id already in use"},
    }
    assert held["id"] == 1 and held["result"]["content"][0]["text"] == "released"
    assert again["id"] == 1 and again["result"]["content"][0]["text"] == "free again"


def test_a_cancelled_request_gets_no_answer_and_the_reason_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(call(5, "hold") + call(6, "hold"))
        await feed(cancel(5, reason="stop") + cancel(6))

    with caplog.at_level(logging.DEBUG, logger="mcpref.stdio"):
        answers, raw = serve(script, grace_seconds=0.1)
    assert raw == b""
    logged = [r.getMessage() for r in caplog.records if r.name == "mcpref.stdio"]
    assert "request 5 cancelled by the client: stop" in logged
    assert "request 6 cancelled by the client: no reason given" in logged


@pytest.mark.parametrize("reason", ["", 42, {"why": "stop"}, ["stop"]])
def test_a_reason_that_is_no_string_or_empty_is_logged_as_none_given(
    reason: Any, caplog: pytest.LogCaptureFixture
) -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(call(5, "hold"))
        await feed(cancel(5, reason=reason))

    with caplog.at_level(logging.DEBUG, logger="mcpref.stdio"):
        serve(script, grace_seconds=0.1)
    assert "request 5 cancelled by the client: no reason given" in [r.getMessage() for r in caplog.records]


def test_at_eof_the_default_grace_period_is_five_seconds() -> None:
    """How long answers under way may take to finish once stdin has closed, unless configured
    (docs/patterns/production.md's table of limits says so)."""
    assert StdioServerTransport(Server("grace", "1")).grace_seconds == stdio.DEFAULT_GRACE_SECONDS == 5.0


@pytest.mark.parametrize(
    ("keyword", "default"),
    [
        ("max_line_bytes", f"{stdio.DEFAULT_MAX_LINE_BYTES // 2**20} MiB"),
        ("grace_seconds", f"{stdio.DEFAULT_GRACE_SECONDS:g} s"),
    ],
)
def test_each_stdio_limit_has_its_default_in_the_limits_table(keyword: str, default: str) -> None:
    """Every limit has a line in docs/patterns/production.md, with the default the code has."""
    table = (Path(__file__).parents[2] / "docs/patterns/production.md").read_text("utf-8")
    rows = [line for line in table.splitlines() if f"`StdioServerTransport(server, {keyword}=...)`" in line]
    assert len(rows) == 1, f"no line (or several) for {keyword} in the limits table"
    assert rows[0].split("|")[2].strip() == default


def test_a_cancellation_reason_is_logged_at_most_200_characters(caplog: pytest.LogCaptureFixture) -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(call(5, "hold"))
        await feed(cancel(5, reason="r" * 500))

    with caplog.at_level(logging.DEBUG, logger="mcpref.stdio"):
        serve(script, grace_seconds=0.1)
    assert f"request 5 cancelled by the client: {'r' * 200}" in [r.getMessage() for r in caplog.records]


@pytest.mark.parametrize("named", [True, 1.0, "1", None, [1]])
def test_a_cancellation_names_a_request_by_json_type_and_value(named: Any) -> None:
    async def script(feed: Feed, transport: StdioServerTransport, gate: asyncio.Event) -> None:
        await feed(call(1, "hold"))
        await feed(cancel(named))
        gate.set()

    answers, _ = serve(script)
    assert [a["id"] for a in answers] == [1] and answers[0]["result"]["content"][0]["text"] == "released"


def test_at_eof_answers_under_way_finish_within_the_grace_period() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(call(1, "nap", seconds=0.2))

    answers, _ = serve(script, grace_seconds=5)
    assert answers[0]["id"] == 1 and answers[0]["result"]["content"][0]["text"] == "woke"


def test_at_eof_a_request_past_the_grace_period_is_cancelled_unanswered() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(call(1, "nap", seconds=30) + call(2, "nap", seconds=0.05))

    answers, _ = serve(script, grace_seconds=0.3)
    assert [a["id"] for a in answers] == [2]


def test_at_eof_a_request_cancelled_after_the_grace_period_has_cleaned_up_when_run_returns() -> None:
    """The server waits for the cancelled requests to unwind (their `finally` blocks run) before
    it stops, so a tool's cleanup is not cut short by the process exiting."""
    server = Server("cleanup", "1")
    cleaned: list[str] = []

    @server.tool()
    async def linger() -> str:
        try:
            await asyncio.sleep(30)
        finally:
            cleaned.append("linger")
        return "never"

    async def run() -> list[str]:
        reader = asyncio.StreamReader()
        transport = StdioServerTransport(server, reader=reader, output=io.BytesIO(), grace_seconds=0.1)
        reader.feed_data(call(1, "linger"))
        reader.feed_eof()
        await transport.run()
        return list(cleaned)  # read before the loop runs anything else

    assert asyncio.run(run()) == ["linger"]


def listen(request_id: Any) -> bytes:
    params = {"_meta": META, "notifications": {"toolsListChanged": True}}
    return line({"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params})


def test_a_listen_stream_is_acknowledged_tagged_and_ended_at_eof() -> None:
    async def script(feed: Feed, *_: Any) -> None:
        await feed(listen("L"))
        await feed(call(2, "add_tool"))

    messages = serve(script)[0]
    ack, *middle, result, cancelled = messages
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    change = next(m for m in middle if m.get("method") == "notifications/tools/list_changed")
    assert change["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "L"}
    assert result["id"] == "L" and result["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L"
    assert cancelled == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "L", "reason": "subscription ended"},
    }


def test_a_listen_stream_the_client_cancels_says_nothing_more_and_is_forgotten() -> None:
    held: list[int] = []

    async def script(feed: Feed, transport: StdioServerTransport, gate: asyncio.Event) -> None:
        await feed(listen("L"))
        held.append(len(transport.server.subscriptions))
        await feed(cancel("L"))
        held.append(len(transport.server.subscriptions))  # its listen slot is free again
        await feed(call(2, "add_tool"))

    messages = serve(script)[0]
    assert [m.get("method") for m in messages] == ["notifications/subscriptions/acknowledged", None]
    assert held == [1, 0]
    assert messages[1]["id"] == 2


def test_a_legacy_initialize_makes_the_process_a_legacy_session() -> None:
    seen: list[str | None] = []

    async def script(feed: Feed, transport: StdioServerTransport, gate: asyncio.Event) -> None:
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
        seen.append(transport.legacy_version)
        await feed(line({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}))
        seen.append(transport.legacy_version)
        await feed(line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}}))
        seen.append(transport.legacy_version)  # only `initialize` picks the era; a later request keeps it

    init, answer = serve(script)[0]
    assert seen == [None, "2025-06-18", "2025-06-18"]
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert answer["result"] == {"content": [{"type": "text", "text": ""}]}  # the legacy shape, no resultType


def test_a_modern_initialize_is_not_a_legacy_session() -> None:
    seen: list[str | None] = []

    async def script(feed: Feed, transport: StdioServerTransport, gate: asyncio.Event) -> None:
        await feed(line({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": META}}))
        seen.append(transport.legacy_version)

    serve(script)
    assert seen == [None]


def test_each_answer_is_flushed_while_stdin_is_still_open() -> None:
    """Over a real pipe: a buffered stdout that is not flushed would hold the answer back."""
    server, _ = make_server()
    read_end, write_end = os.pipe()

    async def run() -> bytes:
        reader = asyncio.StreamReader()
        with os.fdopen(write_end, "wb") as output, os.fdopen(read_end, "rb", buffering=0) as answers:
            transport = StdioServerTransport(server, reader=reader, output=output)
            serving = asyncio.ensure_future(transport.run())
            reader.feed_data(call(1, "echo", message="now"))
            loop = asyncio.get_running_loop()
            first = await asyncio.wait_for(loop.run_in_executor(None, answers.readline), 5)
            reader.feed_eof()
            await asyncio.wait_for(serving, 5)
        return first

    assert json.loads(asyncio.run(run()))["id"] == 1


def run_on_fd(fd: int, monkeypatch: pytest.MonkeyPatch, limit: int = stdio.DEFAULT_MAX_LINE_BYTES) -> bytes:
    """Serve with this process's "stdin" being `fd` (the transport's own reader thread)."""

    class Stdin:
        def fileno(self) -> int:
            return fd

    monkeypatch.setattr(sys, "stdin", Stdin())
    server, _ = make_server()
    output = io.BytesIO()

    async def run() -> None:
        await asyncio.wait_for(StdioServerTransport(server, output=output, max_line_bytes=limit).run(), 10)

    asyncio.run(run())
    return output.getvalue()


def test_a_regular_file_on_stdin_gets_every_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """More than twice the reader's limit, so the reader thread is paused and resumed on the way."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"".join(call(n, "echo", message=f"m{n}") for n in range(300)))
    with open(requests, "rb") as stdin:
        written = run_on_fd(stdin.fileno(), monkeypatch, limit=1024)
    assert sorted(json.loads(text)["id"] for text in written.splitlines()) == list(range(300))


def test_a_pipe_on_stdin_is_served_until_it_closes(monkeypatch: pytest.MonkeyPatch) -> None:
    read_end, write_end = os.pipe()
    os.write(write_end, call(1, "echo", message="piped"))
    os.close(write_end)
    try:
        written = run_on_fd(read_end, monkeypatch)
    finally:
        os.close(read_end)
    assert json.loads(written)["result"]["content"][0]["text"] == "piped"


def test_an_unreadable_stdin_is_logged_and_read_as_eof(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    directory = os.open(tmp_path, os.O_RDONLY)  # reading a directory fails with EISDIR
    try:
        with caplog.at_level(logging.ERROR, logger="mcpref.stdio"):
            written = run_on_fd(directory, monkeypatch)
    finally:
        os.close(directory)
    assert written == b""
    [failure] = [r for r in caplog.records if r.name == "mcpref.stdio"]
    assert failure.getMessage() == f"reading stdin failed: {IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))}"


def test_serve_stdio_reads_stdin_and_writes_stdout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(call(1, "echo", message="whole process"))
    written = io.BytesIO()
    stdout = io.TextIOWrapper(written)
    server, _ = make_server()
    with open(requests, "rb") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        monkeypatch.setattr(sys, "stdout", stdout)
        stdio.serve_stdio(server)
    assert json.loads(written.getvalue())["result"]["content"][0]["text"] == "whole process"


def test_the_stdin_thread_pauses_while_the_server_is_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader asks the thread to pause past twice its limit, so a large file is not read into
    memory ahead of the server; this is what `set_transport` in `_ThreadedStdin` is for."""
    pauses: list[int] = []
    original = stdio._ThreadedStdin.pause_reading

    def pause_reading(self: stdio._ThreadedStdin) -> None:
        pauses.append(1)
        original(self)

    monkeypatch.setattr(stdio._ThreadedStdin, "pause_reading", pause_reading)
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"".join(call(n, "echo", message=f"m{n}") for n in range(100)))
    with open(requests, "rb") as stdin:
        written = run_on_fd(stdin.fileno(), monkeypatch, limit=1024)
    assert pauses and len(written.splitlines()) == 100


def test_the_stdin_thread_is_a_named_daemon(monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon, so a read blocked on a stdin nobody closes never keeps the process alive; named,
    so a thread dump says what it is."""
    read_end, write_end = os.pipe()

    class Stdin:
        def fileno(self) -> int:
            return read_end

    monkeypatch.setattr(sys, "stdin", Stdin())
    server, _ = make_server()

    async def run() -> list[threading.Thread]:
        serving = asyncio.ensure_future(StdioServerTransport(server, output=io.BytesIO()).run())
        await asyncio.sleep(0.1)
        threads = [thread for thread in threading.enumerate() if thread.name == "mcpref-stdin"]
        os.close(write_end)
        await asyncio.wait_for(serving, 5)
        return threads

    try:
        threads = asyncio.run(run())
    finally:
        os.close(read_end)
    assert len(threads) == 1 and threads[0].daemon


def test_serve_stdio_logs_at_info_to_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no logging set up yet (as in a fresh process), serve_stdio sends INFO and up to stderr:
    stdout carries MCP messages only."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"")
    monkeypatch.setattr(logging.root, "handlers", [])
    monkeypatch.setattr(logging.root, "level", logging.WARNING)
    server, _ = make_server()
    with open(requests, "rb") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(io.BytesIO()))
        stdio.serve_stdio(server)
    [handler] = logging.root.handlers
    assert logging.root.level == logging.INFO
    assert isinstance(handler, logging.StreamHandler) and handler.stream is sys.stderr
