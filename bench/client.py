"""What the client's HTTP transport costs to read an answer: `python -m bench.client [ROUNDS]`.

`HTTPTransport.exchange` reads each kind of answer a server gives (a small JSON body, an SSE
stream of progress notifications ending with the response, and 1 MiB results both ways) from an
`httpx.MockTransport` that hands over the same bytes every time, in 64 KiB chunks as a socket
would. No server and no socket: what is measured is the client's own reading and parsing, the
part a change to the transport's reader changes. Each line prints the exchanges per second and,
as the baseline measured in the same round, httpx's bare read of the same answer (`aread()` and
nothing else: no bound, no SSE framing, no JSON), with their ratio; the medians of the rounds
(rounds interleave everything, so a busier moment of the machine hits all of it). Compare two
commits by running it at each, on the same machine, back to back, and comparing the ratios.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import AsyncIterator

import httpx

from mcpref.client._http import HTTPTransport

REQUEST = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}}
CHUNK = 64 * 1024


def _result(text: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": text}]}}).encode()


def _event(body: bytes) -> bytes:
    return b"event: message\ndata: " + body + b"\n\n"


_PROGRESS = json.dumps(
    {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}
).encode()

#: name: (content type, body)
ANSWERS = {
    "JSON, small result": ("application/json", _result("This is a simple test")),
    "JSON, 1 MiB result": ("application/json", _result("x" * 2**20)),
    "SSE, 10 progress + small result": (
        "text/event-stream",
        b"".join(_event(_PROGRESS) for _ in range(10)) + _event(_result("This is a simple test")),
    ),
    "SSE, 1 MiB result": ("text/event-stream", _event(_result("x" * 2**20))),
}


async def _chunks(body: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(body), CHUNK):
        yield body[start : start + CHUNK]


def _transport(content_type: str, body: bytes) -> HTTPTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, content=_chunks(body))

    return HTTPTransport("http://bench.invalid/mcp", httpx.AsyncClient(transport=httpx.MockTransport(handler)))


async def _rate(transport: HTTPTransport, seconds: float) -> float:
    count, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        async for _ in transport.exchange(REQUEST):
            pass
        count += 1
    return count / elapsed


async def _bare_rate(transport: HTTPTransport, seconds: float) -> float:
    """The baseline: the same POST with httpx, the answer read whole and not looked at."""
    count, started = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - started) < seconds:
        async with transport.http.stream("POST", transport.url, json=REQUEST) as response:
            await response.aread()
        count += 1
    return count / elapsed


async def main(rounds: int = 5, seconds: float = 0.5) -> None:
    transports = {name: _transport(*answer) for name, answer in ANSWERS.items()}
    rates: dict[str, list[float]] = {name: [] for name in ANSWERS}
    bare: dict[str, list[float]] = {name: [] for name in ANSWERS}
    ratios: dict[str, list[float]] = {name: [] for name in ANSWERS}
    for _ in range(rounds):
        for name, transport in transports.items():
            rates[name].append(await _rate(transport, seconds))
            bare[name].append(await _bare_rate(transport, seconds))
            ratios[name].append(rates[name][-1] / bare[name][-1])
    print(f"{'answer':34} {'exchange/s':>10} {'bare read/s':>12} {'ratio':>6}")
    for name in ANSWERS:
        exchange, baseline, ratio = (statistics.median(values[name]) for values in (rates, bare, ratios))
        print(f"{name:34} {exchange:>10,.0f} {baseline:>12,.0f} {ratio:>6.2f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
