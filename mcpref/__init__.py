"""mcpref: a readable reference implementation of MCP revision 2026-07-28.

One protocol core (this package) that every example builds on; each spec concept has its own
module: `jsonrpc` (framing, errors), `meta` (per-request `_meta`, versions), `headers`
(Streamable HTTP's mirrored headers), `caching`, `pagination`, `tools`, `resources`,
`prompts`, `completion`, `server` (the dispatcher), `origins`, and `transports.http`.
"""

from .caching import CacheHints
from .context import RequestContext
from .jsonrpc import MCPError
from .meta import LATEST_VERSION, MODERN_VERSIONS
from .origins import OriginPolicy
from .resources import ResourceNotFound
from .server import Server
from .tools import ToolError, ToolResult, text
from .transports.http import StreamableHTTP

__all__ = [
    "LATEST_VERSION",
    "MODERN_VERSIONS",
    "CacheHints",
    "MCPError",
    "OriginPolicy",
    "RequestContext",
    "ResourceNotFound",
    "Server",
    "StreamableHTTP",
    "ToolError",
    "ToolResult",
    "text",
]
