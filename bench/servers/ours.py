"""mcpref with the minimal server's `echo` tool: every protocol check on (headers, `_meta`,
arguments against the schema, result shape). `sse_app` answers the same requests as SSE streams."""

from mcpref import Server, StreamableHTTP

server = Server("bench-mcpref", "1.0.0")


@server.tool(
    input_schema={
        "type": "object",
        "properties": {"message": {"type": "string", "description": "Text to send back"}},
        "required": ["message"],
    },
)
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


app = StreamableHTTP(server)
sse_app = StreamableHTTP(server, stream_responses=True)

if __name__ == "__main__":
    # `python -m bench.servers.ours --port N`: mcpref's own runner, which ends listen streams on Ctrl+C.
    from mcpref.run import main

    main(server, app)
