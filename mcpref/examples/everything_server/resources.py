"""The everything server's resources and resource template.

The first resource registered is the first one `resources/list` shows, and the suite reads
that one to check cache hints, so it must be readable.
"""

from __future__ import annotations

import json

from mcpref import Server

from .media import png_bytes


def register_resources(server: Server) -> None:
    @server.resource("test://static-text", name="static-text", title="Static Text Resource", mime_type="text/plain")
    def static_text() -> str:
        """A static text resource for testing."""
        return "This is the content of the static text resource."

    @server.resource(
        "test://static-binary", name="static-binary", title="Static Binary Resource", mime_type="image/png"
    )
    def static_binary() -> bytes:
        """A PNG image; returning bytes makes the content a base64 `blob`."""
        return png_bytes()

    @server.resource_template(
        "test://template/{id}/data", name="template", title="Template Resource", mime_type="application/json"
    )
    def template(id: str) -> str:
        """A JSON document for any id, e.g. test://template/123/data."""
        return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})
