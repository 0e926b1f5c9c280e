"""The server the robustness tests attack: one of each code path a stranger's bytes can reach.

`tests/robustness/` fuzzes it and runs it as several processes behind a round robin
(`scripts/fuzz`); `bench/loadrun.py` and `bench/hostile.py` load it (`scripts/load`). It has:

- `echo`, and `route` whose three arguments are mirrored into `Mcp-Param-*` headers (a string,
  an integer and a boolean), so header checks and base64 sentinels are in reach;
- `whoami`, which names the process that answered, so a test can prove that consecutive
  requests really went to different processes;
- `book`: a multi round-trip tool (form elicitation, state sealed in `requestState`);
- `survey`: progress and log messages, so opted-in requests get an SSE stream;
- `touch`: announces a resource update to every `subscriptions/listen` stream that asked;
- tools paged two at a time, a resource, a resource template, a prompt with completion.

Run one with `uvicorn mcpref.examples.robustness_server:app`. Give every process of one deployment the
same `MCP_STATE_KEY`, or a retry that lands on another process is refused.
"""

from __future__ import annotations

import os

from mcpref import InputRequired, RequestContext, Server, StreamableHTTP, ToolError, elicit_form

GREETING_URI = "robust://greeting"


def build_server(*, serve_legacy: bool = True) -> Server:
    server = Server("robustness-server", "1.0.0", page_size=2, serve_legacy=serve_legacy)

    @server.tool(
        input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}
    )
    def echo(message: str) -> str:
        """Return the message unchanged."""
        return message

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "priority": {"type": "integer", "x-mcp-header": "Priority"},
                "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            },
            "required": ["region"],
        }
    )
    def route(region: str, priority: int = 0, dry_run: bool = False) -> str:
        """Echo the arguments that travel in headers too."""
        return f"{region}:{priority}:{dry_run}"

    @server.tool(input_schema={"type": "object"})
    def whoami() -> str:
        """The id of the process that served this request."""
        return str(os.getpid())

    @server.tool(
        input_schema={"type": "object", "properties": {"seat": {"type": "string"}}, "required": ["seat"]},
        requires={"elicitation": {}},
    )
    def book(seat: str, ctx: RequestContext) -> str | InputRequired:
        """Book a seat after the user confirms it; the seat and the asking process travel in requestState."""
        answer = ctx.input_response("confirm")
        if ctx.state is None or answer is None:
            form = elicit_form(f"Book seat {seat}?", {"ok": {"type": "boolean"}}, ["ok"])
            return InputRequired({"confirm": form}, state={"seat": seat, "asked_by": os.getpid()})
        if ctx.state.get("seat") != seat:
            raise ToolError("the confirmation was for another seat")
        # The answer is the client's word: check its shape before trusting any of it.
        content = answer.get("content")
        if answer.get("action") != "accept" or not isinstance(content, dict) or content.get("ok") is not True:
            return "Not booked."
        return f"Booked {seat}: asked by {ctx.state['asked_by']}, booked by {os.getpid()}"

    @server.tool(input_schema={"type": "object"})
    async def survey(ctx: RequestContext) -> str:
        """Report progress and log, for requests that ask for either."""
        await ctx.log("info", {"step": 1})
        await ctx.report_progress(1, 2, "halfway")
        await ctx.report_progress(2, 2)
        return "surveyed"

    @server.tool(input_schema={"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]})
    def touch(uri: str) -> str:
        """Tell listeners subscribed to `uri` that it changed."""
        server.notify_resource_updated(uri)
        return f"touched {uri}"

    @server.tool(input_schema={"type": "object"})
    def fail() -> str:
        """Always fails on its own terms (isError)."""
        raise ToolError("this tool always fails")

    @server.resource(GREETING_URI, mime_type="text/plain")
    def greeting() -> str:
        """A fixed greeting."""
        return "hello"

    @server.resource_template("robust://items/{item_id}", mime_type="text/plain")
    def item(item_id: str) -> str:
        """One item, named by its id."""
        return f"item {item_id}"

    @server.prompt(arguments={"name": "who to greet"}, complete={"name": lambda value: ["ada", "alan"]})
    def greet(name: str) -> str:
        """Greet someone."""
        return f"Say hello to {name}."

    return server


server = build_server()
app = StreamableHTTP(server)

__all__ = ["GREETING_URI", "app", "build_server", "server"]
