"""mcpref: a readable reference implementation of MCP revision 2026-07-28.

One protocol core (this package) that every example builds on; each spec concept has its own
module: `jsonrpc` (framing, errors), `meta` (per-request `_meta`, versions), `headers`
(Streamable HTTP's mirrored headers), `caching`, `pagination`, `tools`, `resources`,
`prompts`, `completion`, `mrtr` (input rounds), `server` (the dispatcher), `origins`, and
`transports.http`.

The public surface is what docs/reference/api/ documents: what a server is built from, here
(`from mcpref import Server, ...`), and the public modules `mcpref.extensions`, `mcpref.tasks`,
`mcpref.client`, `mcpref.auth` and `mcpref.run`; the last three bring httpx, joserfc and uvicorn
with them, so `import mcpref` stays light. Each lists its names in `__all__`, and the examples
import nothing else (tests/test_public_surface.py).
"""

from .caching import CacheHints
from .context import RequestContext
from .framelog import FrameLog
from .jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR, MCPError
from .meta import LATEST_VERSION, MODERN_VERSIONS
from .mrtr import InputRequired, create_message, elicit_form, elicit_url, list_roots
from .origins import OriginPolicy
from .resources import ResourceNotFound
from .server import Server
from .tools import ToolError, ToolResult, text
from .transports.http import StreamableHTTP

#: The package's version, its one source: pyproject.toml reads it (setuptools' dynamic version),
#: and the client's `clientInfo` carries it.
__version__ = "0.1.0"

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "LATEST_VERSION",
    "METHOD_NOT_FOUND",
    "MODERN_VERSIONS",
    "PARSE_ERROR",
    "CacheHints",
    "FrameLog",
    "InputRequired",
    "MCPError",
    "OriginPolicy",
    "RequestContext",
    "ResourceNotFound",
    "Server",
    "StreamableHTTP",
    "ToolError",
    "ToolResult",
    "create_message",
    "elicit_form",
    "elicit_url",
    "list_roots",
    "text",
]
