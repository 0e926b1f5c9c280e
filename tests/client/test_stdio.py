"""The client over stdio, against real server processes: `python -m mcpref.examples.minimal_server --stdio`
and `python -m tests.stdio_server` (the real stdio transport with tools that need it)."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

from mcpref.client import Client, EraInfo, ProtocolError, StdioTransport, TransportError
from mcpref.meta import SUBSCRIPTION_ID_KEY

pytestmark = pytest.mark.anyio

ROOT = Path(__file__).resolve().parents[2]


def spawn(module: str, **options) -> StdioTransport:  # type: ignore[no-untyped-def]
    return StdioTransport([sys.executable, "-m", module, "--stdio"], cwd=str(ROOT), timeout=10, **options)


async def eventually(condition, timeout: float = 5.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.01)


async def test_minimal_server_over_stdio():
    stderr: list[str] = []
    transport = spawn("mcpref.examples.minimal_server", on_stderr=stderr.append)
    async with Client(transport) as client:
        tools = await client.list_tools()
        result = await client.call_tool("echo", {"message": "über stdio"})
        assert client.era == EraInfo("modern", "2026-07-28")
        assert client.server_info == {"name": "minimal-server", "version": "1.0.0"}
        process = transport.process
    assert [tool["name"] for tool in tools] == ["echo"]
    assert result["content"] == [{"type": "text", "text": "über stdio"}]
    # Closing stdin is enough: the server exits on EOF, no signal needed.
    assert process is not None and process.returncode == 0
    with pytest.raises(TransportError, match="closed"):
        await client.list_tools()  # a closed client does not quietly start a new server


class Seen:
    """What the shared server process told the client besides answers."""

    def __init__(self) -> None:
        self.stderr: list[str] = []
        self.logs: list[dict] = []


@pytest.fixture(scope="module")
def seen() -> Seen:
    return Seen()


@pytest.fixture(scope="module")
async def shared(seen: Seen):  # type: ignore[no-untyped-def]
    """One server process for the tests that need no fresh one: spawning costs most of their time."""
    transport = spawn("tests.stdio_server", on_stderr=seen.stderr.append)
    elicit = lambda params: {"action": "accept"}  # noqa: E731
    async with Client(transport, on_log=seen.logs.append, elicitation=elicit) as client:
        yield client


async def test_progress_and_logs_share_stdout(shared: Client, seen: Seen):
    progress: list[dict] = []
    result = await shared.call_tool("slow", on_progress=progress.append)
    assert result["content"][0]["text"] == "done"
    assert [p["progress"] for p in progress] == [1, 2]
    assert seen.logs == [{"level": "warning", "data": "careful"}]


async def test_closing_a_request_sends_notifications_cancelled(shared: Client, seen: Seen):
    # The process started and the era known first: run before the others, the 0.3 s below was
    # spent spawning Python, and the request was never sent to be cancelled.
    await shared.list_tools()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(shared.call_tool("wait"), 0.3)
    await eventually(lambda: "wait was cancelled" in seen.stderr)
    # The process carries on serving other requests.
    assert (await shared.call_tool("echo", {"message": "still here"}))["content"][0]["text"] == "still here"


async def test_mrtr_over_stdio(shared: Client):
    result = await shared.call_tool("confirm")
    assert result["content"][0]["text"] == "asked: accept"


async def test_listen_over_stdio_is_routed_by_subscription_id(shared: Client):
    async with shared.listen(tools_list_changed=True) as first, shared.listen(tools_list_changed=True) as second:
        assert first.honored == second.honored == {"toolsListChanged": True}
        await shared.call_tool("add_tool")
        one = await asyncio.wait_for(anext(first), 5)
        two = await asyncio.wait_for(anext(second), 5)
    assert one.params["_meta"][SUBSCRIPTION_ID_KEY] == first.subscription_id
    assert two.params["_meta"][SUBSCRIPTION_ID_KEY] == second.subscription_id
    assert first.subscription_id != second.subscription_id
    # Both were cancelled by notifications/cancelled; the server still answers.
    assert len(await shared.list_tools()) > 5


async def test_legacy_handshake_over_stdio():
    async with Client(spawn("tests.stdio_server"), version="legacy") as client:
        result = await client.call_tool("echo", {"message": "old"})
        assert client.era == EraInfo("legacy", "2025-11-25")
    assert result == {"content": [{"type": "text", "text": "old"}]}


async def test_a_crashed_server_is_started_again():
    transport = spawn("tests.stdio_server", on_stderr=lambda line: None)
    async with Client(transport, version="legacy") as client:
        with pytest.raises(TransportError, match="exited"):
            await client.call_tool("crash")
        result = await client.call_tool("echo", {"message": "back"})
        assert transport.generation == 2
    # The new process knew nothing of the old handshake, so the client shook hands again.
    assert result == {"content": [{"type": "text", "text": "back"}]}


def test_a_transport_is_not_given_http_options():
    for option in ({"headers": {"Authorization": "x"}}, {"http": httpx.AsyncClient()}, {"max_message_bytes": 1}):
        with pytest.raises(TypeError) as refused:
            Client(StdioTransport(["true"]), **option)
        assert str(refused.value) == "http, headers, auth and max_message_bytes apply to HTTP URLs, not to a transport"
    with pytest.raises(ValueError, match="^command must name the server program$"):
        StdioTransport([])


def test_a_transport_is_named_by_its_command_and_waits_thirty_seconds_for_an_answer():
    """The endpoint (the client's cache and era key) is the command line, quoted as a shell would;
    an answer may take 30 s, a server 2 s to leave once its stdin closes."""
    transport = StdioTransport(["python", "-m", "my server"])
    assert transport.endpoint == "stdio:python -m 'my server'"
    assert (transport.timeout, transport.shutdown_timeout) == (30.0, 2.0)


#: A "server" that answers any request with its environment variable and working directory.
_WHERE_SERVER = """
import json, os, sys
request = json.loads(sys.stdin.readline())
where = {"probe": os.environ.get("MCPREF_PROBE"), "cwd": os.getcwd()}
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": where}), flush=True)
sys.stdin.read()
"""


async def test_the_server_runs_with_the_environment_and_directory_given(tmp_path: Path):
    env = {"MCPREF_PROBE": "given", "PATH": "/usr/bin:/bin"}
    transport = StdioTransport([sys.executable, "-c", _WHERE_SERVER], env=env, cwd=str(tmp_path), timeout=10)
    env["MCPREF_PROBE"] = "changed after"  # the transport keeps its own copy
    try:
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        [answer] = [message async for message in transport.exchange(request)]
    finally:
        await transport.aclose()
    assert answer["result"] == {"probe": "given", "cwd": str(tmp_path.resolve())}


#: A "server" that answers the first request with lines naming it wrongly, then rightly.
_CONFUSED_SERVER = """
import json, sys
request = json.loads(sys.stdin.readline())
for wrong in ([request["id"]], {"id": request["id"]}, True, float(request["id"]), str(request["id"])):
    print(json.dumps({"jsonrpc": "2.0", "id": wrong, "result": {"wrong": repr(wrong)}}), flush=True)
print(json.dumps({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": [1]}}))
meta = {"io.modelcontextprotocol/subscriptionId": {"a": 1}}
print(json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"_meta": meta}}), flush=True)
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"right": True}}), flush=True)
sys.stdin.read()
"""


async def test_answers_are_matched_by_the_id_s_json_type_and_value():
    """An id of `[1]` or `{...}` does not stop the reader; `true`, `1.0` and `"1"` answer nothing of ours."""
    transport = StdioTransport([sys.executable, "-c", _CONFUSED_SERVER], timeout=10)
    try:
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        received = [message async for message in transport.exchange(request)]
    finally:
        await transport.aclose()
    assert received == [{"jsonrpc": "2.0", "id": 1, "result": {"right": True}}]


async def test_a_request_without_an_answer_times_out_and_is_cancelled():
    """cancellation.mdx §Timeouts: the sender stops waiting and cancels the request."""
    stderr: list[str] = []
    transport = StdioTransport(
        [sys.executable, "-m", "tests.stdio_server", "--stdio"],
        cwd=str(ROOT),
        timeout=10,
        on_stderr=stderr.append,
    )
    async with Client(transport) as client:
        await client.list_tools()  # the process starts and the era is known in the generous timeout
        transport.timeout = 0.5  # a loaded machine may take longer than that to start Python
        with pytest.raises(TransportError, match="no answer to tools/call within 0.5 s"):
            await client.call_tool("wait")
        await eventually(lambda: "wait was cancelled" in stderr)


@pytest.fixture
def written(shared: Client, monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Every message the client writes to the server process, recorded on its way to stdin."""
    transport = shared.transport
    sent: list[dict] = []
    write = transport._write

    async def recording(message: dict) -> None:
        sent.append(message)
        await write(message)

    monkeypatch.setattr(transport, "_write", recording)
    return sent


