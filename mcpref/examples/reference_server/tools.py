"""The reference server's tools, one per wire behaviour the docs need to show."""

from __future__ import annotations

from typing import Any

from mcpref import InputRequired, RequestContext, Server, ToolError, elicit_form

from .data import STATIONS, forecast

FORECAST_OUTPUT = {
    "type": "object",
    "properties": {
        "city": {"type": "string"},
        "issuedAt": {"type": "string", "format": "date-time"},
        "days": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "day": {"type": "integer"},
                    "summary": {"type": "string"},
                    "highC": {"type": "integer"},
                    "lowC": {"type": "integer"},
                },
                "required": ["day", "summary", "highC", "lowC"],
            },
        },
    },
    "required": ["city", "issuedAt", "days"],
}

SCALES = {"C": "Celsius", "F": "Fahrenheit", "K": "Kelvin"}


def register_tools(server: Server) -> None:
    @server.tool(
        title="City forecast",
        input_schema={
            "type": "object",
            "properties": {
                # Mirrored as `Mcp-Param-City`, so a gateway can route or rate-limit per city
                # without reading the body (basic/transports/streamable-http.mdx §Custom Headers).
                "city": {"type": "string", "x-mcp-header": "City"},
                "days": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
            },
            "required": ["city"],
        },
        output_schema=FORECAST_OUTPUT,
        annotations={"readOnlyHint": True},
    )
    def get_forecast(city: str, days: int = 1) -> dict[str, Any]:
        """Daily forecast for a city, as structured data."""
        return forecast(city, days)

    @server.tool(
        title="Convert a temperature",
        input_schema={
            "type": "object",
            "properties": {
                "value": {"type": "number"},
                "from": {"type": "string"},
                "to": {"type": "string"},
            },
            "required": ["value", "from", "to"],
        },
    )
    def convert_temperature(**arguments: Any) -> str:
        """Convert between C, F and K. An unknown scale is the tool's own failure (isError)."""
        value, source, target = arguments["value"], arguments["from"], arguments["to"]
        for scale in (source, target):
            if scale not in SCALES:
                raise ToolError(f"Unknown scale {scale!r}: use one of C, F, K")
        kelvin = {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[source]
        converted = {"C": kelvin - 273.15, "F": (kelvin - 273.15) * 9 / 5 + 32, "K": kelvin}[target]
        return f"{value:g} °{source} = {converted:.1f} °{target}".replace("°K", "K")

    @server.tool(title="Survey all stations", input_schema={"type": "object"})
    async def survey_stations(ctx: RequestContext) -> str:
        """Poll every station; reports progress and logs when the request asks for them."""
        for done, station in enumerate(STATIONS, start=1):
            await ctx.log("info", {"station": station, "status": "ok"}, logger="survey")
            await ctx.report_progress(done, len(STATIONS), f"polled {station}")
        return f"All {len(STATIONS)} stations answered."

    @server.tool(
        title="File an observation report",
        input_schema={
            "type": "object",
            "properties": {"station": {"type": "string"}, "note": {"type": "string"}},
            "required": ["station", "note"],
        },
        requires={"elicitation": {"form": {}}},
    )
    def file_report(station: str, note: str, ctx: RequestContext) -> str | InputRequired:
        """File a station report; the user confirms it in a form, so the client needs elicitation."""
        answer = ctx.input_response("confirm")
        if answer is None:
            # First round: ask the user (basic/patterns/mrtr.mdx). The station travels in the sealed
            # requestState, so whichever instance gets the retry can check what was confirmed.
            form = elicit_form(
                f"File this report for {station}?", {"confirm": {"type": "boolean", "title": "File it"}}, ["confirm"]
            )
            return InputRequired({"confirm": form}, state={"station": station})
        if ctx.state != {"station": station}:
            raise ToolError("The confirmation was for a different station; start again.")
        content = answer.get("content")
        if answer.get("action") != "accept" or not isinstance(content, dict) or content.get("confirm") is not True:
            return "Report discarded."
        return f"Report for {station} queued: {note}"
