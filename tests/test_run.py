"""The command line: `python -m examples.minimal_server` as a real process, and a clean Ctrl+C."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time

import httpx

from tests.conftest import ACCEPT, META, VERSION


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_ctrl_c_ends_open_listen_streams_with_their_result() -> None:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "examples.minimal_server", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        deadline = time.monotonic() + 15
        while True:
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and process.poll() is None, "the server did not start"
                time.sleep(0.05)
        body = {
            "jsonrpc": "2.0",
            "id": "L",
            "method": "subscriptions/listen",
            "params": {"_meta": META, "notifications": {}},
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": ACCEPT,
            "MCP-Protocol-Version": VERSION,
            "Mcp-Method": "subscriptions/listen",
        }
        with httpx.stream("POST", url, json=body, headers=headers, timeout=10) as response:
            lines = response.iter_lines()
            assert next(line for line in lines if line.startswith("data:"))  # the acknowledgement
            started = time.monotonic()
            process.send_signal(signal.SIGINT)
            final = json.loads(next(line for line in lines if line.startswith("data:"))[5:])
        assert final["id"] == "L" and final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L"
        # uvicorn re-raises the signal once shut down, so the exit is the usual one for Ctrl+C.
        assert process.wait(timeout=10) in (0, -signal.SIGINT)
        assert time.monotonic() - started < 5
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        assert process.stderr is not None
        process.stderr.close()


def test_http_binds_loopback_unless_told_otherwise(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """streamable-http.mdx §Security & Endpoint: a local server binds 127.0.0.1, not 0.0.0.0."""
    import mcpref.run
    from mcpref import Server

    bound: list[str] = []
    monkeypatch.setattr(mcpref.run, "serve_http", lambda app, servers, host, *rest, **options: bound.append(host))
    mcpref.run.main(Server("bind-test", "1"), argv=[])
    mcpref.run.main(Server("bind-test", "1"), argv=["--host", "0.0.0.0"])
    assert bound == ["127.0.0.1", "0.0.0.0"]
