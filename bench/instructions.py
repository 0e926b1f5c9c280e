"""Instructions per request, counted by callgrind: the same count on a quiet or a busy machine.

Throughput on a shared 2-core box moves with whatever else runs; the number of instructions the
server executes per request does not. Each server runs under `valgrind --tool=callgrind`; once
it answers, its counters are zeroed, `count` requests go one after another on one keep-alive
connection (each checked), and the counters are dumped. Only user-space instructions are
counted: the kernel's share of a request (the socket calls) is about the same for every server
and is left out, so a ratio of these counts is a little harsher than the CPU-time ratio.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time

from .messages import Call
from .procs import HOST, ServerProcess, Spec


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def _request(port: int, call: Call) -> bytes:
    head = ["POST /mcp HTTP/1.1", f"Host: {HOST}:{port}", f"Content-Length: {len(call.body)}"]
    head += [f"{name}: {value}" for name, value in call.headers.items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + call.body


def _sequential(port: int, call: Call, count: int) -> None:
    """Send `count` requests one after another on one connection, checking each response."""
    request = _request(port, call)
    with socket.create_connection((HOST, port), timeout=120) as sock, sock.makefile("rb") as stream:
        for _ in range(count):
            sock.sendall(request)
            status = stream.readline()
            length, chunked = 0, False
            while (line := stream.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                length = int(value) if name.lower() == "content-length" else length
                chunked = chunked or (name.lower() == "transfer-encoding" and "chunked" in value)
            if chunked:
                body = b""
                while size := int(stream.readline().strip(), 16):
                    body += stream.read(size)
                    stream.readline()
                stream.readline()
            else:
                body = stream.read(length)
            if b" 200 " not in status or call.expect.encode() not in body:
                raise RuntimeError(f"bad response under callgrind: {status!r} {body[:200]!r}")


def per_request(spec: Spec, calls: list[Call], count: int, cpu: int) -> dict[str, float]:
    """Instructions the server executes per request, for each call, on one server process."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        counts: dict[str, float] = {}
        with ServerProcess(spec, cpu, wrapper=wrapper) as server:
            server.wait_ready(calls[0], timeout=300)
            for call in calls:
                _sequential(server.port, call, 20)  # warm this path up before counting
                _control("-z", server.proc.pid)
                _sequential(server.port, call, count)
                before = set(glob.glob(out + ".*"))
                _control("-d", server.proc.pid)
                counts[call.name] = _summary(_new_file(out, before)) / count
        return counts


def _new_file(prefix: str, before: set[str]) -> str:
    for _ in range(200):
        new = set(glob.glob(prefix + ".*")) - before
        if new:
            time.sleep(0.2)  # let callgrind finish writing it
            return new.pop()
        time.sleep(0.05)
    raise RuntimeError("callgrind wrote no dump")


def _control(flag: str, pid: int) -> None:
    subprocess.run(["callgrind_control", flag, str(pid)], check=True, capture_output=True, timeout=120)


def _summary(path: str) -> int:
    with open(path) as dump:
        for line in dump:
            if line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"no summary in {path}")
