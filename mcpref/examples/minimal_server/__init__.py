"""The smallest useful MCP 2026-07-28 server: one tool, served over Streamable HTTP.

Run it with `uvicorn mcpref.examples.minimal_server:app` and POST to http://127.0.0.1:8000/mcp.
"""

from mcpref import Server, StreamableHTTP

server = Server("minimal-server", "1.0.0")


@server.tool(
    input_schema={
        "type": "object",
        "properties": {"message": {"type": "string", "description": "Text to send back"}},
        "required": ["message"],
    },
)
async def echo(message: str) -> str:
    """Return the message unchanged."""
    # `async def` because it never blocks: a plain `def` handler would run in a worker thread.
    return message


app = StreamableHTTP(server)
