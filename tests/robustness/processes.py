"""Real `uvicorn` processes on loopback, started the way an operator would start them.

Each process is `python -m uvicorn <app> --host 127.0.0.1 --port 0`: the kernel picks a free
port, and uvicorn's own start-up line says which (read from its log file, which also lets a
test check afterwards that the process logged no traceback).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_STARTED = re.compile(r"Uvicorn running on http://127\.0\.0\.1:(\d+)")


@dataclass
class ServerProcess:
    process: subprocess.Popen[bytes]
    log_path: Path
    url: str = ""

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        return self.log_path.read_text("utf-8", "replace")

    def cpu_seconds(self) -> float:
        """User and system CPU time the process has used so far; 0 once it is gone."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_rss_kib(self) -> int:
        """The most memory the process has held resident (VmHWM), in KiB; 0 once it is gone."""
        try:
            status = Path(f"/proc/{self.pid}/status").read_text()
        except OSError:
            return 0
        found = re.search(r"VmHWM:\s+(\d+) kB", status)
        return int(found.group(1)) if found else 0


def _start(app: str, env: Mapping[str, str], log_dir: Path, index: int, own_runner: bool) -> ServerProcess:
    log_path = log_dir / f"uvicorn-{index}.log"
    if own_runner:  # `python -m <module>`: the module's own command line, through mcpref.run
        command = [sys.executable, "-m", app.partition(":")[0], "--host", "127.0.0.1", "--port", "0"]
    else:
        command = [sys.executable, "-m", "uvicorn", app, "--host", "127.0.0.1", "--port", "0", "--no-access-log"]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, **env}, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    return ServerProcess(process, log_path)


def _wait_started(server: ServerProcess, deadline: float) -> None:
    while True:
        found = _STARTED.search(server.log())
        if found:
            server.url = f"http://127.0.0.1:{found.group(1)}"
            return
        if server.process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"uvicorn did not start:\n{server.log()}")
        time.sleep(0.05)


def _stop(server: ServerProcess) -> None:
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait()


@contextmanager
def uvicorn_processes(
    app: str, envs: list[Mapping[str, str]], timeout: float = 30, *, own_runner: bool = False
) -> Iterator[list[ServerProcess]]:
    """Start one uvicorn process per entry of `envs` (extra environment for each), all at once,
    and stop them all (SIGTERM, then SIGKILL) on the way out. `own_runner` starts the app's
    module as `python -m module` (through `mcpref.run`, with its bounds) instead of the uvicorn CLI."""
    with tempfile.TemporaryDirectory(prefix="mcpref-uvicorn-") as log_dir, ExitStack() as stack:
        servers = []
        for index, env in enumerate(envs):
            server = _start(app, env, Path(log_dir), index, own_runner)
            stack.callback(_stop, server)
            servers.append(server)
        deadline = time.monotonic() + timeout
        for server in servers:
            _wait_started(server, deadline)
        yield servers
