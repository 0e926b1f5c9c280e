"""A balanced deployment on loopback: HAProxy (deploy/haproxy.cfg) in front of N instances of
`mcpref.examples.balanced` sharing one PostgreSQL database and one `MCP_STATE_KEY`.

Used by the deployment tests (tests/deployment/) and the benchmark's balancer runs; a reader
runs the same arrangement with deploy/run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from .procs import HOST, ROOT, ServerProcess, free_port

CONFIG = ROOT / "deploy" / "haproxy.cfg"
APP = "mcpref.examples.balanced:app"
#: The backend names deploy/haproxy.cfg gives the instances, in order.
NAMES = ("one", "two", "three")


class NoHAProxy(RuntimeError):
    """HAProxy is not installed."""


@dataclass
class Deployment:
    """The balancer's URL, and each instance by the name the balancer reports it under."""

    url: str
    instances: dict[str, ServerProcess]
    balancer: subprocess.Popen[bytes]
    balancer_log: Path

    @property
    def base_url(self) -> str:
        return self.url.removesuffix("/mcp")

    def wait_all_up(self, timeout: float = 30.0) -> None:
        """Until the balancer has sent a request to every live instance (its health checks passed)."""
        live = {name for name, server in self.instances.items() if server.proc.poll() is None}
        seen: set[str] = set()
        deadline = time.monotonic() + timeout
        with httpx.Client(timeout=5) as http:
            while not live <= seen:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the balancer reached only {sorted(seen)} of {sorted(live)}: {self.log()}")
                try:
                    seen.add(http.get(f"{self.base_url}/healthz").headers.get("x-mcpref-instance", ""))
                except httpx.HTTPError:
                    time.sleep(0.05)

    def log(self) -> str:
        return self.balancer_log.read_text(errors="replace")[-2000:]


@contextmanager
def balanced(
    dsn: str,
    *,
    count: int = 3,
    state_key: str = "one deployment",
    task_lease: float | None = None,
    share_lease: float | None = None,
) -> Iterator[Deployment]:
    """Start `count` instances (1 to 3) on `dsn` and HAProxy in front; stop them all on the way out.
    With fewer than three, the config's other backends point at ports nothing listens on, which
    its health checks mark down at once. `task_lease`: seconds before a dead instance's task is
    reported failed (the extension's default if None); `share_lease`: seconds a dead instance's
    fair shares still count (`PostgresShares`' default if None)."""
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        raise NoHAProxy("HAProxy is not installed: apt-get install haproxy")
    env = {"MCPREF_DATABASE_URL": dsn, "MCP_STATE_KEY": state_key}
    if task_lease is not None:
        env["MCPREF_TASK_LEASE_SECONDS"] = str(task_lease)
    if share_lease is not None:
        env["MCPREF_SHARE_LEASE_SECONDS"] = str(share_lease)
    with ExitStack() as stack:
        servers = [
            stack.enter_context(ServerProcess(APP, options=("--log-level", "warning"), env=env, label=name))
            for name in NAMES[:count]
        ]
        for server in servers:
            server.wait_ready(None, timeout=30)
        ports = [server.port for server in servers] + [free_port() for _ in range(len(NAMES) - count)]
        port = free_port()
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcpref-haproxy-")))
        log = folder / "haproxy.log"
        balancer_env = {**os.environ, "LB_PORT": str(port)}
        balancer_env.update({f"INSTANCE_{i}": str(p) for i, p in enumerate(ports, start=1)})
        with log.open("wb") as out:
            process = subprocess.Popen(
                [haproxy, "-db", "-f", str(CONFIG)], env=balancer_env, stdout=out, stderr=subprocess.STDOUT
            )
        try:
            deployment = Deployment(f"http://{HOST}:{port}/mcp", dict(zip(NAMES, servers, strict=False)), process, log)
            deployment.wait_all_up()
            yield deployment
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
