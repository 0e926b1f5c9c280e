"""Step 2: tools with structured output, annotations, a mirrored header,
and their own errors."""

from mcpref import Server, StreamableHTTP, ToolError

# The step before, as mcpref installs it: runs from any folder. To build on
# your own copy of it instead, save it next to this file and write
# `import step1_first_tool`.
from mcpref.examples.guide_server import step1_first_tool
from mcpref.examples.guide_server.trails import TRAILS
from mcpref.run import main

TRAIL = {
    "type": "object",
    "properties": {
        "id": {"type": "string"},
        "name": {"type": "string"},
        "km": {"type": "number"},
        "climbM": {"type": "integer"},
    },
    "required": ["id", "name", "km", "climbM"],
}


def build() -> Server:
    server = step1_first_tool.build()

    @server.tool(
        title="Find trails",
        description=(
            "Trails in a region, shortest first, optionally no longer than"
            " maxKm and at most limit of them."
        ),
        input_schema={
            "type": "object",
            "properties": {
                # Mirrored into the `Mcp-Param-Region` header: a gateway
                # can route or count by region.
                "region": {
                    "type": "string",
                    "enum": ["north", "south", "east"],
                    "x-mcp-header": "Region",
                },
                "maxKm": {"type": "number", "exclusiveMinimum": 0},
                # An integer may be mirrored too (a number may not):
                # `Mcp-Param-Limit: 2`.
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "x-mcp-header": "Limit",
                },
            },
            "required": ["region"],
        },
        output_schema={
            "type": "object",
            "properties": {"trails": {"type": "array", "items": TRAIL}},
            "required": ["trails"],
        },
        annotations={"readOnlyHint": True, "openWorldHint": False},
    )
    def find_trails(
        region: str, maxKm: float | None = None, limit: int | None = None
    ) -> dict[str, object]:
        shortest = sorted(TRAILS.items(), key=lambda item: item[1]["km"])
        found = [
            {
                "id": trail_id,
                "name": t["name"],
                "km": t["km"],
                "climbM": t["climbM"],
            }
            for trail_id, t in shortest
            if t["region"] == region
            and (maxKm is None or t["km"] <= maxKm)
        ]
        # JSON has one number type: an integer argument may arrive as 2.0.
        return {"trails": found[: None if limit is None else int(limit)]}

    @server.tool(
        title="Walking time",
        description=(
            "Hours a trail takes at a pace, adding ten minutes per 100 m"
            " of climb."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "trail": {"type": "string"},
                "pace": {"type": "number", "description": "km per hour"},
            },
            "required": ["trail", "pace"],
        },
        annotations={"readOnlyHint": True, "openWorldHint": False},
    )
    def walking_time(trail: str, pace: float) -> str:
        if trail not in TRAILS:
            # The tool's own failure: the caller (and its model) reads it
            # as isError content.
            raise ToolError(
                f"No trail called {trail!r}; try find_trails first."
            )
        if pace <= 0:
            raise ToolError("pace must be above zero")
        hours = TRAILS[trail]["km"] / pace + TRAILS[trail]["climbM"] / 600
        return f"{TRAILS[trail]['name']}: about {hours:.1f} h"

    return server


server = build()
app = StreamableHTTP(server)

if __name__ == "__main__":
    main(server, app)
