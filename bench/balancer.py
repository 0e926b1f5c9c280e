"""Many instances behind HAProxy: throughput with one and three instances, and how long a change
notification takes to reach a listener on another instance (bench/balanced.py's deployment).

`python -m bench.balancer` prints, all measured in one run:

- `tools/call` throughput straight to one instance (the baseline), through the balancer to one
  instance, and through the balancer to three; each as a ratio to the baseline;
- the time from sending a change (`test_trigger_tool_change`) to its notification arriving on a
  listen stream, p50 and p99, for a listener on the same instance (the baseline) and for one on
  another instance (through PostgreSQL `NOTIFY`), and their ratio.

Needs HAProxy and PostgreSQL's server binaries (a throwaway cluster, as the tests start). Nothing
is pinned: three instances, HAProxy, PostgreSQL and the load generator share the machine's cores,
which is what bounds the three-instance figure on a small machine.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from typing import Any

from mcpref.client import Client
from tests.tasks import pg

from . import load
from .balanced import balanced
from .messages import request

CALL = request(
    "tools/call", "tools/call", {"name": "test_simple_text", "arguments": {}}, "This is a simple", "test_simple_text"
)
LOAD_CPU = 1


def throughput(dsn: str, seconds: int, connections: int) -> dict[str, float]:
    rates: dict[str, float] = {}
    with balanced(dsn, count=1) as one:
        rates["one instance, direct"] = _rate(one.instances["one"].url, seconds, connections)
        rates["one instance, through HAProxy"] = _rate(one.url, seconds, connections)
    with balanced(dsn, count=3) as three:
        rates["three instances, through HAProxy"] = _rate(three.url, seconds, connections)
    return rates


def _rate(url: str, seconds: int, connections: int) -> float:
    run = load.run(url, CALL, connections, seconds, LOAD_CPU)
    if not run.ok:
        raise RuntimeError(f"{url}: {run.bad} wrong answers, {run.errors} socket errors")
    return run.rate


async def _latencies(trigger_url: str, listen_url: str, samples: int) -> list[float]:
    seconds: list[float] = []
    async with Client(trigger_url) as trigger, Client(listen_url) as listener:
        subscription = listener.listen(tools_list_changed=True)
        await subscription.start()
        notes = aiter(subscription)
        await trigger.call_tool("test_trigger_tool_change", {})  # a first round trip warms both paths
        await asyncio.wait_for(anext(notes), timeout=10)
        for _ in range(samples):
            heard = asyncio.create_task(_arrival(notes))
            started = time.perf_counter()
            await trigger.call_tool("test_trigger_tool_change", {})
            seconds.append(await asyncio.wait_for(heard, timeout=10) - started)
        await subscription.aclose()
    return seconds


async def _arrival(notes: Any) -> float:
    """When the next notification came (not when the caller got round to looking)."""
    await anext(notes)
    return time.perf_counter()


def notification_latency(dsn: str, samples: int) -> dict[str, list[float]]:
    with balanced(dsn, count=3) as deployment:
        one, two = deployment.instances["one"].url, deployment.instances["two"].url
        # Across instances first: the same-instance cell's changes are relayed too, and would still
        # be arriving at the other instance when its listener opened.
        across = asyncio.run(_latencies(one, two, samples))
        return {
            "listener on the same instance": asyncio.run(_latencies(one, one, samples)),
            "listener on another instance": across,
        }


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def report(rates: dict[str, float], latencies: dict[str, list[float]]) -> list[str]:
    baseline = rates["one instance, direct"]
    lines = ["| tools/call throughput | req/s | × direct |", "|---|---:|---:|"]
    lines += [f"| {label} | {rate:,.0f} | {rate / baseline:.2f} |" for label, rate in rates.items()]
    lines += ["", "| change → notification | p50 ms | p99 ms | p50 × same instance |", "|---|---:|---:|---:|"]
    same = statistics.median(latencies["listener on the same instance"])
    for label, values in latencies.items():
        p50, p99 = statistics.median(values), _percentile(values, 0.99)
        lines.append(f"| {label} | {p50 * 1000:.2f} | {p99 * 1000:.2f} | {p50 / same:.2f} |")
    return lines


def main(argv: Any = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=3, help="seconds of load per throughput cell")
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--samples", type=int, default=200, help="notifications timed per latency cell")
    options = parser.parse_args(argv)
    with pg.cluster() as dsn:
        rates = throughput(dsn, options.seconds, options.connections)
        latencies = notification_latency(dsn, options.samples)
    print(f"load generator: {load.generator()}, {options.connections} connections, {options.seconds} s a cell")
    print("\n".join(report(rates, latencies)))


if __name__ == "__main__":
    main()
