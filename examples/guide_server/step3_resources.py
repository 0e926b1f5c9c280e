"""Step 3: resources (text and binary) and a resource template whose variable completes."""

import json

from mcpref import MCPError, Server, StreamableHTTP
from mcpref.jsonrpc import INVALID_PARAMS
from mcpref.run import main

from . import step2_tools
from .trails import MAP_PNG, TRAILS


def build() -> Server:
    server = step2_tools.build()

    @server.resource("trails://index", title="Every trail", mime_type="application/json")
    def index() -> str:
        """Every trail's id and name, as JSON."""
        return json.dumps({trail_id: t["name"] for trail_id, t in TRAILS.items()})

    @server.resource_template(
        "trails://{trail_id}/map",
        title="Trail map",
        mime_type="image/png",
        complete={"trail_id": lambda value: [t for t in TRAILS if t.startswith(value)]},
    )
    def trail_map(trail_id: str) -> bytes:
        """A trail's map. Bytes become a base64 `blob`; a str would become `text`."""
        if trail_id not in TRAILS:
            # Not found is -32602 with the URI in `data` (server/resources.mdx §Error Handling).
            uri = f"trails://{trail_id}/map"
            raise MCPError(INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})
        return MAP_PNG

    return server


server = build()
app = StreamableHTTP(server)

if __name__ == "__main__":
    main(server, app)
