"""A server with an extension: `com.example/station-alerts` adds a method and a result field.

The server lists the extension in `capabilities.extensions`, with its settings. A client that
lists it too, in the `clientCapabilities` of a request, may call the extension's method
`com.example/alerts/list`, and finds the number of open alerts in the `_meta` of every `tools/call`
result. A client that does not list it gets core behaviour: no extra field, and the method is
-32021 naming the extension to declare (basic/versioning.mdx §Extension Negotiation: revert to
core behaviour or reject).

The extension is an `mcpref.extensions.Extension` given to `Server.add_extension`: the core
advertises it, serves its method only to clients that declare it, and lets it touch each
`tools/call` result through `around`. The tasks extension (`mcpref.tasks`) plugs in the same way.
Run it with `uvicorn mcpref.examples.extension_server:app`; the site serves it at `/alerts/mcp`.
"""

from __future__ import annotations

from typing import Any

from mcpref import RequestContext, Server, StreamableHTTP
from mcpref.extensions import CallNext, Extension, declared

#: The extension's identifier: a `_meta`-style key with a vendor prefix (reverse DNS you own).
EXTENSION = "com.example/station-alerts"
#: The method the extension adds, named under the extension's own prefix.
LIST_ALERTS = "com.example/alerts/list"
#: The result field the extension adds to `tools/call` results, in `_meta`.
OPEN_ALERTS_KEY = "com.example/openAlerts"

ALERTS = [
    {"station": "oslo", "severity": "warning", "text": "Freezing rain from 18:00"},
    {"station": "lisbon", "severity": "info", "text": "Swell above 3 m along the coast"},
]


class StationAlerts(Extension):
    """`com.example/station-alerts`: a method, and a field on tool results."""

    id = EXTENSION

    def __init__(self) -> None:
        self.methods = {LIST_ALERTS: self._list_alerts}

    def settings(self) -> dict[str, Any]:
        return {"maxAlerts": 10}

    async def around(self, ctx: RequestContext, call_next: CallNext) -> Any:
        result = await call_next(ctx)
        if ctx.method == "tools/call" and isinstance(result, dict) and declared(ctx, EXTENSION):
            result.setdefault("_meta", {})[OPEN_ALERTS_KEY] = len(ALERTS)
        return result

    async def _list_alerts(self, ctx: RequestContext) -> dict[str, Any]:
        return {"alerts": ALERTS}


def build_server() -> Server:
    server = Server("alert-desk", "0.2.0", title="Alert desk (an extension example)")
    server.add_extension(StationAlerts())

    @server.tool(
        input_schema={"type": "object", "properties": {"station": {"type": "string"}}, "required": ["station"]},
        annotations={"readOnlyHint": True},
    )
    def station_status(station: str) -> str:
        """Whether a station is reporting."""
        return f"{station}: reporting"

    return server


def create_app() -> StreamableHTTP:
    """A fresh endpoint at the path `mcpref demo` (`mcpref.demo`) serves it on."""
    return StreamableHTTP(build_server(), path="/alerts/mcp")


app = StreamableHTTP(build_server())
