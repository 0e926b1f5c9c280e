"""Step 7: cache hints and pagination. This is the whole guide server; the
site serves it at /guide/mcp."""

from mcpref import CacheHints, Server, StreamableHTTP

# The step before, as mcpref installs it: runs from any folder. To build on
# your own copy of it instead, save it next to this file and write
# `import step6_input`.
from mcpref.examples.guide_server import step6_input
from mcpref.run import main


def build() -> Server:
    server = step6_input.build()
    # The lists change only when the server is deployed again: any client
    # may reuse them for a minute, and a shared cache may hold them, since
    # they do not depend on who asked (server/utilities/caching.mdx).
    server.cache = CacheHints(ttl_ms=60_000, scope="public")
    # Lists come three entries at a time, with a nextCursor to the rest
    # (server/utilities/pagination.mdx).
    server.page_size = 3
    return server


def create_app() -> StreamableHTTP:
    """A fresh endpoint at /guide/mcp, where `mcpref demo` serves it."""
    return StreamableHTTP(build(), path="/guide/mcp")


server = build()
app = StreamableHTTP(server)

if __name__ == "__main__":
    main(server, app)
