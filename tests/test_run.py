"""The command line: `python -m mcpref.examples.minimal_server` as a real process, and a clean Ctrl+C."""

from __future__ import annotations

import json
import os
import pty
import signal
import subprocess
import sys
import time

import httpx

from bench.procs import ServerProcess
from mcpref.run import STDIO_TERMINAL_HINT
from tests.conftest import mcp_body, mcp_headers
from tests.transports.test_stdio import request_line


def test_ctrl_c_ends_open_listen_streams_with_their_result() -> None:
    with ServerProcess("mcpref.examples.minimal_server", own_main=True) as server:
        server.wait_ready(None, timeout=15)
        body = mcp_body("subscriptions/listen", {"notifications": {}}, "L")
        headers = mcp_headers("subscriptions/listen")
        with httpx.stream("POST", server.url, json=body, headers=headers, timeout=10) as response:
            lines = response.iter_lines()
            assert next(line for line in lines if line.startswith("data:"))  # the acknowledgement
            started = time.monotonic()
            server.proc.send_signal(signal.SIGINT)
            final = json.loads(next(line for line in lines if line.startswith("data:"))[5:])
        assert final["id"] == "L" and final["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L"
        # uvicorn re-raises the signal once shut down, so the exit is the usual one for Ctrl+C.
        assert server.proc.wait(timeout=10) in (0, -signal.SIGINT)
        assert time.monotonic() - started < 5


def test_the_ready_line_names_the_endpoint_a_client_is_given() -> None:
    """Was: `Serving at http://127.0.0.1:8126`, whose root answers 404: the endpoint is `/mcp`."""
    with ServerProcess("mcpref.examples.minimal_server", own_main=True) as server:
        server.wait_ready(None, timeout=15)
        deadline = time.monotonic() + 10
        while "Serving at" not in server.log() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f"Serving at {server.url} (Ctrl+C stops)" in server.log(), server.log()
        answer = httpx.post(server.url, json=mcp_body("server/discover"), headers=mcp_headers("server/discover"))
        assert answer.status_code == 200


def test_http_binds_loopback_unless_told_otherwise(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """streamable-http.mdx §Security & Endpoint: a local server binds 127.0.0.1, not 0.0.0.0."""
    import mcpref.run
    from mcpref import Server

    bound: list[str] = []
    monkeypatch.setattr(mcpref.run, "serve_http", lambda app, servers, host, *rest, **options: bound.append(host))
    mcpref.run.main(Server("bind-test", "1"), argv=[])
    mcpref.run.main(Server("bind-test", "1"), argv=["--host", "0.0.0.0"])
    assert bound == ["127.0.0.1", "0.0.0.0"]


def test_help_names_the_command_the_user_typed() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpref.examples.minimal_server", "--help"], capture_output=True, text=True, timeout=15
    )
    assert done.returncode == 0
    assert done.stdout.startswith("usage: python -m mcpref.examples.minimal_server ")
    port_help = " ".join(done.stdout.split("--port PORT", 2)[2].split())  # the option's own entry
    assert "PORT environment variable" in port_help and "8000" in port_help


def test_stdio_on_a_terminal_says_what_it_reads_on_stderr_and_serves() -> None:
    """On a terminal a silent server looks hung; stdout stays the protocol's alone."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "mcpref.examples.minimal_server", "--stdio"],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(terminal)
    try:
        assert process.stderr is not None and process.stdout is not None
        assert process.stderr.readline().decode().strip() == STDIO_TERMINAL_HINT
        os.write(controller, request_line(1, "tools/list"))
        assert json.loads(process.stdout.readline())["id"] == 1  # the hint did not land on stdout
        os.write(controller, b"\x04")  # Ctrl+D: end of input
        assert process.wait(timeout=10) == 0
        assert process.stdout.read() == b""
        assert b"Traceback" not in process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()
        os.close(controller)


def test_stdio_on_a_pipe_prints_no_hint() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcpref.examples.minimal_server", "--stdio"],
        input=request_line(1, "tools/list"),
        capture_output=True,
        timeout=15,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["id"] == 1
    assert STDIO_TERMINAL_HINT.encode() not in done.stderr


def test_stdio_and_help_never_read_port() -> None:
    """`PORT=abc python step1_first_tool.py --stdio` was a ValueError traceback: PORT was read
    while the parser was built, though stdio has no port."""
    env = {**os.environ, "PORT": "abc"}
    command = [sys.executable, "-m", "mcpref.examples.minimal_server"]
    line = request_line(1, "tools/list")
    served = subprocess.run([*command, "--stdio"], input=line, capture_output=True, env=env, timeout=15)
    assert served.returncode == 0 and json.loads(served.stdout)["id"] == 1, served.stderr
    helped = subprocess.run([*command, "--help"], capture_output=True, env=env, timeout=15)
    assert helped.returncode == 0 and helped.stdout.startswith(b"usage: ")


def test_a_bad_port_is_a_usage_error_naming_where_it_came_from() -> None:
    command = [sys.executable, "-m", "mcpref.examples.minimal_server"]
    for extra, env, source in (
        (["--port", "-5"], {}, "argument --port: '-5'"),
        (["--port", "70000"], {}, "argument --port: '70000'"),
        ([], {"PORT": "abc"}, "the PORT environment variable: 'abc'"),
    ):
        done = subprocess.run([*command, *extra], capture_output=True, text=True, env={**os.environ, **env}, timeout=15)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        error = done.stderr.strip().splitlines()[-1]
        assert error.startswith("python -m mcpref.examples.minimal_server: error: " + source), error


def test_a_limit_that_is_not_a_positive_number_is_a_usage_error() -> None:
    """Was: `--max-connections -1` or `--header-timeout nan` started a server with that limit."""
    command = [sys.executable, "-m", "mcpref.examples.minimal_server"]
    for option, value, says in (
        ("--max-connections", "-1", "'-1' is not a positive whole number"),
        ("--max-header-bytes", "0", "'0' is not a positive whole number"),
        ("--header-timeout", "nan", "'nan' is not a positive number of seconds"),
        ("--body-timeout", "inf", "'inf' is not a positive number of seconds"),
        ("--keepalive-timeout", "soon", "'soon' is not a positive number of seconds"),
    ):
        done = subprocess.run([*command, option, value], capture_output=True, text=True, timeout=15)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert done.stderr.strip().splitlines()[-1].endswith(f"error: argument {option}: {says}"), done.stderr
