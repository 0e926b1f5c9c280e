"""Server processes on loopback, started the way an operator starts them, and what they cost.

One class serves the benchmark (a server pinned to a CPU, uvloop and httptools, timed until it
answers correctly), `scripts/load` and the tests that need a real process (several servers with
their own environment, a log to search for tracebacks). A server is `python -m uvicorn APP` or,
with `own_main`, `python -m MODULE` (the module's own command line, through `mcpref.run`),
bound to 127.0.0.1 only, on a port picked by `free_port`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from .http1 import HOST, post
from .messages import TOOLS_CALL, Call

ROOT = Path(__file__).resolve().parent.parent
#: How the benchmark runs every uvicorn: one worker, uvloop and httptools, no access log.
UVICORN_FLAGS = ("--loop", "uvloop", "--http", "httptools", "--log-level", "warning")


def free_port() -> int:
    """A loopback port nothing listens on right now (the kernel's pick), for a server to bind."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """One server process and its log. `cpu` pins it with taskset; `wrapper` runs it under a
    tool (callgrind); `env` adds to the environment; `options` follow the command line."""

    def __init__(
        self,
        app: str,
        *,
        own_main: bool = False,
        options: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        cpu: int | None = None,
        wrapper: Sequence[str] = (),
        label: str | None = None,
    ) -> None:
        self.label = label or app
        self.port = free_port()
        self.base_url = f"http://{HOST}:{self.port}"
        self.url = f"{self.base_url}/mcp"
        if own_main:  # the module's own command line, through mcpref.run
            command = [sys.executable, "-m", app.partition(":")[0]]
        else:
            command = [sys.executable, "-m", "uvicorn", app, "--no-access-log"]
        command += ["--host", HOST, "--port", str(self.port), *options]
        pinned = ["taskset", "-c", str(cpu)] if cpu is not None else []
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process; closed by stop()
        self.started = time.perf_counter()
        # taskset and the wrappers exec the server, so the pid is the server's own.
        self.proc = subprocess.Popen(
            [*pinned, *wrapper, *command],
            cwd=ROOT,
            env={**os.environ, **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, call: Call | None = TOOLS_CALL, timeout: float = 30.0) -> float:
        """Poll until the server answers `call` correctly (with `call=None`, until it accepts a
        connection); the seconds since the process was spawned."""
        deadline = self.started + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.label} exited with {self.proc.returncode}: {self.log()[-2000:]}")
            try:
                if call is None:
                    socket.create_connection((HOST, self.port), timeout=1).close()
                    return time.perf_counter() - self.started
                status, body = post(self.port, call)
            except OSError:
                time.sleep(0.002)
                continue
            if status == 200 and call.expect.encode() in body:
                return time.perf_counter() - self.started
            raise RuntimeError(f"{self.label} answered {status}: {body[:300]!r}")
        raise RuntimeError(f"{self.label} did not answer within {timeout}s: {self.log()[-2000:]}")

    def log(self) -> str:
        """Everything the server wrote to stdout and stderr so far."""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def cpu_seconds(self) -> float:
        """User plus system CPU time the server has used so far."""
        fields = self._proc_file("stat").rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        """Resident memory now."""
        return self._status_kib("VmRSS") / 1024

    def peak_rss_mib(self) -> float:
        """The most memory the server has held resident (the kernel's high-water mark, VmHWM)."""
        return self._status_kib("VmHWM") / 1024

    def _status_kib(self, field: str) -> int:
        for line in self._proc_file("status").splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
        raise RuntimeError(f"no {field} for {self.label}")

    def _proc_file(self, name: str) -> str:
        try:
            return Path(f"/proc/{self.pid}/{name}").read_text()
        except OSError:
            raise RuntimeError(f"{self.label} is gone (exit {self.proc.poll()}): {self.log()[-2000:]}") from None

    def stop(self) -> None:
        """SIGTERM, as a process manager sends it; SIGKILL if it has not ended 10 s later."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def server_processes(
    app: str, envs: Sequence[Mapping[str, str]], *, own_main: bool = False, timeout: float = 30
) -> Iterator[list[ServerProcess]]:
    """Start one server per entry of `envs` (extra environment for each), all at once, wait until
    each accepts connections, and stop them all on the way out."""
    with ExitStack() as stack:
        servers = [stack.enter_context(ServerProcess(app, own_main=own_main, env=env)) for env in envs]
        for server in servers:
            server.wait_ready(None, timeout)
        yield servers


@dataclass(frozen=True)
class Spec:
    """A server the benchmark can start: a label for the table and the ASGI app to run."""

    key: str
    label: str
    app: str  # "module:attribute"
    #: Run `python -m MODULE --port N` (the module's own command line) instead of the uvicorn CLI.
    own_main: bool = False
    #: Extra options for the module's own command line (`own_main` only).
    options: tuple[str, ...] = ()

    def start(self, cpu: int, *, wrapper: Sequence[str] = (), env: Mapping[str, str] | None = None) -> ServerProcess:
        """This server pinned to `cpu`, run as the benchmark runs every server."""
        options = self.options if self.own_main else UVICORN_FLAGS
        return ServerProcess(
            self.app, own_main=self.own_main, options=options, env=env, cpu=cpu, wrapper=wrapper, label=self.label
        )


def cold_start(spec: Spec, cpu: int) -> float:
    """Seconds from spawning the server to its first correct tools/call answer."""
    with spec.start(cpu) as server:
        return server.wait_ready()


def import_seconds(module: str, cpu: int) -> float:
    """Wall time of `python -c "import MODULE"` less that of `python -c pass`, pinned to `cpu`."""

    def run(code: str) -> float:
        start = time.perf_counter()
        subprocess.run(["taskset", "-c", str(cpu), sys.executable, "-c", code], check=True, env=_no_bytecode_writes())
        return time.perf_counter() - start

    return run(f"import {module}") - run("pass")


def _no_bytecode_writes() -> dict[str, str]:
    return {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
