"""mcpref as users run it: the minimal example server itself, every protocol check on (headers,
`_meta`, arguments against the schema, result shape). `sse_app` answers the same requests as SSE
streams. Importing the example, rather than a copy, keeps the benchmark honest about what it measures."""

from mcpref import StreamableHTTP
from mcpref.examples.minimal_server import app, server

sse_app = StreamableHTTP(server, stream_responses=True)

__all__ = ["app", "server", "sse_app"]

if __name__ == "__main__":
    # `python -m bench.servers.ours --port N`: mcpref's own runner, which ends listen streams on Ctrl+C.
    from mcpref.run import main

    main(server, app)