async def test_a_finished_request_is_never_cancelled(shared: Client, written: list[dict]):
    await shared.call_tool("echo", {"message": "done already"})
    assert [message.get("method") for message in written] == ["tools/call"]


async def test_the_cancellation_names_the_request_it_stops(shared: Client, seen: Seen, written: list[dict]):
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(shared.call_tool("wait"), 0.3)
    await eventually(lambda: any(m.get("method") == "notifications/cancelled" for m in written))
    call, cancel = written
    assert cancel["params"]["requestId"] == call["id"]


#: A stand-in for a legacy stdio server: it answers `initialize` and `tools/list`, and answers
#: `server/discover` not at all (`silent`) or with a broken error object (`broken`).
_LEGACY_STDIO_SERVER = """
import json, sys
mode = sys.argv[1]
for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue
    answer = {"jsonrpc": "2.0", "id": message["id"]}
    if message["method"] == "server/discover":
        if mode == "silent":
            continue
        answer["error"] = "broken"
    elif message["method"] == "initialize":
        info = {"name": "old", "version": "1"}
        answer["result"] = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": info}
    else:
        answer["result"] = {"tools": []}
    print(json.dumps(answer), flush=True)
"""


def legacy_stdio_server(mode: str, timeout: float = 0.5) -> StdioTransport:
    return StdioTransport([sys.executable, "-c", _LEGACY_STDIO_SERVER, mode], timeout=timeout)


