"""Step 3: resources (text and binary) and a resource template whose
variable completes."""

import base64
import json

from mcpref import (
    ResourceNotFound,
    Server,
    StreamableHTTP,
    ToolError,
    ToolResult,
    text,
)

# The step before, as mcpref installs it: runs from any folder. To build on
# your own copy of it instead, save it next to this file and write
# `import step2_tools`.
from mcpref.examples.guide_server import step2_tools
from mcpref.examples.guide_server.trails import (
    MAP_PNG,
    SOUNDSCAPE_WAV,
    TRAILS,
)
from mcpref.run import main

#: A tool's icon: HTTPS or a `data:` URI; hosts fetch it without
#: credentials, or not at all.
CARD_ICON = {
    "src": "data:image/png;base64," + base64.b64encode(MAP_PNG).decode(),
    "mimeType": "image/png",
}


def build() -> Server:
    server = step2_tools.build()

    @server.resource(
        "trails://index", title="Every trail", mime_type="application/json"
    )
    def index() -> str:
        """Every trail's id and name, as JSON."""
        return json.dumps(
            {trail_id: t["name"] for trail_id, t in TRAILS.items()}
        )

    @server.resource_template(
        "trails://{trail_id}/map",
        title="Trail map",
        description=(
            "A trail's map. Bytes become a base64 `blob`; a str would"
            " become `text`."
        ),
        mime_type="image/png",
        complete={
            "trail_id": lambda value: [
                t for t in TRAILS if t.startswith(value)
            ]
        },
    )
    def trail_map(trail_id: str) -> bytes:
        if trail_id not in TRAILS:
            # Not found is -32602 with the URI in `data`
            # (server/resources.mdx §Error Handling).
            raise ResourceNotFound(f"trails://{trail_id}/map")
        return MAP_PNG

    @server.tool(
        title="Trail card",
        description=(
            "A trail's card: every kind of content a tool result may hold,"
            " one of each."
        ),
        input_schema={
            "type": "object",
            "properties": {"trail": {"type": "string"}},
            "required": ["trail"],
        },
        annotations={"readOnlyHint": True, "openWorldHint": False},
        icons=[{**CARD_ICON, "sizes": ["1x1"]}],
    )
    def trail_card(trail: str) -> ToolResult:
        if trail not in TRAILS:
            raise ToolError(f"No trail called {trail!r}.")
        t = TRAILS[trail]
        return ToolResult(
            content=[
                text(
                    f"{t['name']}: {t['km']} km, {t['climbM']} m of climb."
                ),
                # Bytes travel base64-encoded, with their type; `audience`
                # says who the block is for.
                {
                    "type": "image",
                    "data": base64.b64encode(MAP_PNG).decode(),
                    "mimeType": "image/png",
                    "annotations": {"audience": ["user"]},
                },
                {
                    "type": "audio",
                    "data": base64.b64encode(SOUNDSCAPE_WAV).decode(),
                    "mimeType": "audio/wav",
                },
                # A link the client may read later with resources/read,
                # instead of the bytes now.
                {
                    "type": "resource_link",
                    "uri": f"trails://{trail}/map",
                    "name": f"{trail}-map",
                    "mimeType": "image/png",
                },
                # A resource's contents, embedded whole.
                {
                    "type": "resource",
                    "resource": {
                        "uri": "trails://index",
                        "mimeType": "application/json",
                        "text": index(),
                    },
                },
            ]
        )

    return server


server = build()
app = StreamableHTTP(server)

if __name__ == "__main__":
    main(server, app)
