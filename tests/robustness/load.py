"""A bounded load run on loopback: `scripts/load` (or `python -m tests.robustness.load`).

It starts one real `uvicorn` process of `examples.robustness_server`, then

1. opens `--listeners` `subscriptions/listen` streams and waits for every acknowledgement;
2. sends `--requests` `tools/call` requests over `--concurrency` keep-alive connections, and
   stops early after `--seconds`;
3. calls `touch` once, and waits until every listener has received the `resources/updated`
   notification it subscribed to;
4. closes everything and prints requests, errors, notifications, throughput, latency, the
   server's CPU time and its peak resident memory (VmHWM).

It exits 1 if anything went wrong (an error, a missing acknowledgement or notification), so a
smoke test can run it with tiny numbers. Nothing leaves 127.0.0.1.

The client side is a few lines of HTTP/1.1 on asyncio streams rather than httpx: on two cores
httpx's async pool spends several milliseconds per request once dozens are in flight (about
150 requests/s here), so it would measure itself instead of the server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from examples.robustness_server import GREETING_URI
from mcpref.headers import request_headers
from tests.conftest import ACCEPT, META
from tests.robustness.processes import ServerProcess, uvicorn_processes

APP = "examples.robustness_server:app"


@dataclass
class Tally:
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    acknowledged: int = 0
    notified: int = 0
    calling_seconds: float = 0.0
    server_cpu_seconds: float = 0.0
    peak_rss_kib: int = 0


class Connection:
    """One keep-alive HTTP/1.1 connection: a request is one write, an answer is read by its framing."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, server: ServerProcess) -> Connection:
        host, port = server.url.removeprefix("http://").split(":")
        return cls(*await asyncio.open_connection(host, int(port)))

    async def send(
        self, method: str, params: dict[str, Any], request_id: int, extra: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str]]:
        """Send one MCP request with the headers a correct client sends; read the status and headers."""
        params = {**params, "_meta": META}
        body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
        headers = {
            "Host": "127.0.0.1",
            "Content-Type": "application/json",
            "Accept": ACCEPT,
            "Content-Length": str(len(body)),
            **request_headers(method, params),
            **(extra or {}),
        }
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.writer.write(f"POST /mcp HTTP/1.1\r\n{head}\r\n".encode() + body)
        status_line, *lines = (await self.reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        fields = dict(line.split(": ", 1) for line in lines if line)
        return int(status_line.split()[1]), {name.lower(): value for name, value in fields.items()}

    async def json(self, method: str, params: dict[str, Any], request_id: int) -> tuple[int, dict[str, Any]]:
        status, headers = await self.send(method, params, request_id)
        return status, json.loads(await self.reader.readexactly(int(headers["content-length"])))

    async def events(
        self, method: str, params: dict[str, Any], request_id: int, extra: dict[str, str] | None = None
    ) -> AsyncIterator[dict[str, Any]]:
        """The JSON-RPC messages of a chunked SSE answer, as they arrive."""
        status, headers = await self.send(method, params, request_id, extra)
        if status != 200 or headers.get("transfer-encoding") != "chunked":
            raise ConnectionError(f"listen answered {status} {headers}")
        pending = b""
        while size := int(await self.reader.readuntil(b"\r\n"), 16):
            pending += (await self.reader.readexactly(size + 2))[:-2]
            *lines, pending = pending.split(b"\n")
            for line in lines:
                if line.startswith(b"data:"):
                    yield json.loads(line[5:])

    def close(self) -> None:
        self.writer.close()


async def call_tool(
    connection: Connection, tally: Tally, request_id: int, name: str, arguments: dict[str, Any]
) -> None:
    started = time.perf_counter()
    try:
        status, message = await connection.json("tools/call", {"name": name, "arguments": arguments}, request_id)
        if status != 200 or "result" not in message or message["result"].get("isError"):
            tally.errors.append(f"{status}: {json.dumps(message)[:200]}")
    except (OSError, asyncio.IncompleteReadError, ValueError, KeyError) as exc:
        tally.errors.append(f"{type(exc).__name__}: {exc}")
    tally.latencies.append(time.perf_counter() - started)
    tally.requests += 1


async def listen(
    server: ServerProcess, tally: Tally, request_id: int, ready: asyncio.Event, heard: asyncio.Event
) -> None:
    """One listen stream: count its acknowledgement and its `resources/updated` notification."""
    connection = await Connection.open(server)
    try:
        params = {"notifications": {"resourceSubscriptions": [GREETING_URI]}}
        # Each listener its own caller, as separate clients are: one caller holds a few slots at most.
        caller = {"Authorization": f"Bearer listener-{request_id}"}
        async for message in connection.events("subscriptions/listen", params, request_id, caller):
            if message.get("method") == "notifications/subscriptions/acknowledged":
                tally.acknowledged += 1
                ready.set()
            elif message.get("method") == "notifications/resources/updated":
                tally.notified += 1
                heard.set()
    except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
        tally.errors.append(f"listen {request_id}: {type(exc).__name__}: {exc}")
    finally:
        ready.set()
        connection.close()


async def run(server: ServerProcess, requests: int, concurrency: int, listeners: int, seconds: float) -> Tally:
    tally = Tally()
    readies = [asyncio.Event() for _ in range(listeners)]
    heards = [asyncio.Event() for _ in range(listeners)]
    streams = [
        asyncio.create_task(listen(server, tally, 1_000_000 + n, readies[n], heards[n])) for n in range(listeners)
    ]
    await asyncio.wait_for(asyncio.gather(*(ready.wait() for ready in readies)), timeout=60)

    connections = [await Connection.open(server) for _ in range(concurrency)]
    started, cpu_before = time.monotonic(), server.cpu_seconds()
    deadline = started + seconds
    next_id = iter(range(1, requests + 1))

    async def worker(connection: Connection) -> None:
        for request_id in next_id:
            if time.monotonic() > deadline:
                return
            await call_tool(connection, tally, request_id, "echo", {"message": f"load {request_id}"})

    await asyncio.gather(*(worker(connection) for connection in connections))
    tally.calling_seconds = time.monotonic() - started
    tally.server_cpu_seconds = server.cpu_seconds() - cpu_before

    await call_tool(connections[0], tally, requests + 1, "touch", {"uri": GREETING_URI})
    try:
        await asyncio.wait_for(asyncio.gather(*(heard.wait() for heard in heards)), timeout=30)
    except TimeoutError:
        tally.errors.append(f"only {tally.notified} of {listeners} listeners heard the update")
    # VmHWM is the kernel's high-water mark, so one look at the end sees the peak.
    tally.peak_rss_kib = server.peak_rss_kib()
    for connection in connections:
        connection.close()
    for stream in streams:
        stream.cancel()
    await asyncio.gather(*streams, return_exceptions=True)
    return tally


def report(tally: Tally, listeners: int) -> str:
    latencies = sorted(tally.latencies) or [0.0]
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    calls = max(tally.requests - 1, 1)  # the final touch is not timed with the others
    lines = [
        f"requests: {tally.requests}",
        f"errors: {len(tally.errors)}",
        f"listen streams: {listeners} (acknowledged {tally.acknowledged}, notified {tally.notified})",
        f"calling: {tally.calling_seconds:.1f} s ({calls / max(tally.calling_seconds, 1e-9):.0f} requests/s)",
        f"server CPU while calling: {tally.server_cpu_seconds:.1f} s "
        f"({tally.server_cpu_seconds * 1000 / calls:.2f} ms per request)",
        f"latency: p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms",
        f"server peak RSS: {tally.peak_rss_kib / 1024:.1f} MiB",
    ]
    lines += [f"  error: {error}" for error in tally.errors[:10]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Load one uvicorn process of the robustness server on loopback.")
    parser.add_argument("--requests", type=int, default=10000, help="tools/call requests to send (default 10000)")
    parser.add_argument("--concurrency", type=int, default=50, help="connections sending at once (default 50)")
    parser.add_argument("--listeners", type=int, default=500, help="open subscriptions/listen streams (default 500)")
    parser.add_argument("--seconds", type=float, default=60, help="stop sending after this long (default 60)")
    parser.add_argument("--hostile", action="store_true", help="see tests/robustness/hostile.py (own options)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--hostile" in argv:
        from tests.robustness import hostile

        return hostile.main([arg for arg in argv if arg != "--hostile"])
    args = parser.parse_args(argv)
    with uvicorn_processes(APP, [{}]) as (server,):
        print(f"loading {server.url}/mcp (pid {server.pid}) ...", flush=True)
        tally = asyncio.run(run(server, args.requests, args.concurrency, args.listeners, args.seconds))
        if "Traceback" in server.log():
            tally.errors.append("the server logged a traceback:\n" + server.log()[-2000:])
    print(report(tally, args.listeners))
    healthy = not tally.errors and tally.acknowledged == tally.notified == args.listeners
    return 0 if healthy else 1


if __name__ == "__main__":
    raise SystemExit(main())
