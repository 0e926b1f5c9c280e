"""A hostile mix: `scripts/load --hostile`. Normal traffic alone, then the same traffic beside
clients that are slow, oversized and greedy on purpose, against one server process run as
`mcpref.run` runs it (`python -m mcpref.examples.robustness_server`, with `mcpref.limits`).

Attackers, all at once, for the second phase:

- slowloris: connections that send a header line every half second and never finish the head;
- slow bodies: a whole head, then a body a byte at a time;
- oversized heads: 64 KiB of headers, again and again (431);
- large bodies: 900 KB of nested brackets (parsed off the loop, 400) and 5 MB declared (413);
- a listen flood: callers with and without made-up `Authorization` headers opening far more streams
  than their share (the server verifies no token, so all of them are one peer and share one share).

It prints the normal requests' p50/p99 alone and under attack, their 5xx count, what the
attackers were answered, and the server's peak RSS; it exits 1 if a normal request failed, was
answered 5xx, or if p99 under attack is over `--p99-factor` (3) times p99 alone. Nothing leaves
127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import multiprocessing
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .http1 import HOST, Connection, encode
from .messages import ACCEPT, request
from .procs import ServerProcess, server_processes

APP = "mcpref.examples.robustness_server:app"
#: The start of a request head with a JSON body, for the attackers that go wrong after it.
JSON_HEAD = f"POST /mcp HTTP/1.1\r\nHost: {HOST}\r\nContent-Type: application/json\r\nAccept: {ACCEPT}\r\n"


@dataclass
class Normal:
    latencies: list[float] = field(default_factory=list)
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    failures: list[str] = field(default_factory=list)

    def p(self, quantile: float) -> float:
        ordered = sorted(self.latencies) or [0.0]
        return ordered[min(len(ordered) - 1, int(len(ordered) * quantile))]


async def normal_traffic(server: ServerProcess, concurrency: int, seconds: float) -> Normal:
    """`tools/call` echo over `concurrency` keep-alive connections for `seconds`."""
    normal = Normal()
    deadline = time.monotonic() + seconds

    async def worker(number: int) -> None:
        connection = await Connection.open(server.port)
        request_id = number * 1_000_000
        try:
            while time.monotonic() < deadline:
                request_id += 1
                started = time.perf_counter()
                try:
                    params = {"name": "echo", "arguments": {"message": "hi"}}
                    status, message = await connection.json(
                        request("tools/call", "tools/call", params, "", "echo", request_id)
                    )
                except (OSError, asyncio.IncompleteReadError, ValueError, KeyError) as exc:
                    normal.failures.append(f"{type(exc).__name__}: {exc}")
                    connection.close()
                    connection = await Connection.open(server.port)
                    continue
                normal.latencies.append(time.perf_counter() - started)
                normal.statuses[status] += 1
                if status != 200 or "result" not in message:
                    normal.failures.append(f"{status}: {json.dumps(message)[:200]}")
        finally:
            connection.close()

    await asyncio.gather(*(worker(n) for n in range(concurrency)))
    return normal


class Attack:
    """The attackers' side: what each kind was answered."""

    def __init__(self, port: int, stop_flag: Any) -> None:
        self.port = port
        self.answers: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        self.stop_flag = stop_flag  # a multiprocessing.Event the parent sets
        self.stopping = asyncio.Event()

    async def open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection(HOST, self.port)

    def note(self, kind: str, head: bytes) -> None:
        status = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/1.1 ") else "closed"
        self.answers[kind][status] += 1

    async def repeat(self, kind: str, once: Callable[[], object]) -> None:
        while not self.stopping.is_set():
            try:
                await once()  # type: ignore[misc]
            except (OSError, asyncio.IncompleteReadError):
                self.answers[kind]["reset"] += 1
            await asyncio.sleep(0.01)

    async def slowloris(self) -> None:
        reader, writer = await self.open()
        writer.write(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        reading = asyncio.ensure_future(reader.read(4096))
        line = 0
        while not reading.done() and not self.stopping.is_set():
            line += 1
            writer.write(b"X-Slow-%d: 1\r\n" % line)
            await asyncio.wait({reading}, timeout=0.5)
        self.note("slowloris", reading.result() if reading.done() else b"")
        reading.cancel()
        writer.close()

    async def slow_body(self) -> None:
        reader, writer = await self.open()
        head = JSON_HEAD
        writer.write(f"{head}Content-Length: 100000\r\n\r\n".encode())
        reading = asyncio.ensure_future(reader.read(4096))
        while not reading.done() and not self.stopping.is_set():
            writer.write(b" ")
            await asyncio.wait({reading}, timeout=0.5)
        self.note("slow body", reading.result() if reading.done() else b"")
        reading.cancel()
        writer.close()

    async def big_head(self) -> None:
        reader, writer = await self.open()
        padding = "".join(f"X-Pad-{n}: {'a' * 1000}\r\n" for n in range(64))
        writer.write(f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{padding}\r\n".encode())
        self.note("oversized head", await reader.read(4096))
        writer.close()

    async def big_body(self, body: bytes, declared: int, kind: str) -> None:
        reader, writer = await self.open()
        head = JSON_HEAD
        head += "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n"
        writer.write(f"{head}Content-Length: {declared}\r\n\r\n".encode() + body)
        self.note(kind, await reader.readuntil(b"\r\n\r\n"))
        writer.close()

    async def listen(self, caller: str | None) -> None:
        reader, writer = await self.open()
        call = request(
            "subscriptions/listen", "subscriptions/listen", {"notifications": {"toolsListChanged": True}}, ""
        )
        writer.write(encode(call, self.port, {"Authorization": f"Bearer {caller}"} if caller else None))
        answer = await reader.readuntil(b"\r\n\r\n")
        self.note("listen flood", answer)
        if b" 200 " in answer.split(b"\r\n", 1)[0]:
            await self.stopping.wait()  # hold the stream for the whole attack
        writer.close()

    async def run(self, slowloris: int, slow_bodies: int, listeners: int) -> None:
        nested = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":' + b"[" * 900_000 + b"}"
        tasks = [asyncio.ensure_future(self.repeat("slowloris", self.slowloris)) for _ in range(slowloris)]
        tasks += [asyncio.ensure_future(self.repeat("slow body", self.slow_body)) for _ in range(slow_bodies)]
        tasks += [asyncio.ensure_future(self.repeat("oversized head", self.big_head)) for _ in range(2)]
        nested_body = lambda: self.big_body(nested, len(nested), "nested body")  # noqa: E731
        huge_body = lambda: self.big_body(b"[", 5_000_000, "5 MB body")  # noqa: E731
        tasks.append(asyncio.ensure_future(self.repeat("nested body", nested_body)))
        tasks.append(asyncio.ensure_future(self.repeat("5 MB body", huge_body)))
        callers = [None, "mallory", "eve", "trudy"]
        tasks += [asyncio.ensure_future(self.listen(callers[n % len(callers)])) for n in range(listeners)]
        while not self.stop_flag.is_set():
            await asyncio.sleep(0.1)
        self.stopping.set()
        await asyncio.sleep(0.1)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _attack(port: int, counts: tuple[int, int, int], stop_flag: Any, results: Any) -> None:
    """The attackers, in a process of their own, so that their work does not slow the process
    that times the normal requests."""
    attack = Attack(port, stop_flag)
    asyncio.run(attack.run(*counts))
    results.put({kind: dict(answers) for kind, answers in attack.answers.items()})


def run(server: ServerProcess, args: argparse.Namespace) -> tuple[Normal, Normal, dict[str, dict[str, int]]]:
    asyncio.run(normal_traffic(server, args.concurrency, 1))  # warm up
    alone = asyncio.run(normal_traffic(server, args.concurrency, args.seconds))
    context = multiprocessing.get_context("spawn")
    stop_flag, results = context.Event(), context.Queue()
    counts = (args.slowloris, args.slow_bodies, args.listeners)
    attacker = context.Process(target=_attack, args=(server.port, counts, stop_flag, results))
    attacker.start()
    time.sleep(3)  # let the attackers settle in
    under_attack = asyncio.run(normal_traffic(server, args.concurrency, args.seconds))
    stop_flag.set()
    answers = results.get(timeout=60)
    attacker.join(timeout=30)
    return alone, under_attack, answers


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Normal traffic alone, then beside hostile clients.")
    parser.add_argument("--seconds", type=float, default=8, help="seconds of normal traffic per phase (default 8)")
    parser.add_argument("--concurrency", type=int, default=8, help="normal connections (default 8)")
    parser.add_argument("--slowloris", type=int, default=50, help="slowloris connections (default 50)")
    parser.add_argument("--slow-bodies", type=int, default=20, help="slow-body connections (default 20)")
    parser.add_argument("--listeners", type=int, default=400, help="listen streams attempted (default 400)")
    parser.add_argument("--p99-factor", type=float, default=3.0, help="allowed p99 under attack / alone (default 3)")
    args = parser.parse_args(argv)
    with server_processes(APP, [{}], own_main=True) as (server,):
        print(f"loading {server.url} (pid {server.pid}), {args.seconds:g} s alone, then under attack", flush=True)
        alone, under_attack, answers = run(server, args)
        peak = server.peak_rss_mib()
        traceback = "Traceback" in server.log()
    normal_5xx = sum(count for status, count in under_attack.statuses.items() if status >= 500)
    factor = under_attack.p(0.99) / max(alone.p(0.99), 1e-9)
    for name, normal in (("alone", alone), ("under attack", under_attack)):
        p50 = statistics.median(normal.latencies or [0])
        print(
            f"normal {name}: {len(normal.latencies)} requests, p50 {p50 * 1000:.1f} ms, "
            f"p99 {normal.p(0.99) * 1000:.1f} ms, failures {len(normal.failures)}"
        )
    print(f"p99 under attack / alone: {factor:.2f} (target <= {args.p99_factor:g})")
    print(f"normal requests answered 5xx under attack: {normal_5xx} (target 0)")
    print("attackers were answered:")
    for kind, answered in answers.items():
        print(f"  {kind}: " + ", ".join(f"{status} x{count}" for status, count in sorted(answered.items())))
    print(f"server peak RSS: {peak:.1f} MiB")
    for failure in (alone.failures + under_attack.failures)[:10]:
        print(f"  failure: {failure}")
    if traceback:
        print("the server logged a traceback")
    healthy = not alone.failures and not under_attack.failures and normal_5xx == 0 and not traceback
    return 0 if healthy and factor <= args.p99_factor else 1
