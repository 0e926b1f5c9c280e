"""stdio under a real child process: newline-delimited JSON-RPC on stdin/stdout, logs on stderr."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcpref.validation import check_message
from tests.conftest import META


def request_line(request_id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": {"_meta": META, **(params or {})}}
    return json.dumps(message).encode() + b"\n"


def run_on_stdin(module: str, stdin: Any, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run `module` to completion with `stdin` (a file object or `subprocess.DEVNULL`) as its stdin."""
    return subprocess.run([sys.executable, "-m", module, *args], stdin=stdin, capture_output=True, timeout=15)


class Child:
    def __init__(self, module: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", module, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.process.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def request(self, request_id: Any, method: str, params: dict[str, Any] | None = None) -> None:
        self.send(request_line(request_id, method, params))

    def read(self, method: str | None = None, revision: str = "2026-07-28") -> dict[str, Any]:
        """The next line of stdout, checked against the official schema of `revision`."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.endswith(b"\n"), "the server wrote no complete line"
        message = json.loads(line)
        check_message(message, method if "id" in message and "method" not in message else None, revision)
        return message

    def close(self) -> int:
        """Close stdin, as a client shutting down does, and wait for the exit."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=10)

    def finish(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            if pipe is not None:
                pipe.close()


@pytest.fixture
def child() -> Iterator[Child]:
    process = Child("tests.stdio_server")
    yield process
    process.finish()


def test_the_minimal_server_answers_over_stdio_and_exits_at_eof() -> None:
    process = Child("mcpref.examples.minimal_server", "--stdio")
    try:
        process.request(1, "tools/call", {"name": "echo", "arguments": {"message": "héllo"}})
        answer = process.read("tools/call")
        assert answer["result"]["content"] == [{"type": "text", "text": "héllo"}]
        assert process.close() == 0
    finally:
        process.finish()


def test_a_file_of_requests_on_stdin_gets_every_answer_then_exit_0(tmp_path: Path) -> None:
    """`server --stdio < requests.jsonl`: a regular file is no pipe, and the event loop refuses it."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"".join(request_line(n, "tools/list") for n in range(50)))
    with requests.open("rb") as stdin:
        done = run_on_stdin("mcpref.examples.minimal_server", stdin, "--stdio")
    assert done.returncode == 0, done.stderr.decode()
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(answer["id"] for answer in answers) == list(range(50))
    assert all(answer["result"]["tools"] for answer in answers)


def test_dev_null_on_stdin_exits_0_at_once() -> None:
    """/dev/null is a character device the event loop cannot watch: it must still read as EOF."""
    started = time.monotonic()
    done = run_on_stdin("mcpref.examples.minimal_server", subprocess.DEVNULL, "--stdio")
    assert done.returncode == 0 and done.stdout == b""
    assert b"Traceback" not in done.stderr and b"Error" not in done.stderr, done.stderr.decode()
    assert time.monotonic() - started < 10


def test_progress_comes_before_the_answer(child: Child) -> None:
    child.request(
        "a", "tools/call", {"name": "echo", "arguments": {"message": "x"}, "_meta": {**META, "progressToken": "t"}}
    )
    assert child.read()["method"] == "notifications/progress"
    assert child.read("tools/call")["id"] == "a"


def test_cancelled_requests_get_no_answer(child: Child) -> None:
    child.request(5, "tools/call", {"name": "wait", "arguments": {}})
    assert child.process.stderr is not None
    assert child.process.stderr.readline() == b"wait started\n"
    child.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5, "reason": "user"}})
    child.request(6, "tools/call", {"name": "echo", "arguments": {"message": "next"}})
    assert child.read("tools/call")["id"] == 6
    assert child.close() == 0
    assert child.process.stdout is not None and child.process.stdout.read() == b""
    assert b"wait was cancelled" in child.process.stderr.read()


@pytest.mark.parametrize(
    "params",
    [
        {"requestId": [1]},
        {"requestId": {"id": 1}},
        {"requestId": True},
        {"requestId": 1.0},
        {"requestId": "1"},
        {"requestId": None},
        {},
        {"requestId": 99},
    ],
)
def test_a_cancellation_that_names_no_request_of_ours_is_ignored(child: Child, params: dict) -> None:
    """Malformed or unknown cancellations are ignored (cancellation.mdx §Error Handling), and ids
    match by JSON type and value, as JSON-RPC ids do: `true`, `1.0` and `"1"` do not name request 1."""
    child.request(1, "tools/call", {"name": "wait", "arguments": {"seconds": 0.5}})
    assert child.process.stderr is not None
    assert child.process.stderr.readline() == b"wait started\n"
    child.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})
    child.request(2, "tools/call", {"name": "echo", "arguments": {"message": "still here"}})
    assert child.close() == 0  # at EOF the server finishes what is under way, then exits
    assert child.process.stdout is not None
    answers = {message["id"]: message["result"] for message in map(json.loads, child.process.stdout)}
    assert answers[2]["content"][0]["text"] == "still here"
    assert answers[1]["content"][0]["text"] == "woke"


@pytest.mark.parametrize("method", ["tools/list", "server/discover", "subscriptions/listen"])
def test_an_unsupported_version_is_refused_on_stdio_too(child: Child, method: str) -> None:
    """basic/versioning.mdx: a version the server does not speak is -32022 with the supported list;
    stdio has no header to refuse it early, so the dispatcher alone must."""
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    child.send({"jsonrpc": "2.0", "id": 4, "method": method, "params": {"_meta": meta}})
    answer = child.read(method)
    assert answer["id"] == 4
    assert answer["error"]["code"] == -32022
    assert answer["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2099-01-01"}
    assert child.close() == 0


def test_malformed_lines_get_errors_and_the_server_goes_on(child: Child) -> None:
    child.send(b"not json\n")
    assert child.read()["error"]["code"] == -32700
    child.send(b'{"jsonrpc":"2.0","id":null,"method":"tools/list"}\n')
    assert child.read()["error"]["code"] == -32600
    child.send({"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
    assert child.read()["error"]["code"] == -32602
    child.request(10, "server/discover")
    assert child.read("server/discover")["result"]["resultType"] == "complete"


def test_listen_over_stdio(child: Child) -> None:
    child.send(
        {
            "jsonrpc": "2.0",
            "id": "L",
            "method": "subscriptions/listen",
            "params": {"_meta": META, "notifications": {"toolsListChanged": True}},
        }
    )
    ack = child.read()
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    child.request(2, "tools/call", {"name": "add_tool", "arguments": {}})
    messages = [child.read(), child.read()]
    change = next(m for m in messages if m.get("method") == "notifications/tools/list_changed")
    assert change["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "L"}
    child.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "L"}})
    child.request(3, "server/discover")
    assert child.read("server/discover")["id"] == 3


def test_at_eof_a_subscription_ends_with_its_result(child: Child) -> None:
    child.send(
        {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {"_meta": META, "notifications": {}}}
    )
    child.read()
    assert child.close() == 0
    assert child.process.stdout is not None
    tail = [json.loads(line) for line in child.process.stdout.read().splitlines()]
    assert tail[0]["id"] == 1 and tail[0]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1
    assert tail[1] == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "subscription ended"},
    }


def test_the_server_sends_cancelled_only_to_end_a_listen_stream(child: Child) -> None:
    """basic/patterns/cancellation.mdx: server-sent cancellations MUST reference a
    `subscriptions/listen` request. The negative case: a tool call the client cancelled, and one
    still running at EOF, get none; only the listen stream ends with one."""
    assert child.process.stderr is not None
    child.request(2, "tools/call", {"name": "wait", "arguments": {"seconds": 30}})
    assert child.process.stderr.readline() == b"wait started\n"
    child.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "no"}})
    assert child.process.stderr.readline() == b"wait was cancelled\n"
    child.request(3, "tools/call", {"name": "wait", "arguments": {"seconds": 0.3}})
    assert child.process.stderr.readline() == b"wait started\n"
    child.send(
        {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {"_meta": META, "notifications": {}}}
    )
    assert child.read()["method"] == "notifications/subscriptions/acknowledged"
    assert child.close() == 0
    assert child.process.stdout is not None
    tail = [json.loads(line) for line in child.process.stdout.read().splitlines()]
    cancels = [message["params"]["requestId"] for message in tail if message.get("method") == "notifications/cancelled"]
    assert cancels == [1]
    answered = sorted(message["id"] for message in tail if "id" in message)
    assert answered == [1, 3]  # the cancelled call gets no answer either; the one running at EOF finishes


def test_a_legacy_client_over_stdio(child: Child) -> None:
    child.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"},
            },
        }
    )
    assert child.read("initialize", "2025-11-25")["result"]["protocolVersion"] == "2025-06-18"
    child.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    child.send(
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "old"}}}
    )
    assert child.read("tools/call", "2025-11-25")["result"] == {"content": [{"type": "text", "text": "old"}]}
    child.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert child.read("ping", "2025-11-25")["result"] == {}


def test_the_server_cancels_nothing_but_listen_streams(child: Child) -> None:
    listen = {"_meta": META, "notifications": {"toolsListChanged": True}}
    child.send({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen", "params": listen})
    child.request(7, "tools/call", {"name": "echo", "arguments": {"message": "m"}})
    assert child.close() == 0
    assert child.process.stdout is not None
    sent = [json.loads(line) for line in child.process.stdout.read().splitlines()]
    cancels = [m for m in sent if m.get("method") == "notifications/cancelled"]
    assert [m["params"]["requestId"] for m in cancels] == ["L"]  # never request 7, nor anything else


def test_a_cancelled_tool_stops_working(child: Child) -> None:
    assert child.process.stderr is not None
    child.request(8, "tools/call", {"name": "wait", "arguments": {}})
    assert child.process.stderr.readline() == b"wait started\n"
    child.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 8}})
    assert child.process.stderr.readline() == b"wait was cancelled\n"  # stopped now, not after its 30 s sleep
