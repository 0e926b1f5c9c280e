"""The everything server's tools: one per behaviour the conformance suite calls for.

A tool is a plain function. What it returns decides the `CallToolResult`:

- a `str` becomes one text block;
- a list is taken as the content blocks themselves;
- raising `ToolError` gives `isError: true`, a failure the model is meant to see;
- a function with a `ctx` parameter also receives the `RequestContext`, for progress and logs.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from mcpref import InputRequired, RequestContext, Server, ToolError, elicit_form, text

from .media import RED_PIXEL_PNG, SILENT_WAV

#: The schema of `json_schema_2020_12_tool`, kept key for key: the suite compares what
#: `tools/list` shows with exactly this, to prove that 2020-12 keywords survive untouched.
JSON_SCHEMA_2020_12 = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}

NO_ARGUMENTS = {"type": "object", "properties": {}}


def image(data: str, mime_type: str) -> dict[str, Any]:
    return {"type": "image", "data": data, "mimeType": mime_type}


def embedded_text(uri: str, mime_type: str, body: str) -> dict[str, Any]:
    """An embedded resource content block: the resource travels inside the result."""
    return {"type": "resource", "resource": {"uri": uri, "mimeType": mime_type, "text": body}}


def register_tools(server: Server) -> None:
    # Registration order is `tools/list` order. `test_simple_text` comes first: header
    # checks call the first listed tool with `{}`, and this one needs no arguments.

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_simple_text() -> str:
        """Returns a single text content block."""
        return "This is a simple text response for testing."

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_image_content() -> list[dict[str, Any]]:
        """Returns a base64-encoded PNG image."""
        return [image(RED_PIXEL_PNG, "image/png")]

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_audio_content() -> list[dict[str, Any]]:
        """Returns a base64-encoded WAV clip."""
        return [{"type": "audio", "data": SILENT_WAV, "mimeType": "audio/wav"}]

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_embedded_resource() -> list[dict[str, Any]]:
        """Returns a text resource embedded in the result."""
        return [embedded_text("test://embedded-resource", "text/plain", "This is an embedded resource content.")]

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_multiple_content_types() -> list[dict[str, Any]]:
        """Returns text, an image and an embedded resource in one result."""
        return [
            text("Multiple content types test:"),
            image(RED_PIXEL_PNG, "image/png"),
            embedded_text("test://mixed-content-resource", "application/json", '{"test":"data","value":123}'),
        ]

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_error_handling() -> str:
        """Always fails, reporting the failure in the result (`isError: true`), not as a JSON-RPC error."""
        raise ToolError("This tool intentionally returns an error for testing")

    @server.tool(input_schema=NO_ARGUMENTS)
    async def test_tool_with_progress(ctx: RequestContext) -> str:
        """Reports progress 0, 50 and 100 of 100 when the request carries a progressToken."""
        # `report_progress` sends nothing unless `_meta.progressToken` is set; when it is, the
        # transport answers on an SSE stream so these notifications have somewhere to go.
        for step in (0, 50, 100):
            await ctx.report_progress(step, 100, f"Completed step {step} of 100")
            if step < 100:
                await asyncio.sleep(0.05)
        return str(ctx.meta.progress_token)

    # The core answers -32021 (HTTP 400) before the function runs when the client's
    # per-request capabilities lack what `requires` names.
    @server.tool(input_schema=NO_ARGUMENTS, requires={"sampling": {}})
    def test_missing_capability() -> str:
        """Needs the client's sampling capability; without it the call is refused with -32021."""
        return "Success"

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_streaming_elicitation(ctx: RequestContext) -> str | InputRequired:
        """Asks the user a question the 2026-07-28 way: in its result, never as a request on the stream."""
        answer = ctx.input_response("confirmation")
        if answer is None:
            return InputRequired({"confirmation": elicit_form("Continue?", {"ok": {"type": "boolean"}}, ["ok"])})
        return f"The user chose to {answer.get('action')}"

    @server.tool(input_schema=NO_ARGUMENTS)
    async def test_logging_tool(ctx: RequestContext) -> str:
        """Logs at debug, info and warning; messages are sent only if the request set a logLevel."""
        for level in ("debug", "info", "warning"):
            await ctx.log(level, f"{level} message from test_logging_tool", logger="everything-server")
        return "Logging evaluated"

    @server.tool(input_schema=JSON_SCHEMA_2020_12)
    def json_schema_2020_12_tool(**arguments: Any) -> str:
        """Takes arguments described with JSON Schema 2020-12 keywords ($defs, $ref, if/then/else)."""
        return f"JSON Schema 2020-12 tool called with: {json.dumps(arguments, sort_keys=True)}"

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {
                # Mirrored into the `Mcp-Param-Region` request header; the core refuses a call
                # whose header is missing or disagrees with this argument (-32020).
                "region": {"type": "string", "x-mcp-header": "Region"},
            },
        }
    )
    def test_custom_headers(region: str = "unset") -> str:
        """Echoes its region argument, which clients also send as the Mcp-Param-Region header."""
        return f"Region: {region}"

    # -- changes, announced on subscriptions/listen streams ------------------------------------
    # The tool set itself stays the same: the suite checks that consecutive tools/list calls
    # agree, so these only announce a change to the clients listening for one.

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_trigger_tool_change() -> str:
        """Announces notifications/tools/list_changed to every client listening for it."""
        server.notify_list_changed("tools")
        return "Mutation triggered"

    @server.tool(input_schema=NO_ARGUMENTS)
    def test_trigger_prompt_change() -> str:
        """Announces notifications/prompts/list_changed to every client listening for it."""
        server.notify_list_changed("prompts")
        return "Mutation triggered"