async def test_a_probe_without_an_answer_in_time_means_legacy_on_stdio():
    # stdio.mdx §Backward Compatibility: no answer to the probe in time means a legacy server.
    async with Client(legacy_stdio_server("silent")) as client:
        assert await client.list_tools() == []
        assert client.era == EraInfo("legacy", "2025-11-25")


async def test_a_broken_answer_to_the_probe_is_an_error_not_a_legacy_signal_on_stdio():
    # A deadline the answer meets on a loaded machine too: with half a second, the interpreter's
    # start outlasted it there, and the probe's silence read as a legacy server instead.
    async with Client(legacy_stdio_server("broken", timeout=10)) as client:
        with pytest.raises(ProtocolError, match="malformed JSON-RPC error"):
            await client.list_tools()
        assert client.era is None


#: A stand-in server that, before answering each request, writes what its argument names:
#: an over-long line, a line that is no JSON, JSON that is no object, a request of its own, a
#: notification tagged for nobody; then the answer.
_NOISY_SERVER = """
import json, sys
noise = {
    "long": "x" * 5000,
    "text": "hello from a stray print()",
    "array": "[1, 2, 3]",
    "request": json.dumps({"jsonrpc": "2.0", "id": 99, "method": "ping"}),
    "stray": json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}}),
    "blank": "   ",
}[sys.argv[1]]
for line in sys.stdin:
    request = json.loads(line)
    print(noise, flush=True)
    print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": True}}), flush=True)
"""


async def exchange_with_noise(noise: str, strays: list[dict] | None = None) -> list[dict]:
    transport = StdioTransport([sys.executable, "-c", _NOISY_SERVER, noise], timeout=10, max_line_bytes=1000)

    async def stray(message: dict) -> None:
        assert strays is not None
        strays.append(message)

    transport.on_stray = stray if strays is not None else None
    try:
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        return [message async for message in transport.exchange(request)]
    finally:
        await transport.aclose()


