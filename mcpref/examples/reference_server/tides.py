"""A second, smaller server for the multi-server composition page: tide tables.

It deliberately has a tool with the same name as the weather desk's (`get_forecast`), so the page
can show why a host must namespace tools per server. It sets no cache hints, so its lists carry
the safe default (`ttlMs: 0`, `cacheScope: "private"`), unlike the weather desk's.
"""

from __future__ import annotations

from mcpref import Server, StreamableHTTP

from .data import synthetic_number

PORTS = ("lisbon", "oslo", "osaka")


def build_server() -> Server:
    server = Server("tide-tables", "0.3.0")

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"port": {"type": "string", "enum": list(PORTS)}},
            "required": ["port"],
        }
    )
    def get_forecast(port: str) -> str:
        """High and low tide times for a port, today."""
        high = synthetic_number(port, "high", low=0, high=11)
        minute = synthetic_number(port, "m", low=0, high=59)
        return f"{port}: high water {high:02d}:{minute:02d}, low water {(high + 6) % 12:02d}:15"

    return server


def create_app() -> StreamableHTTP:
    """The tide-tables endpoint, served at `/tides/mcp` next to the weather desk's `/mcp`."""
    return StreamableHTTP(build_server(), path="/tides/mcp")
