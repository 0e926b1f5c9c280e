"""Step 5: a slow tool that reports progress and log messages on its own
response stream."""

import asyncio

from mcpref import RequestContext, Server, StreamableHTTP

# The step before, as mcpref installs it: runs from any folder. To build on
# your own copy of it instead, save it next to this file and write
# `import step4_prompts`.
from mcpref.examples.guide_server import step4_prompts
from mcpref.examples.guide_server.trails import TRAILS
from mcpref.run import main


def build() -> Server:
    server = step4_prompts.build()
    # Logging is deprecated in 2026-07-28 but still in it: a server that
    # sends log messages declares the `logging` capability (mcpref would,
    # since a handler takes `ctx`; here it is said outright). Nothing is
    # sent unless the request names a level in its `_meta`.
    server.emits_logs = True

    @server.tool(
        title="Check trail conditions",
        description=(
            "Ask each trail's ranger post in a region; reports progress"
            " per trail."
        ),
        input_schema={
            "type": "object",
            "properties": {"region": {"type": "string"}},
            "required": ["region"],
        },
        annotations={"readOnlyHint": True, "openWorldHint": True},
    )
    async def check_conditions(region: str, ctx: RequestContext) -> str:
        trails = [t for t in TRAILS if TRAILS[t]["region"] == region]
        for done, trail in enumerate(trails, start=1):
            await asyncio.sleep(0)  # stands in for asking the ranger post
            await ctx.log("info", f"{trail}: open", logger="rangers")
            await ctx.report_progress(done, len(trails), f"asked {trail}")
        asked = len(trails)
        return f"Every trail in the {region} is open ({asked} asked)."

    return server


server = build()
app = StreamableHTTP(server)

if __name__ == "__main__":
    main(server, app)
