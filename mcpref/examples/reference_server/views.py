"""The weather desk's view (MCP Apps): `get_forecast` drawn as a chart, for hosts that render views.

`forecast_chart.html`, beside this file, is plain HTML and JavaScript. A host that declares
`io.modelcontextprotocol/ui` sees `get_forecast` linked to it, and `get_hourly`, a tool only the
view may call (the chart's detail when a day is clicked). `file_report` is marked model-only: a
view must not file reports on its own, so a host refuses the view's call. Any other client sees
neither link nor `get_hourly`, and reads `get_forecast`'s text content as before.

The view declares no `csp`: it loads nothing and connects nowhere, so the host applies the
restrictive default, and the chart's "fetch" button shows that default blocking a request.
"""

from __future__ import annotations

from importlib.resources import files
from typing import Any

from mcpref import Server
from mcpref.apps import AppsExtension

from .data import forecast

CHART_URI = "ui://weather-desk/forecast-chart"
CHART_HTML = files(__package__).joinpath("forecast_chart.html").read_text(encoding="utf-8")

#: How far from the day's low towards its high each third hour is, midnight first: coolest at dawn.
DIURNAL = (0.2, 0.05, 0.0, 0.35, 0.8, 1.0, 0.7, 0.4)

HOURLY_OUTPUT = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "day": {"type": "integer"},
        "hours": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"hour": {"type": "integer"}, "tempC": {"type": "integer"}},
                "required": ["hour", "tempC"],
            },
        },
    },
    "required": ["city", "day", "hours"],
}


def register_views(server: Server) -> AppsExtension:
    """Add the MCP Apps extension, the chart, and the tools' links to it (after `register_tools`)."""
    apps = server.add_extension(AppsExtension())
    apps.view(
        CHART_URI,
        CHART_HTML,
        name="forecast_chart",
        title="Forecast chart",
        description="get_forecast's days as a chart of highs and lows; click a day for its hours.",
        prefers_border=True,
    )
    apps.link("get_forecast", CHART_URI)
    apps.link("file_report", visibility=("model",))

    @apps.tool(
        CHART_URI,
        visibility=("app",),
        title="Hourly temperatures",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}, "day": {"type": "integer", "minimum": 1, "maximum": 5}},
            "required": ["city", "day"],
        },
        output_schema=HOURLY_OUTPUT,
        annotations={"readOnlyHint": True},
    )
    def get_hourly(city: str, day: int) -> dict[str, Any]:
        """Every third hour's temperature on one day of a city's forecast (the chart's detail)."""
        outlook = forecast(city, day)["days"][-1]
        low, high = outlook["lowC"], outlook["highC"]
        hours = [
            {"hour": hour, "tempC": round(low + (high - low) * share)}
            for hour, share in zip(range(0, 24, 3), DIURNAL, strict=True)
        ]
        return {"city": city, "day": day, "hours": hours}

    return apps
