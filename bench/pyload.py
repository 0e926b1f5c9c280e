"""A small HTTP/1.1 load generator, for machines without wrk: `python -m bench.pyload URL METHOD C SECONDS`.

`C` keep-alive connections each send the benchmark's request for `METHOD` (see `bench.messages`)
back to back until `SECONDS` have passed, check every response (status 200 and the expected
text), and print one line in the same form as the wrk script's:
`RESULT <microseconds> <good> <bad> <socket errors> <p50 µs> <p99 µs>`.
It is slower than wrk, so on a fast server it measures itself as much as the server: the
table says which generator ran.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any
from urllib.parse import urlsplit

from .http1 import Connection, encode
from .messages import DISCOVER, TOOLS_CALL, TOOLS_LIST, Call

CALLS = {call.name: call for call in (TOOLS_CALL, DISCOVER, TOOLS_LIST)}


async def _connection(port: int, request: bytes, expect: bytes, deadline: float, tally: dict[str, Any]) -> None:
    try:
        connection = await Connection.open(port)
    except OSError:
        tally["errors"] += 1
        return
    try:
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            status, body = await connection.exchange(request)
            tally["latencies"].append(time.perf_counter() - start)
            if status == 200 and expect in body:
                tally["good"] += 1
            else:
                tally["bad"] += 1
    except (OSError, asyncio.IncompleteReadError, ValueError):
        tally["errors"] += 1
    finally:
        connection.close()


async def main(url: str, call: Call, connections: int, seconds: float) -> str:
    port = urlsplit(url).port or 80
    request = encode(call, port)
    tally: dict[str, Any] = {"good": 0, "bad": 0, "errors": 0, "latencies": []}
    start = time.perf_counter()
    deadline = start + seconds
    await asyncio.gather(
        *(_connection(port, request, call.expect.encode(), deadline, tally) for _ in range(connections))
    )
    elapsed = time.perf_counter() - start
    latencies = sorted(tally["latencies"]) or [0.0]
    p50, p99 = (latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1e6 for q in (0.5, 0.99))
    return f"RESULT {elapsed * 1e6:.0f} {tally['good']} {tally['bad']} {tally['errors']} {p50:.0f} {p99:.0f}"


def _call_from(path: str, name: str) -> Call:
    """A request made at run time (it names a task id), written to a JSON file by `bench.load`."""
    with open(path) as file:
        spec = json.load(file)
    return Call(name, spec["body"].encode(), spec["headers"], spec["expect"])


if __name__ == "__main__":
    url, method, connections, seconds = sys.argv[1:5]
    call = _call_from(sys.argv[5], method) if len(sys.argv) > 5 else CALLS[method]
    work = main(url, call, int(connections), float(seconds))
    try:
        import uvloop
    except ImportError:
        print(asyncio.run(work))
    else:
        print(uvloop.run(work))
