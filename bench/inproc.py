"""What one request costs inside the ASGI app, without uvicorn, sockets or a load generator.

The app is called directly with the scope uvicorn would build for the benchmark's request, and
the CPU time per request is taken over many calls. This is the part of the server's time that
mcpref decides; the rest (HTTP parsing, the event loop, syscalls) is the same for every server
on the stack. `profile` runs the same loop under cProfile and lists where the time goes.
`python -m bench.inproc [module:app] [method]` prints both.
"""

from __future__ import annotations

import asyncio
import cProfile
import importlib
import io
import pstats
import sys
import time
from typing import Any

from .messages import DISCOVER, TOOLS_CALL, TOOLS_LIST, Call

CALLS = {call.name: call for call in (TOOLS_CALL, DISCOVER, TOOLS_LIST)}


def _load(app_path: str) -> Any:
    module, _, attribute = app_path.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _scope(call: Call) -> dict[str, Any]:
    headers = [(b"host", b"127.0.0.1:8000"), (b"content-length", str(len(call.body)).encode())]
    headers += [(name.lower().encode(), value.encode()) for name, value in call.headers.items()]
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.4"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def _requests(app: Any, call: Call, count: int) -> bytes:
    scope = _scope(call)
    never = asyncio.Event()
    body = b""

    for _ in range(count):
        delivered = False

        async def receive() -> dict[str, Any]:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": call.body, "more_body": False}
            await never.wait()  # the client stays connected, as wrk's does
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            nonlocal body
            if message["type"] == "http.response.body":
                body = message.get("body", b"")

        await app(dict(scope), receive, send)
    return body


def cost_us(app_path: str, call: Call = TOOLS_CALL, count: int = 2000, repeats: int = 5) -> float:
    """CPU microseconds per request after a warm-up: the best of `repeats` batches, the one
    least disturbed by the rest of the machine. The last response is checked."""
    app = _load(app_path)
    asyncio.run(_requests(app, call, 200))
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        last = asyncio.run(_requests(app, call, count))
        best = min(best, time.process_time() - start)
        if call.expect.encode() not in last:
            raise RuntimeError(f"{app_path} answered {last[:300]!r}")
    return best / count * 1e6


def profile(app_path: str, call: Call = TOOLS_CALL, count: int = 5000, top: int = 25) -> str:
    """The functions that take the most time per request (cumulative), as cProfile sees them."""
    app = _load(app_path)
    asyncio.run(_requests(app, call, 200))
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(_requests(app, call, count))
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(r"mcpref|jsonschema|json|starlette|bench", top)
    return out.getvalue()


if __name__ == "__main__":
    app_path = sys.argv[1] if len(sys.argv) > 1 else "bench.servers.ours:app"
    call = CALLS[sys.argv[2] if len(sys.argv) > 2 else "tools/call"]
    print(f"{app_path} {call.name}: {cost_us(app_path, call):.1f} µs CPU per request")
    print(profile(app_path, call))
