"""Instructions per request, counted by callgrind: the same count on a quiet or a busy machine.

Throughput on a shared 2-core box moves with whatever else runs; the number of instructions the
server executes per request does not. Each server runs under `valgrind --tool=callgrind`; once
it answers, its counters are zeroed, `count` requests go one after another on one keep-alive
connection (each checked), and the counters are dumped. Only user-space instructions are
counted: the kernel's share of a request (the socket calls) is about the same for every server
and is left out, so a ratio of these counts is a little harsher than the CPU-time ratio.
"""

from __future__ import annotations

import asyncio
import glob
import os
import shutil
import subprocess
import tempfile
import time

from .http1 import Connection, encode
from .messages import Call
from .procs import Spec


def available() -> bool:
    return shutil.which("valgrind") is not None and shutil.which("callgrind_control") is not None


def _sequential(port: int, call: Call, count: int) -> None:
    """Send `count` requests one after another on one connection, checking each response."""

    async def send() -> None:
        connection = await Connection.open(port)
        try:
            for _ in range(count):
                status, body = await asyncio.wait_for(connection.exchange(request), timeout=120)
                if status != 200 or call.expect.encode() not in body:
                    raise RuntimeError(f"bad response under callgrind: {status} {body[:200]!r}")
        finally:
            connection.close()

    request = encode(call, port)
    asyncio.run(send())


def per_request(spec: Spec, calls: list[Call], count: int, cpu: int) -> dict[str, float]:
    """Instructions the server executes per request, for each call, on one server process."""
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "callgrind.out")
        wrapper = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        counts: dict[str, float] = {}
        with spec.start(cpu, wrapper=wrapper) as server:
            server.wait_ready(calls[0], timeout=300)
            for call in calls:
                _sequential(server.port, call, 20)  # warm this path up before counting
                _control("-z", server.pid)
                _sequential(server.port, call, count)
                before = set(glob.glob(out + ".*"))
                _control("-d", server.pid)
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
