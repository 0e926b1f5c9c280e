"""The legacy era: serving 2025-11-25 clients (and 2025-06-18) without a session.

A legacy client starts with `initialize`, then sends plain requests that carry no per-request
`_meta` and name their version only in the `MCP-Protocol-Version` header
(basic/versioning.mdx §Dual-era servers). This server answers them from the same registries,
statelessly:

- `initialize` gets an `InitializeResult`, and no `Mcp-Session-Id` is minted: every later
  request is served on its own, exactly like a modern one.
- Results take the legacy shape: no `resultType`, no `ttlMs`/`cacheScope`, no serverInfo in
  `_meta` (serverInfo was given once, in the `InitializeResult`).
- Errors take the legacy codes: a missing resource is -32002, not -32602.
- `ping` is answered.

What cannot work without a session, and what the server answers instead:

- Server-to-client requests (elicitation, sampling, roots) need the server to wait on a stream
  for the client's reply, which a stateless server cannot route. A tool that needs input gets
  an `isError` result saying so; a prompt or resource that needs input gets -32600.
- Change notifications need the GET stream, which is gone (GET is 405): `listChanged` and
  `subscribe` are not advertised, and `resources/subscribe` is -32601.
- `logging/setLevel` would have to be remembered between requests: `logging` is not advertised,
  the method is -32601, and handlers' log messages are not sent to legacy clients.
- Client capabilities arrive only in `initialize`, so later requests are served as if the
  client declared none.
- `notifications/cancelled` cannot reach the request it names (ids are unique only within a
  session), so closing a streamed response is what cancels it, as in 2026-07-28 (2025-11-25
  says a disconnect SHOULD NOT cancel).
- Response streams carry no event ids: with no GET stream there is nothing to resume, so no
  priming event is sent and `Last-Event-ID` is ignored.

tests/conformance/README.md lists the 2025-11-25 conformance checks that this costs.
"""

from __future__ import annotations

from typing import Any, Protocol

from .context import NotifySink
from .jsonrpc import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEGACY_RESOURCE_NOT_FOUND,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    MCPError,
    Request,
)
from .meta import PROTOCOL_VERSION_KEY, SERVER_INFO_KEY, RequestMeta, read_progress_token
from .resources import ResourceNotFound


class Server(Protocol):
    """What answering a legacy request needs of a `mcpref.Server`. Named here rather than
    imported because server.py imports this module: the dependency points one way."""

    info: dict[str, Any]
    instructions: str | None

    def capabilities(self) -> dict[str, Any]: ...

    # Only what a legacy request passes: it always builds `meta`, so the server never reads `_meta` itself.
    async def handle(
        self, request: Request, *, meta: RequestMeta, notify: NotifySink | None, principal: str | None
    ) -> dict[str, Any]: ...


#: Legacy revisions served, newest first; the first is offered to clients asking for another.
#: 2025-03-26 is not offered: its clients send no `MCP-Protocol-Version` header after
#: `initialize` and may send batches, neither of which a stateless server can tell apart from a
#: malformed modern request. A client asking for it is offered 2025-11-25 instead.
LEGACY_VERSIONS = ("2025-11-25", "2025-06-18")

#: Methods a legacy client may call on this server, besides `initialize` and `ping`.
LEGACY_METHODS = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    }
)

#: Legacy methods that only a session can serve, and why; they are -32601 here.
NEEDS_A_SESSION = {
    "logging/setLevel": "the level would have to be kept for later requests",
    "resources/subscribe": "updates are sent on the session's GET stream",
    "resources/unsubscribe": "there are no subscriptions without a session",
}


def is_legacy_request(request: Request, header_version: str | None) -> bool:
    """A request is legacy when it carries no modern `_meta` version and is either the
    `initialize` handshake or names a legacy revision in its `MCP-Protocol-Version` header."""
    if names_modern_version(request.params):
        return False
    return request.method == "initialize" or header_version in LEGACY_VERSIONS


def names_modern_version(params: dict[str, Any]) -> bool:
    """Does the body name its version the modern way, in `params._meta`?"""
    meta = params.get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def read_legacy_meta(request: Request) -> dict[str, Any]:
    """A legacy request's `_meta` (`{}` when it has none), once what the 2025-11-25 schema asks
    of it is checked: an object, and `initialize`'s own parameters. -32602 otherwise, naming
    what is missing, as for any request that breaks its schema (the progress token is
    `meta.read_progress_token`'s to judge, in both eras)."""
    if request.method == "initialize":
        _check_initialize(request.params)
    meta = request.params.get("_meta", {})
    if not isinstance(meta, dict):
        raise MCPError(INVALID_PARAMS, "Invalid params: params._meta must be an object")
    return meta


