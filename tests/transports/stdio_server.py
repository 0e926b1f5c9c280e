"""A server for the stdio tests, run as a real child process: `python -m tests.transports.stdio_server`."""

from __future__ import annotations

import asyncio
import sys

from mcpref import Server
from mcpref.transports.stdio import serve_stdio

server = Server("stdio-test", "1")


@server.tool(input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
async def echo(message: str, ctx) -> str:  # type: ignore[no-untyped-def]
    await ctx.report_progress(1, 1)
    return message


@server.tool()
async def wait(seconds: float = 30) -> str:
    """Sleeps until cancelled; says so on stderr, which the test reads."""
    print("wait started", file=sys.stderr, flush=True)
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        print("wait was cancelled", file=sys.stderr, flush=True)
        raise
    return "woke"


@server.tool()
def add_tool() -> str:
    server.tool(name="added")(lambda: "")
    return "added"


if __name__ == "__main__":
    serve_stdio(server)
