"""Idle `subscriptions/listen` streams: can one worker hold 1,000 of them, and at what memory cost?

Opens `count` listen streams on a fresh mcpref server, waits for every acknowledgement, holds them
idle, measures RSS and a tools/call's throughput while they are open, checks that one stream more
is refused (the hub is bounded), then stops the server and counts the streams that received
their final result (the graceful end the spec asks for on shutdown).

The streams come from several principals, `PER_CALLER` each, since one caller's share of the
slots is bounded. `python -m bench.listen --count 10000` runs it alone, on a server whose slot
and connection limits are raised to fit (the target: one worker holds 10,000 idle streams under
16 KiB each).
"""

from __future__ import annotations

import asyncio
import resource
import signal
import time
from dataclasses import dataclass, replace

from . import load
from .http1 import HOST, encode
from .messages import LISTEN, TOOLS_CALL
from .procs import Spec


@dataclass
class ListenReport:
    count: int
    acknowledged: int
    rss_before_mib: float
    rss_held_mib: float
    rss_after_hold_mib: float
    rate_before: float
    rate_held: float
    refused_status: int | None
    ended_gracefully: int
    end_seconds: float

    @property
    def kib_per_stream(self) -> float:
        return (self.rss_held_mib - self.rss_before_mib) * 1024 / max(self.acknowledged, 1)


#: Listen streams per principal: the server's default share for one caller.
PER_CALLER = 32


def _request(port: int, request_id: int) -> bytes:
    body = LISTEN.body.replace(b'"id":1', f'"id":{request_id}'.encode(), 1)
    caller = {"Authorization": f"Bearer listener-{request_id // PER_CALLER}"}
    return encode(replace(LISTEN, body=body), port, caller)


async def _open(port: int, request_id: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(_request(port, request_id))
    head = await reader.readuntil(b"\r\n\r\n")
    if b" 200 " not in head.split(b"\r\n", 1)[0]:
        return reader, writer, head + await reader.read(4096)
    seen = b""
    while LISTEN.expect.encode() not in seen:
        chunk = await reader.read(4096)
        if not chunk:
            break
        seen += chunk
    return reader, writer, seen


async def _final_result(reader: asyncio.StreamReader, request_id: int) -> bool:
    """Read until the server closes the stream; True if the listen request's result came first."""
    seen = b""
    while chunk := await reader.read(4096):
        seen += chunk
    return f'"id":{request_id},"result"'.encode() in seen


async def _measure(spec: Spec, count: int, hold: float, server_cpu: int, load_cpu: int) -> ListenReport:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 4 * count)), hard))
    server = spec.start(server_cpu)
    try:
        server.wait_ready()
        rate_before = load.run(server.url, TOOLS_CALL, 1, 2, load_cpu).rate
        rss_before = server.rss_mib()
        streams = []
        for start in range(0, count, 100):  # in batches, so the accept backlog never overflows
            streams += await asyncio.gather(*(_open(server.port, i + 1) for i in range(start, min(start + 100, count))))
        acknowledged = sum(LISTEN.expect.encode() in seen for _, _, seen in streams)
        rss_held = server.rss_mib()
        rate_held = load.run(server.url, TOOLS_CALL, 1, 2, load_cpu).rate
        await asyncio.sleep(hold)
        rss_after_hold = server.rss_mib()
        _, extra_writer, extra = await _open(server.port, count + 1)
        extra_writer.close()
        refused = int(extra.split(b" ", 2)[1]) if extra.startswith(b"HTTP/1.1 ") else None
        finals = [asyncio.ensure_future(_final_result(reader, i + 1)) for i, (reader, _, _) in enumerate(streams)]
        started = time.perf_counter()
        server.proc.send_signal(signal.SIGINT)
        ended = sum(await asyncio.wait_for(asyncio.gather(*finals), timeout=30))
        end_seconds = time.perf_counter() - started
        for _, writer, _ in streams:
            writer.close()
    finally:
        server.stop()
    return ListenReport(
        count, acknowledged, rss_before, rss_held, rss_after_hold, rate_before, rate_held, refused, ended, end_seconds
    )


def measure(spec: Spec, count: int, hold: float, server_cpu: int, load_cpu: int) -> ListenReport:
    return asyncio.run(_measure(spec, count, hold, server_cpu, load_cpu))


def main() -> None:
    import argparse

    from .run import LOAD_CPU, OURS_OWN_RUNNER, SERVER_CPU

    parser = argparse.ArgumentParser(description="Hold idle listen streams on one mcpref worker.")
    parser.add_argument("--count", type=int, default=10_000, help="listen streams to hold (default 10000)")
    parser.add_argument("--hold", type=float, default=5, help="seconds to hold them (default 5)")
    args = parser.parse_args()
    spec = replace(
        OURS_OWN_RUNNER,
        options=("--max-listen-streams", str(args.count), "--max-connections", str(args.count + 100)),
    )
    report = measure(spec, args.count, args.hold, SERVER_CPU, LOAD_CPU)
    principals = -(-report.count // PER_CALLER)
    print(
        f"{report.acknowledged} of {report.count} streams acknowledged, from {principals} principals\n"
        f"server RSS: {report.rss_before_mib:.1f} MiB before, {report.rss_held_mib:.1f} MiB holding them, "
        f"{report.rss_after_hold_mib:.1f} MiB after {args.hold:g} s: {report.kib_per_stream:.1f} KiB per stream "
        f"(target < 16)\n"
        f"tools/call while holding them: {report.rate_held:.0f}/s (before: {report.rate_before:.0f}/s)\n"
        f"one stream more: {report.refused_status}; ended with their result on shutdown: "
        f"{report.ended_gracefully} in {report.end_seconds:.1f} s"
    )


if __name__ == "__main__":
    main()
