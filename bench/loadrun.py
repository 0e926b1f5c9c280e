"""A bounded load run on loopback: `scripts/load` (or `python -m bench.loadrun`).

It starts one real `uvicorn` process of `mcpref.examples.robustness_server`, then

1. opens `--listeners` `subscriptions/listen` streams and waits for every acknowledgement;
2. sends `--requests` `tools/call` requests over `--concurrency` keep-alive connections, and
   stops early after `--seconds`;
3. calls `touch` once, and waits until every listener has received the `resources/updated`
   notification it subscribed to;
4. closes everything and prints requests, errors, notifications, throughput, latency, the
   server's CPU time and its peak resident memory (VmHWM).

It exits 1 if anything went wrong (an error, a missing acknowledgement or notification), so a
smoke test can run it with tiny numbers (tests/robustness/test_load_smoke.py). Nothing leaves
127.0.0.1; the client side is `bench.http1`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mcpref.examples.robustness_server import GREETING_URI

from .http1 import Connection
from .messages import request
from .procs import ServerProcess, server_processes

APP = "mcpref.examples.robustness_server:app"


@dataclass
class Tally:
    requests: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    acknowledged: int = 0
    notified: int = 0
    calling_seconds: float = 0.0
    server_cpu_seconds: float = 0.0
    peak_rss_mib: float = 0.0


async def call_tool(
    connection: Connection, tally: Tally, request_id: int, name: str, arguments: dict[str, Any]
) -> None:
    started = time.perf_counter()
    try:
        call = request("tools/call", "tools/call", {"name": name, "arguments": arguments}, "", name, request_id)
        status, message = await connection.json(call)
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
    connection = await Connection.open(server.port)
    try:
        params = {"notifications": {"resourceSubscriptions": [GREETING_URI]}}
        call = request("subscriptions/listen", "subscriptions/listen", params, "", request_id=request_id)
        # Each listener its own caller, as separate clients are: one caller holds a few slots at most.
        caller = {"Authorization": f"Bearer listener-{request_id}"}
        async for message in connection.events(call, caller):
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

    connections = [await Connection.open(server.port) for _ in range(concurrency)]
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
    tally.peak_rss_mib = server.peak_rss_mib()
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
        f"server peak RSS: {tally.peak_rss_mib:.1f} MiB",
    ]
    lines += [f"  error: {error}" for error in tally.errors[:10]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Load one uvicorn process of the robustness server on loopback.")
    parser.add_argument("--requests", type=int, default=10000, help="tools/call requests to send (default 10000)")
    parser.add_argument("--concurrency", type=int, default=50, help="connections sending at once (default 50)")
    parser.add_argument("--listeners", type=int, default=500, help="open subscriptions/listen streams (default 500)")
    parser.add_argument("--seconds", type=float, default=60, help="stop sending after this long (default 60)")
    parser.add_argument("--hostile", action="store_true", help="see bench/hostile.py (own options)")
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--hostile" in argv:
        from . import hostile

        return hostile.main([arg for arg in argv if arg != "--hostile"])
    args = parser.parse_args(argv)
    with server_processes(APP, [{}]) as (server,):
        print(f"loading {server.url} (pid {server.pid}) ...", flush=True)
        tally = asyncio.run(run(server, args.requests, args.concurrency, args.listeners, args.seconds))
        if "Traceback" in server.log():
            tally.errors.append("the server logged a traceback:\n" + server.log()[-2000:])
    print(report(tally, args.listeners))
    healthy = not tally.errors and tally.acknowledged == tally.notified == args.listeners
    return 0 if healthy else 1


if __name__ == "__main__":
    raise SystemExit(main())
