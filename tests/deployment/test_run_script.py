"""`deploy/run`, the script a reader starts a deployment with: three instances and HAProxy on the
ports it is given, requests answered by all three through the balancer, and all of it stopped by
one SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from bench.balanced import NAMES
from bench.procs import HOST, ROOT, free_port

from .conftest import needs_haproxy


def test_deploy_run_starts_three_instances_behind_haproxy_and_stops_them_all(
    postgres_dsn: str, tmp_path: Path
) -> None:
    needs_haproxy()
    ports = {name: free_port() for name in ("LB_PORT", "INSTANCE_1", "INSTANCE_2", "INSTANCE_3")}
    env = {**os.environ, **{name: str(port) for name, port in ports.items()}}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # this venv's uvicorn
    log = tmp_path / "run.log"
    with log.open("wb") as out:
        script = subprocess.Popen(
            [str(ROOT / "deploy" / "run"), postgres_dsn], env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        seen: set[str] = set()
        deadline = time.monotonic() + 60
        with httpx.Client(timeout=5) as http:
            while seen != set(NAMES):
                assert time.monotonic() < deadline, f"reached only {sorted(seen)}: {log.read_text()}"
                assert script.poll() is None, log.read_text()
                try:
                    seen.add(http.get(f"http://{HOST}:{ports['LB_PORT']}/healthz").headers["x-mcpref-instance"])
                except (httpx.HTTPError, KeyError):
                    time.sleep(0.1)
            answer = http.post(
                f"http://{HOST}:{ports['LB_PORT']}/mcp",
                headers={
                    "Accept": "application/json, text/event-stream",
                    "MCP-Protocol-Version": "2026-07-28",
                    "Mcp-Method": "tools/list",
                },
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "tools/list",
                    "params": {
                        "_meta": {
                            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                            "io.modelcontextprotocol/clientCapabilities": {},
                        }
                    },
                },
            )
        assert answer.status_code == 200 and answer.json()["result"]["tools"], answer.text
        assert f"balancer: http://127.0.0.1:{ports['LB_PORT']}/mcp" in log.read_text()
    finally:
        script.send_signal(signal.SIGTERM)
        assert script.wait(timeout=20) in (0, 143), log.read_text()
    for name, port in ports.items():  # nothing it started is left listening
        with httpx.Client(timeout=2) as http:
            try:
                http.get(f"http://{HOST}:{port}/healthz")
            except httpx.ConnectError:
                continue
        raise AssertionError(f"{name} (port {port}) still answers after SIGTERM: {log.read_text()}")
