"""The reference server the documentation pages talk to: a small weather desk.

Each tool shows one thing a reader meets on the wire:

- `get_forecast`: an argument mirrored into a header (`x-mcp-header: City`) and a result with
  `outputSchema`/`structuredContent`; its `issuedAt` timestamp is the one volatile value.
- `convert_temperature`: a tool that fails on its own terms, with `isError: true`.
- `survey_stations`: reports progress and log messages, so a request that opts in gets an SSE stream.
- `file_report`: asks the user to confirm with a form (an `input_required` result, then a retry);
  a client that does not declare form elicitation gets -32021.
- `write_bulletin`, `link_station_feed`, `schedule_visit` (in `asking.py`): sampling and roots in
  one round, URL elicitation, and three rounds with a new sealed state each.
- `draft_alert`, `issue_alert` (in `handles.py`): state across requests as a server-minted,
  signed handle that the client passes back as an argument.

- `get_forecast` drawn as a chart for hosts that render MCP Apps views, and `get_hourly`, which
  only that view may call (in `views.py`; the view is `forecast_chart.html`).

Plus a resource, a resource whose backend is down (reading it is -32603), a resource template and
a prompt whose arguments complete.
Run it alone with `uvicorn mcpref.examples.reference_server:app`, or with the site via `./scripts/serve`.
`/mcp` serves 2025-11-25 clients too (statelessly, see mcpref/legacy.py); the same desk runs
2026-07-28 only at `/modern/mcp` (`create_modern_app`), and `/dual/mcp` is an alias of `/mcp`.
"""

from __future__ import annotations

from mcpref import CacheHints, Server, StreamableHTTP

from .asking import register_asking_tools
from .data import STATIONS, forecast, station_report
from .handles import register_handle_tools
from .tools import register_tools
from .views import register_views

INSTRUCTIONS = "Weather desk: forecasts, station reports and unit conversion. Data is synthetic."


def build_server(*, serve_legacy: bool = True) -> Server:
    """A fresh server with everything registered; nothing is shared between two calls."""
    server = Server(
        "weather-desk",
        "1.4.0",
        title="Weather Desk (mcpref reference server)",
        instructions=INSTRUCTIONS,
        # Lists change only on deploy: any client may reuse them for a minute.
        cache=CacheHints(ttl_ms=60_000, scope="public"),
        cache_for={"server/discover": CacheHints(ttl_ms=3_600_000, scope="public")},
        # Both eras at /mcp, as mcpref serves by default; /modern/mcp turns the legacy era off.
        serve_legacy=serve_legacy,
    )
    register_tools(server)
    register_asking_tools(server)
    register_handle_tools(server)

    @server.resource("weather://stations", title="Station list", mime_type="application/json")
    def stations() -> str:
        """Every station this desk reports on, as JSON."""
        return station_report(None)

    @server.resource("weather://radar/latest", title="Latest radar sweep", mime_type="image/png")
    def radar() -> bytes:
        """The latest radar image. This desk has no radar feed, so reading it fails: -32603."""
        # A backend that is down: the server logs this, and tells the client only that it failed.
        raise ConnectionError("radar feed at 10.20.0.7:9400 did not answer")

    @server.resource_template(
        "weather://stations/{station_id}",
        title="One station",
        mime_type="application/json",
        complete={"station_id": lambda value: [s for s in STATIONS if s.startswith(value)]},
    )
    def station(station_id: str) -> str:
        """The latest observation of one station."""
        return station_report(station_id)

    @server.prompt(
        title="Forecast briefing",
        arguments={"city": "City to brief on", "tone": "plain or cheerful"},
        complete={
            "city": lambda value: [s.capitalize() for s in STATIONS if s.startswith(value.lower())],
            "tone": lambda value: [t for t in ("cheerful", "plain") if t.startswith(value)],
        },
    )
    def briefing(city: str, tone: str = "plain") -> str:
        """A short spoken briefing built from tomorrow's forecast."""
        day = forecast(city, 1)["days"][0]
        return f"In a {tone} voice, brief listeners on {city}: {day['summary']}, high {day['highC']}°C."

    register_views(server)
    return server


def create_app() -> StreamableHTTP:
    """The MCP endpoint at `/mcp`, built fresh (the docs harness calls this once per request).

    Dual-era, like any mcpref server by default: the URL `./scripts/serve` prints must work with
    the clients people have, and many still speak 2025-11-25 (basic/versioning.mdx §Dual-era servers).
    """
    return StreamableHTTP(build_server())


def create_modern_app() -> StreamableHTTP:
    """The same desk at `/modern/mcp`, 2026-07-28 only: what a modern-only server answers a
    2025-era client (the versioning page shows it)."""
    return StreamableHTTP(build_server(serve_legacy=False), path="/modern/mcp")


def create_dual_app() -> StreamableHTTP:
    """`/dual/mcp`, kept as an alias of `/mcp` for links made when `/mcp` was modern-only."""
    return StreamableHTTP(build_server(), path="/dual/mcp")


app = create_app()

__all__ = ["app", "build_server", "create_app", "create_dual_app", "create_modern_app"]
