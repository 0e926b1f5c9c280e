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
from urllib.parse import urlsplit

from .messages import DISCOVER, TOOLS_CALL, TOOLS_LIST, Call

CALLS = {call.name: call for call in (TOOLS_CALL, DISCOVER, TOOLS_LIST)}


async def _connection(host: str, port: int, request: bytes, expect: bytes, deadline: float, tally: dict) -> None:
    try:
        reader, writer = await asyncio.open_connection(host, port)
    except OSError:
        tally["errors"] += 1
        return
    try:
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            writer.write(request)
            status, body = await _response(reader)
            tally["latencies"].append(time.perf_counter() - start)
            if status == 200 and expect in body:
                tally["good"] += 1
            else:
                tally["bad"] += 1
    except (OSError, asyncio.IncompleteReadError, ValueError):
        tally["errors"] += 1
    finally:
        writer.close()


async def _response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ", 2)[1])
    headers = {name.lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:] if line)}
    if "content-length" in headers:
        return status, await reader.readexactly(int(headers["content-length"]))
    if headers.get("transfer-encoding", "").lower() == "chunked":
        chunks = []
        while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
        await reader.readexactly(2)
        return status, b"".join(chunks)
    raise ValueError("response without Content-Length or chunked body")


async def main(url: str, call: Call, connections: int, seconds: float) -> str:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    head = [f"POST {parts.path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(call.body)}"]
    head += [f"{name}: {value}" for name, value in call.headers.items()]
    request = ("\r\n".join(head) + "\r\n\r\n").encode() + call.body
    tally: dict = {"good": 0, "bad": 0, "errors": 0, "latencies": []}
    start = time.perf_counter()
    deadline = start + seconds
    await asyncio.gather(
        *(_connection(host, port, request, call.expect.encode(), deadline, tally) for _ in range(connections))
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