@pytest.mark.parametrize(
    ("noise", "logged"),
    [
        ("long", "skipped a stdout line longer than 1000 bytes"),
        (
            "text",
            "the server wrote a line that is not JSON: 'hello from a stray print()'"
            " (Parse error: Expecting value: line 1 column 1 (char 0))",
        ),
        ("array", "the server wrote JSON that is not a message: [1, 2, 3]"),
        ("blank", None),
    ],
)
async def test_a_line_that_is_no_message_is_skipped_and_logged(noise, logged, caplog):
    caplog.set_level(logging.WARNING, logger="mcpref.client.stdio")
    assert await exchange_with_noise(noise) == [{"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}]
    warnings = [record.getMessage() for record in caplog.records if record.name == "mcpref.client.stdio"]
    assert warnings == ([logged] if logged else [])


async def test_a_request_from_the_server_is_answered_by_nobody_and_a_stray_notification_goes_to_the_handler():
    strays: list[dict] = []
    assert await exchange_with_noise("request", strays) == [{"jsonrpc": "2.0", "id": 1, "result": {"ok": True}}]
    assert strays == []  # a request is not a notification: no handler sees it
    await exchange_with_noise("stray", strays)
    assert [message["method"] for message in strays] == ["notifications/message"]


#: A stand-in server that does not exit when its stdin closes; with `stubborn` it ignores SIGTERM too.
_LINGERING_SERVER = """
import signal, sys, time
if sys.argv[1] == "stubborn":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("ready", file=sys.stderr, flush=True)
sys.stdin.read()
time.sleep(60)
"""


@pytest.mark.parametrize(("kind", "returncode"), [("lingering", -signal.SIGTERM), ("stubborn", -signal.SIGKILL)])
async def test_a_server_that_outlives_its_stdin_is_terminated_then_killed(kind, returncode):
    # stdio.mdx §Shutdown: close stdin, wait, SIGTERM, wait, SIGKILL.
    ready = asyncio.Event()
    transport = StdioTransport(
        [sys.executable, "-c", _LINGERING_SERVER, kind], shutdown_timeout=0.3, on_stderr=lambda line: ready.set()
    )
    await transport.connect()
    process = transport.process
    await asyncio.wait_for(ready.wait(), 10)
    started = time.monotonic()
    await transport.aclose()
    assert process is not None and process.returncode == returncode
    assert time.monotonic() - started < 3
    with pytest.raises(TransportError, match="this stdio transport is closed"):
        await transport.connect()


async def test_each_stderr_line_reaches_the_handler_as_written_without_its_line_ending():
    lines: list[str] = []
    script = "import sys; sys.stderr.buffer.write(b'  spaced out  \\r\\nplain XX\\n\\xff bad\\n'); sys.stderr.flush()"
    transport = StdioTransport([sys.executable, "-c", script], on_stderr=lines.append)
    await transport.connect()
    await eventually(lambda: len(lines) == 3)
    await transport.aclose()
    assert lines == ["  spaced out  ", "plain XX", "\ufffd bad"]


async def test_closing_a_transport_that_never_started_is_harmless():
    transport = StdioTransport([sys.executable, "-c", "pass"])
    await transport.aclose()
    await transport.aclose()
    assert transport.process is None and transport.generation == 0


#: A third-party-style server whose one tool mirrors a number in a header, which the rules forbid.
_ANNOTATED_SERVER = """
import json, sys
schema = {"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}
results = {
    "server/discover": {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}},
    "tools/list": {"resultType": "complete", "tools": [{"name": "measure", "inputSchema": schema}]},
}
for line in sys.stdin:
    request = json.loads(line)
    if "id" in request:
        print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": results[request["method"]]}), flush=True)
"""


async def test_over_stdio_a_tool_is_kept_whatever_its_header_annotations_say():
    """x-mcp-header rules are about HTTP headers: a stdio client has none to build, so it drops
    no tool for them (over HTTP, tests/client/test_client.py drops it)."""
    async with Client(StdioTransport([sys.executable, "-c", _ANNOTATED_SERVER], timeout=10)) as client:
        tools = await client.list_tools()
    assert [tool["name"] for tool in tools] == ["measure"]
    assert client.dropped_tools == {}