def _check_initialize(params: dict[str, Any]) -> None:
    """`InitializeRequestParams` requires the client's version, capabilities and identity
    (2025-11-25 schema; `Implementation` requires `name` and `version`). All that is missing
    is named at once, so a client author fixes it in one go."""
    missing = []
    if not isinstance(params.get("protocolVersion"), str):
        missing.append("params.protocolVersion (a string)")
    if not isinstance(params.get("capabilities"), dict):
        missing.append("params.capabilities (an object)")
    info = params.get("clientInfo")
    if not (isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str)):
        missing.append("params.clientInfo (an object with a string name and version)")
    if missing:
        raise MCPError(INVALID_PARAMS, f"Invalid params: initialize needs {', '.join(missing)}")


def negotiate(requested: Any) -> str:
    """The version to answer `initialize` with: the client's, if this server speaks it."""
    return requested if requested in LEGACY_VERSIONS else LEGACY_VERSIONS[0]


async def handle_legacy(
    server: Server,
    request: Request,
    version: str | None,
    notify: NotifySink | None = None,
    *,
    principal: str | None = None,
) -> dict[str, Any]:
    """Answer one legacy request with a result in the legacy shape, or raise `MCPError`.

    `principal` is who is asking, exactly as for a modern request: handles and `requestState`
    minted for a caller are redeemable only by that caller, whatever era they speak."""
    meta = read_legacy_meta(request)
    token = read_progress_token(meta)
    if request.method == "initialize":
        return initialize_result(server, request.params)
    if request.method == "ping":
        return {}
    if request.method in NEEDS_A_SESSION:
        reason = NEEDS_A_SESSION[request.method]
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {request.method} needs a session ({reason})")
    if request.method not in LEGACY_METHODS:
        raise MCPError(METHOD_NOT_FOUND, f"Method not found: {request.method}")
    request_meta = RequestMeta(
        protocol_version=version or LEGACY_VERSIONS[0],
        client_capabilities={},
        progress_token=token,
        raw=meta,
    )
    try:
        result = await server.handle(request, meta=request_meta, notify=notify, principal=principal)
    except MCPError as error:
        if error.code == MISSING_REQUIRED_CLIENT_CAPABILITY:
            required = (error.data or {}).get("requiredCapabilities") or {}
            extensions = required.get("extensions") if isinstance(required, dict) else None
            if isinstance(extensions, dict) and extensions:
                # An extension of 2026-07-28 (a tool that runs only as a task): no legacy client
                # can declare it (SEP-2663 §Backward Compatibility: not defined under 2025-11-25).
                names = ", ".join(sorted(extensions))
                reason = f"this request needs the {names} extension of 2026-07-28, which 2025-era clients cannot use"
                return _cannot(request.method, reason)
            # The handler asked for input; capabilities declared at `initialize` are not known here.
            needed = sorted(required) or ["a capability"]
            return _cannot_ask(request.method, f"this request needs input from the client ({', '.join(needed)})")
        if isinstance(error, ResourceNotFound):
            # 2025-11-25 answers a missing resource with -32002 (server/resources.mdx
            # §Error Handling); 2026-07-28 retired it for -32602.
            error.code = LEGACY_RESOURCE_NOT_FOUND
        raise
    return legacy_shape(request.method, result)


def initialize_result(server: Server, params: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "protocolVersion": negotiate(params.get("protocolVersion")),
        "capabilities": legacy_capabilities(server.capabilities()),
        "serverInfo": server.info,
    }
    if server.instructions is not None:
        result["instructions"] = server.instructions
    return result


def legacy_capabilities(modern: dict[str, Any]) -> dict[str, Any]:
    """What a stateless server can honour for a legacy client: the features, without what
    needs a session. No `listChanged` or `subscribe` (they need the GET stream), and no
    `logging`: a client that sees it sends `logging/setLevel`, and a server that declares it
    may send log messages, which the legacy path never does (server/utilities/logging.mdx).
    Nothing 2026-07-28 added (`extensions`) either."""
    legacy: dict[str, Any] = {name: {} for name in ("tools", "prompts", "resources") if name in modern}
    if "completions" in modern:
        legacy["completions"] = {}
    return legacy


def legacy_shape(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """Strip what 2026-07-28 added to results; refuse what a legacy client cannot act on."""
    if result.get("resultType") == "input_required":
        needed = sorted({r["method"] for r in result.get("inputRequests", {}).values()}) or ["another round"]
        return _cannot_ask(method, f"this request needs input from the client ({', '.join(needed)})")
    shaped = {key: value for key, value in result.items() if key not in ("resultType", "ttlMs", "cacheScope")}
    meta = {key: value for key, value in shaped.pop("_meta", {}).items() if key != SERVER_INFO_KEY}
    if meta:
        shaped["_meta"] = meta
    return shaped


def _cannot_ask(method: str, reason: str) -> dict[str, Any]:
    """A tool reports it as its own failure; a prompt or resource read is refused."""
    return _cannot(method, reason + ", which only 2026-07-28 clients can give a stateless server")


def _cannot(method: str, reason: str) -> dict[str, Any]:
    if method == "tools/call":
        return {"content": [{"type": "text", "text": f"Cannot complete: {reason}."}], "isError": True}
    raise MCPError(INVALID_REQUEST, f"Invalid Request: {reason}")
