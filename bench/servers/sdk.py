"""The official Python SDK (`mcp`, pinned in the dev extras) with the same tool, served the way
its docs recommend for a stateless deployment: stateless HTTP with JSON responses."""

from mcp.server import MCPServer

mcp = MCPServer("bench-sdk")


@mcp.tool()
def echo(message: str) -> str:
    """Return the message unchanged."""
    return message


app = mcp.streamable_http_app(json_response=True, stateless_http=True)
