"""A bounded load run on loopback: `scripts/load` (or `python -m tests.robustness.load`).

It starts one real `uvicorn` process of `examples.robustness_server`, then

1. opens `--listeners` `subscriptions/listen` streams and waits for every acknowledgement;
2. sends `--requests` `tools/call` requests, `--concurrency` at a time, and stops early after
   `--seconds`;
3. calls `touch` once, and waits until every listener has received the `resources/updated`
   notification it subscribed to;
4. closes everything and prints requests, errors, notifications, latency and the server
   process's peak resident memory (VmHWM).

It exits 1 if anything went wrong (an error, a missing acknowledgement or notification), so a
smoke test can run it with tiny numbers. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx

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
    peak_rss_kib: int = 0


def _post(method: str, params: dict[str, Any], request_id: int) -> tuple[bytes, dict[str, str]]:
    params = {**params, "_meta": META}
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}).encode()
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, **request_headers(method, params)}
    return body, headers


async def call_tool(
    http: httpx.AsyncClient, tally: Tally, request_id: int, name: str, arguments: dict[str, Any]
) -> None:
    body, headers = _post("tools/call", {"name": name, "arguments": arguments}, request_id)
    started = time.perf_counter()
    try:
        response = await http.post("/mcp", content=body, headers=headers)
        message = response.json()
        if response.status_code != 200 or "result" not in message or message["result"].get("isError"):
            tally.errors.append(f"{response.status_code}: {response.text[:200]}")
    except (httpx.HTTPError, ValueError) as exc:
        tally.errors.append(f"{type(exc).__name__}: {exc}")
    tally.latencies.append(time.perf_counter() - started)
    tally.requests += 1


async def listen(
    http: httpx.AsyncClient, tally: Tally, request_id: int, ready: asyncio.Event, heard: asyncio.Event
) -> None:
    """One listen stream: count its acknowledgement and its `resources/updated` notification."""
    body, headers = _post(
        "subscriptions/listen", {"notifications": {"resourceSubscriptions": [GREETING_URI]}}, request_id
    )
    try:
        async with http.stream("POST", "/mcp", content=body, headers=headers) as response:
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                method = json.loads(line[5:]).get("method")
                if method == "notifications/subscriptions/acknowledged":
                    tally.acknowledged += 1
                    ready.set()
                elif method == "notifications/resources/updated":
                    tally.notified += 1
                    heard.set()
    except httpx.HTTPError as exc:
        tally.errors.append(f"listen {request_id}: {type(exc).__name__}: {exc}")
    finally:
        ready.set()


async def run(server: ServerProcess, requests: int, concurrency: int, listeners: int, seconds: float) -> Tally:
    tally = Tally()
    limits = httpx.Limits(max_connections=listeners + concurrency + 1, max_keepalive_connections=concurrency + 1)
    async with httpx.AsyncClient(base_url=server.url, timeout=30, limits=limits) as http:
        readies = [asyncio.Event() for _ in range(listeners)]
        heards = [asyncio.Event() for _ in range(listeners)]
        streams = [
            asyncio.create_task(listen(http, tally, 1_000_000 + n, readies[n], heards[n])) for n in range(listeners)
        ]
        await asyncio.wait_for(asyncio.gather(*(ready.wait() for ready in readies)), timeout=60)

        started = time.monotonic()
        deadline = started + seconds
        next_id = iter(range(1, requests + 1))

        async def worker() -> None:
            for request_id in next_id:
                if time.monotonic() > deadline:
                    return
                await call_tool(http, tally, request_id, "echo", {"message": f"load {request_id}"})

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        tally.calling_seconds = time.monotonic() - started

        await call_tool(http, tally, requests + 1, "touch", {"uri": GREETING_URI})
        try:
            await asyncio.wait_for(asyncio.gather(*(heard.wait() for heard in heards)), timeout=30)
        except TimeoutError:
            tally.errors.append(f"only {tally.notified} of {listeners} listeners heard the update")
        # VmHWM is the kernel's high-water mark, so one look at the end sees the peak.
        tally.peak_rss_kib = server.peak_rss_kib()
        for stream in streams:
            stream.cancel()
        await asyncio.gather(*streams, return_exceptions=True)
    return tally


def report(tally: Tally, listeners: int) -> str:
    latencies = sorted(tally.latencies) or [0.0]
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    lines = [
        f"requests: {tally.requests}",
        f"errors: {len(tally.errors)}",
        f"listen streams: {listeners} (acknowledged {tally.acknowledged}, notified {tally.notified})",
        f"calling: {tally.calling_seconds:.1f} s ({tally.requests / max(tally.calling_seconds, 1e-9):.0f} requests/s)",
        f"latency: p50 {statistics.median(latencies) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms",
        f"server peak RSS: {tally.peak_rss_kib / 1024:.1f} MiB",
    ]
    lines += [f"  error: {error}" for error in tally.errors[:10]]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Load one uvicorn process of the robustness server on loopback.")
    parser.add_argument("--requests", type=int, default=5000, help="tools/call requests to send (default 5000)")
    parser.add_argument("--concurrency", type=int, default=50, help="requests in flight at once (default 50)")
    parser.add_argument("--listeners", type=int, default=300, help="open subscriptions/listen streams (default 300)")
    parser.add_argument("--seconds", type=float, default=60, help="stop sending after this long (default 60)")
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
