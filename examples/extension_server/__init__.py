"""A server with an extension: `com.example/station-alerts` adds a method and a result field.

The server lists the extension in `capabilities.extensions`, with its settings. A client that
lists it too, in the `clientCapabilities` of a request, may call the extension's method
`com.example/alerts/list`, and finds the number of open alerts in the `_meta` of every `tools/call`
result. A client that does not list it gets core behaviour: no extra field, and the method is
-32601 (basic/versioning.mdx §Extension Negotiation: revert to core behaviour or reject).

Only public `Server` methods are overridden: `capabilities`, `handler_for` and `handle`.
Run it with `uvicorn examples.extension_server:app`; the site serves it at `/alerts/mcp`.
"""

from __future__ import annotations

from typing import Any

from mcpref import MCPError, RequestContext, Server, StreamableHTTP
from mcpref.jsonrpc import METHOD_NOT_FOUND, Request
from mcpref.meta import CLIENT_CAPABILITIES_KEY

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


def declared(capabilities: Any) -> bool:
    """Whether a request's client capabilities list this extension."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and EXTENSION in extensions


class AlertingServer(Server):
    """A `Server` that also speaks `com.example/station-alerts`."""

    def capabilities(self) -> dict[str, Any]:
        return {**super().capabilities(), "extensions": {EXTENSION: {"maxAlerts": 10}}}

    def handler_for(self, method: str) -> Any:
        if method == LIST_ALERTS:
            return self._list_alerts
        return super().handler_for(method)

    async def handle(self, request: Request, **options: Any) -> dict[str, Any]:
        result = await super().handle(request, **options)
        meta = request.params.get("_meta") if isinstance(request.params.get("_meta"), dict) else {}
        if request.method == "tools/call" and declared(meta.get(CLIENT_CAPABILITIES_KEY)):
            result["_meta"][OPEN_ALERTS_KEY] = len(ALERTS)
        return result

    async def _list_alerts(self, ctx: RequestContext) -> dict[str, Any]:
        if not declared(ctx.client_capabilities):
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {LIST_ALERTS} (declare the {EXTENSION} extension)")
        return {"alerts": ALERTS}


def build_server() -> AlertingServer:
    server = AlertingServer("alert-desk", "0.2.0", title="Alert desk (an extension example)")

    @server.tool(
        input_schema={"type": "object", "properties": {"station": {"type": "string"}}, "required": ["station"]},
        annotations={"readOnlyHint": True},
    )
    def station_status(station: str) -> str:
        """Whether a station is reporting."""
        return f"{station}: reporting"

    return server


def create_app() -> StreamableHTTP:
    """A fresh endpoint at the path examples/site.py serves it on."""
    return StreamableHTTP(build_server(), path="/alerts/mcp")


app = StreamableHTTP(build_server())
