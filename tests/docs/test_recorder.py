"""scripts/record: real traffic through the recording proxy becomes frames the harness passes.

The reference server runs under uvicorn as `./scripts/serve` would run it, the recorder runs in
front of it, and a real client talks to the recorder: the official Python SDK's client (in its
modern and its 2025-11-25 mode, the latter at the dual-era endpoint), and
plain httpx for an MRTR round trip and a stream the client leaves open. What the recorder wrote
is then put on a page and run through the harness, which sends every request again to a fresh
reference server and compares: the recording is only as good as that run says.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import running
from tests.docs import pages, shared
from tests.docs.recorder import RECORDED_BYTES, Recorder

MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}


@contextmanager
def recorder_in_front_of(path: str) -> Iterator[tuple[str, list[str]]]:
    """The proxy's URL and the frames it has written so far, for the reference endpoint at `path`."""
    frames: list[str] = []
    # Built as the harness builds its apps (the same state key), as a deployment's instances are.
    with running(shared.build(path)) as server_url, running(Recorder(server_url, frames.append)) as proxy_url:
        yield proxy_url, frames


@pytest.fixture
def recording() -> Iterator[tuple[str, list[str]]]:
    with recorder_in_front_of("/mcp") as recorded:
        yield recorded


def page_failures(tmp_path: Path, frames: list[str], expected: int) -> list[str]:
    deadline = time.monotonic() + 5
    while len(frames) < expected and time.monotonic() < deadline:  # the last one is written as it ends
        time.sleep(0.02)
    assert len(frames) == expected, frames
    path = tmp_path / "recorded.md"
    path.write_text("# Recorded\n\n" + "\n".join(frames), encoding="utf-8")
    return pages.recheck([path])


#: The SDK's mode, the reference endpoint it talks to, and what it sends for list-then-call:
#: its own handshake first (the modern probe, or the 2025-11-25 initialize), then the test's.
SDK_SESSIONS = {
    "auto": ("/mcp", ["server/discover", "tools/list", "tools/call"]),
    "legacy": ("/dual/mcp", ["initialize", "notifications/initialized", "tools/list", "tools/call"]),
}


@pytest.mark.parametrize("mode", SDK_SESSIONS)
def test_the_python_sdk_client_recorded_is_a_passing_page(mode: str, tmp_path: Path) -> None:
    path, methods = SDK_SESSIONS[mode]

    async def session(proxy_url: str) -> bool:
        async with (
            httpx2.AsyncClient(timeout=10) as http,
            Client(streamable_http_client(proxy_url + path, http_client=http), mode=mode) as client,
        ):
            await client.list_tools()
            result = await client.call_tool("get_forecast", {"city": "Oslo", "days": 1})
        return result.is_error

    with recorder_in_front_of(path) as (proxy_url, frames):
        assert asyncio.run(session(proxy_url)) is False
        assert page_failures(tmp_path, frames, len(methods)) == []
    assert [json.loads(f.split("\n\n", 1)[1].split("```")[0])["method"] for f in frames] == methods
    recorded = "\n".join(frames)
    assert "User-Agent" not in recorded
    assert '"issuedAt": "<<iso-datetime>>"' in recorded and '\\"issuedAt\\": \\"<<iso-datetime>>\\"' in recorded
    if mode == "auto":  # the list told the SDK that city travels in a header too
        assert "Mcp-Param-City: Oslo" in recorded


def _call(arguments: dict, **params: object) -> dict:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "file_report", "arguments": arguments, **params, "_meta": {
            **MODERN, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}},
    }  # fmt: skip


def test_a_request_state_is_captured_and_carried_into_the_retry(
    recording: tuple[str, list[str]], tmp_path: Path
) -> None:
    proxy_url, frames = recording
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "file_report",
    }
    report = {"station": "oslo", "note": "n"}
    with httpx.Client(base_url=proxy_url, timeout=10) as http:
        asked = http.post("/mcp", json=_call(report), headers=headers).json()["result"]
        answers = {key: {"action": "accept", "content": {"confirm": True}} for key in asked["inputRequests"]}
        retry = _call(report, inputResponses=answers, requestState=asked["requestState"])
        done = http.post("/mcp", json=retry, headers=headers).json()["result"]
    assert done["resultType"] == "complete"
    assert page_failures(tmp_path, frames, 2) == []
    assert '"requestState": "<<sealed-state:state1>>"' in frames[0]
    assert '"requestState": "{{state1}}"' in frames[1]


def test_a_stream_the_client_leaves_is_shown_open(recording: tuple[str, list[str]], tmp_path: Path) -> None:
    proxy_url, frames = recording
    listen = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": True}, "_meta": MODERN},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "subscriptions/listen",
    }
    with (
        httpx.Client(base_url=proxy_url, timeout=10) as http,
        http.stream("POST", "/mcp", json=listen, headers=headers) as stream,
    ):
        lines = stream.iter_lines()
        assert next(lines) == "event: message"
        assert "notifications/subscriptions/acknowledged" in next(lines)
    assert page_failures(tmp_path, frames, 1) == []
    assert frames[0].rstrip().endswith(": (stream still open)\n```")


# -- the proxy itself (issue 25) ---------------------------------------------------------------


class Upstream:
    """An upstream that notes the Host it was sent and counts the body's bytes as they stream in."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        self.received = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.hosts.append(dict(scope["headers"]).get(b"host", b"").decode())
        while True:
            message = await receive()
            self.received += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        body = json.dumps({"received": self.received}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


def test_the_clients_host_reaches_the_upstream() -> None:
    """Issue 25: the recorder dropped the client's Host, so the server judged (and answered) the
    recorder's connection instead of the client's request."""
    upstream = Upstream()
    with running(upstream) as server_url, running(Recorder(server_url, lambda text: None)) as proxy_url:
        httpx.post(proxy_url + "/mcp", content=b"{}", headers={"Host": "localhost:8002"}, timeout=10)
    assert upstream.hosts == ["localhost:8002"]


def test_a_huge_body_streams_through_and_is_never_held_whole() -> None:
    """Issue 25: the recorder read any body whole before forwarding it (a 299 MB body took its RSS
    from 48 to 475 MB). It streams it, and the frame keeps the first `RECORDED_BYTES`."""
    upstream = Upstream()
    frames: list[str] = []
    size = 16 * 1024 * 1024
    chunk = b"x" * (256 * 1024)

    def body() -> Iterator[bytes]:
        for _ in range(size // len(chunk)):
            yield chunk

    with running(upstream) as server_url, running(Recorder(server_url, frames.append)) as proxy_url:
        tracemalloc.start()
        try:
            answer = httpx.post(
                proxy_url + "/upload", content=body(), headers={"Content-Length": str(size)}, timeout=30
            )
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert answer.json() == {"received": size}
    assert peak < 10 * 1024 * 1024, f"{peak} bytes traced at the peak, for a body of {size}"  # about 4 MiB
    assert len(frames) == 1 and f"({size - RECORDED_BYTES} more bytes, not recorded)" in frames[0]


def test_an_asterisk_target_is_answered_not_a_500() -> None:
    """Issue 25: `OPTIONS * HTTP/1.1` (a request about the server itself) was a 500."""
    with running(Recorder("http://127.0.0.1:9", lambda text: None)) as proxy_url:
        host, port = proxy_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as sock:
            sock.sendall(b"OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            status_line = sock.recv(4096).split(b"\r\n", 1)[0]
        down = httpx.post(proxy_url + "/mcp", content=b"{}", timeout=10)  # an upstream that is not there
    assert status_line == b"HTTP/1.1 204 No Content"
    assert down.status_code == 502
