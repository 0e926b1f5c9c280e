"""The stdio process against hostile input: every bad line gets its error and the process keeps
serving. (A malformed `notifications/cancelled` is issue 9's, tested in tests/transports.)"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.stdio_server import LINE_LIMIT
from tests.transports.test_stdio import Child, request_line, run_on_stdin


@pytest.fixture
def child() -> Iterator[Child]:
    process = Child("tests.hostile.stdio_server")
    yield process
    process.finish()


def still_serving(child: Child) -> None:
    child.request("alive", "tools/list")
    assert child.read("tools/list")["id"] == "alive"


def test_an_oversized_line_is_refused_and_the_next_one_served(child: Child) -> None:
    child.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"' + b"x" * (LINE_LIMIT * 3) + b'"}}\n')
    error = child.read()["error"]
    assert error["code"] == -32600 and str(LINE_LIMIT) in error["message"]
    still_serving(child)


def test_an_oversized_line_in_a_file_on_stdin_is_refused_too(tmp_path: Path) -> None:
    """A regular file on stdin is read by a thread, not the event loop; the line limit holds there too."""
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"x" * (LINE_LIMIT * 3) + b"\n" + request_line("after", "tools/list"))
    with requests.open("rb") as stdin:
        done = run_on_stdin("tests.hostile.stdio_server", stdin)
    assert done.returncode == 0, done.stderr.decode()
    refused, answered = (json.loads(line) for line in done.stdout.splitlines())
    assert refused["error"]["code"] == -32600 and str(LINE_LIMIT) in refused["error"]["message"]
    assert answered["id"] == "after" and "result" in answered


@pytest.mark.parametrize(
    "line",
    [
        b"not json\n",
        b"[]\n",
        b"{}\n",
        b"[" * 50_000 + b"\n",
        b'{"jsonrpc":"2.0","id":{},"method":"x"}\n',
        b"\xff\xfe\n",
    ],
)
def test_garbage_gets_an_error_and_the_process_keeps_serving(child: Child, line: bytes) -> None:
    child.send(line)
    assert "error" in child.read()
    still_serving(child)


def test_a_completion_context_that_is_not_an_object_is_invalid_params(child: Child) -> None:
    params = {"ref": {"type": "ref/prompt", "name": "brief"}, "argument": {"name": "city", "value": ""}, "context": 1}
    child.request(1, "completion/complete", params)
    assert child.read("completion/complete")["error"]["code"] == -32602
    still_serving(child)


def test_a_blocking_tool_does_not_hold_up_the_next_request(child: Child) -> None:
    still_serving(child)  # the process is up
    child.request("slow", "tools/call", {"name": "block", "arguments": {"seconds": 3}})
    started = time.monotonic()
    still_serving(child)  # answered while `block` sleeps in its worker thread
    assert time.monotonic() - started < 2.0
    assert child.read("tools/call")["result"]["content"][0]["text"] == "unblocked"
