"""The MCP client: `Client` over Streamable HTTP (httpx underneath) or stdio, with typed errors.

```python
from mcpref.client import Client

async with Client("http://127.0.0.1:8000/mcp") as client:
    result = await client.call_tool(
        "convert_temperature", {"value": 20, "from": "C", "to": "F"}
    )
```

Private modules, one concept each: `_client` (the public methods), `_transport` (what a
transport must do) and the transports `_http` and `_stdio`, `_era` (legacy or modern, per
origin), `_cache` (ttlMs/cacheScope), `_input` (answering input requests, the MRTR loop),
`_listen` (subscriptions), `_tasks` (waiting for a task), `_auth` (OAuth), `_grants` (OAuth
without a user), `_redirect` (the loopback redirect for command-line clients), `_errors`.
"""

from ._auth import AuthorizationError, ClientRegistration, OAuth, Tokens, TokenStore, client_metadata_document
from ._cache import CacheKey, ResultCache
from ._client import Client
from ._era import DEFAULT_ERA_CACHE, EraCache, EraInfo, origin_of
from ._errors import (
    HeaderMismatch,
    InternalError,
    InvalidParams,
    InvalidRequest,
    MCPClientError,
    MethodNotFound,
    MissingRequiredClientCapability,
    ParseError,
    ProtocolError,
    SessionExpired,
    TransportError,
    UnsupportedProtocolVersion,
    error_from,
)
from ._grants import ClientCredentials, EnterpriseManaged, JWTBearer
from ._http import HTTPTransport, default_ssl_context
from ._input import InputHandler, InputHandlers
from ._listen import Subscription
from ._redirect import LoopbackRedirect
from ._results import (
    CompletionResult,
    DiscoverResult,
    PromptInfo,
    PromptResult,
    ReadResourceResult,
    ResourceContents,
    ResourceInfo,
    ResourceTemplateInfo,
    TaskInfo,
    ToolCallResult,
    ToolInfo,
)
from ._stdio import StdioTransport
from ._tasks import TaskCancelled
from ._transport import Transport

__all__ = [
    "DEFAULT_ERA_CACHE",
    "AuthorizationError",
    "CacheKey",
    "Client",
    "ClientCredentials",
    "ClientRegistration",
    "CompletionResult",
    "DiscoverResult",
    "EnterpriseManaged",
    "EraCache",
    "EraInfo",
    "HTTPTransport",
    "HeaderMismatch",
    "InputHandler",
    "InputHandlers",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "JWTBearer",
    "LoopbackRedirect",
    "MCPClientError",
    "MethodNotFound",
    "MissingRequiredClientCapability",
    "OAuth",
    "ParseError",
    "PromptInfo",
    "PromptResult",
    "ProtocolError",
    "ReadResourceResult",
    "ResourceContents",
    "ResourceInfo",
    "ResourceTemplateInfo",
    "ResultCache",
    "SessionExpired",
    "StdioTransport",
    "Subscription",
    "TaskCancelled",
    "TaskInfo",
    "TokenStore",
    "Tokens",
    "ToolCallResult",
    "ToolInfo",
    "Transport",
    "TransportError",
    "UnsupportedProtocolVersion",
    "client_metadata_document",
    "default_ssl_context",
    "error_from",
    "origin_of",
]
