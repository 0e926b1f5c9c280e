"""Server processes: start one pinned to a CPU, wait until it answers correctly, read its memory.

Every server runs the same way: one uvicorn worker (a process, no `--workers`), uvloop and
httptools, no access log, log level warning, bound to 127.0.0.1 only.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from .messages import TOOLS_CALL, Call

HOST = "127.0.0.1"


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


UVICORN_FLAGS = ["--loop", "uvloop", "--http", "httptools", "--no-access-log", "--log-level", "warning"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class ServerProcess:
    def __init__(self, spec: Spec, cpu: int, port: int | None = None, wrapper: list[str] | None = None) -> None:
        self.spec = spec
        self.port = port or free_port()
        self.url = f"http://{HOST}:{self.port}/mcp"
        if spec.own_main:
            command = [sys.executable, "-m", spec.app.partition(":")[0], "--port", str(self.port), *spec.options]
        else:
            command = [sys.executable, "-m", "uvicorn", spec.app, "--host", HOST, "--port", str(self.port)]
            command += UVICORN_FLAGS
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process; closed by stop()
        # taskset execs the server, so the pid is the server's own.
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            ["taskset", "-c", str(cpu), *(wrapper or []), *command],
            stdin=subprocess.DEVNULL,
            stdout=self.log,
            stderr=self.log,
        )

    def wait_ready(self, call: Call = TOOLS_CALL, timeout: float = 30.0) -> float:
        """Poll until the server answers `call` correctly; the seconds since the process was spawned."""
        deadline = self.started + timeout
        while time.perf_counter() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.spec.label} exited with {self.proc.returncode}: {self.log_tail()}")
            try:
                status, body = post(self.port, call)
            except OSError:
                time.sleep(0.002)
                continue
            if status == 200 and call.expect.encode() in body:
                return time.perf_counter() - self.started
            raise RuntimeError(f"{self.spec.label} answered {status}: {body[:300]!r}")
        raise RuntimeError(f"{self.spec.label} did not answer within {timeout}s")

    def log_tail(self, size: int = 2000) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-size:]

    def cpu_seconds(self) -> float:
        """User plus system CPU time the server has used so far."""
        with open(f"/proc/{self.proc.pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss_mib(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        raise RuntimeError("no VmRSS")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def post(port: int, call: Call, timeout: float = 5.0) -> tuple[int, bytes]:
    """One request on a fresh connection, read to the end (the server closes it)."""
    head = ["POST /mcp HTTP/1.1", f"Host: {HOST}:{port}", f"Content-Length: {len(call.body)}", "Connection: close"]
    head += [f"{name}: {value}" for name, value in call.headers.items()]
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + call.body)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    response = b"".join(chunks)
    status = int(response.split(b" ", 2)[1])
    return status, response.partition(b"\r\n\r\n")[2]


def cold_start(spec: Spec, cpu: int) -> float:
    """Seconds from spawning the server to its first correct tools/call answer."""
    with ServerProcess(spec, cpu) as server:
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
