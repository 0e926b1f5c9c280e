"""Every endpoint the pages call, on one origin: what `mcpref demo` serves (`mcpref.cli`), and what
the docs site app (`docsite.py`) puts its built pages on top of. Not protocol: it composes the
examples (`mcpref.examples`), the one module of the package that imports them.

The reference server at `/mcp` (both eras, 2025-11-25 and 2026-07-28), the same server
2026-07-28-only at `/modern/mcp` (for the versioning page; `/dual/mcp` is an old alias of `/mcp`), a
second server at `/tides/mcp` (for the composition page), the server the guides build at
`/guide/mcp`, a server with an extension at `/alerts/mcp`, one whose tools run as tasks at
`/tasks/mcp`, and the authorization demo (the local authorization server at `/auth`, a protected
server at `/secure/mcp`, their well-known metadata), and the MCP Apps sandbox proxy at
`/apps/sandbox`, so every `curl` command on a page works as written against http://127.0.0.1:8000.
One ASGI function picks the app by path; nothing else is shared. `make_app` is the one place the
origin is composed: what applies to every path of it belongs there.
"""

from __future__ import annotations

from .catchall import ASGIApp, CatchAll, Message, Receive, Scope, Send, plain_response
from .examples import extension_server, reference_server, tasks_server
from .examples.guide_server import step7_cache_and_pages as guide_server
from .examples.host import sandbox
from .examples.reference_server import tides
from .examples.secure_server import demo
from .jsonrpc import INVALID_REQUEST, MCPError, encode, error_response
from .origins import OriginPolicy
from .server import Server

__all__ = ["ENDPOINTS", "FACTORIES", "ORIGINS", "SITE_ORIGIN", "SITE_URL", "make_app", "meant_endpoint", "servers"]

#: How to build each MCP endpoint, by exact path.
MCP_FACTORIES = {
    "/mcp": reference_server.create_app,
    "/modern/mcp": reference_server.create_modern_app,
    "/dual/mcp": reference_server.create_dual_app,
    "/tides/mcp": tides.create_app,
    "/guide/mcp": guide_server.create_app,
    "/alerts/mcp": extension_server.create_app,
    "/tasks/mcp": tasks_server.create_app,
}
#: What the docs harness builds afresh for each frame, by exact path: the MCP endpoints, and for
#: the authorization demo's paths a whole new demo (authorization server, protected server, key).
FACTORIES = {**MCP_FACTORIES, **dict.fromkeys(demo.FRAME_PATHS, demo.AuthDemo)}
#: Where the site is published (mkdocs.yml's repo_url, on GitHub Pages; a test holds the two
#: together). Its pages' Run controls call the reader's own `mcpref demo` on loopback, so the
#: endpoints allow this origin besides loopback pages and those `MCP_ALLOWED_ORIGINS` lists.
SITE_ORIGIN = "https://mcpref.github.io"
#: The published pages themselves, which `mcpref demo` names as it starts (a reader with the wheel
#: has only the endpoints).
SITE_URL = SITE_ORIGIN + "/mcpref/"
#: Which browser origins the endpoints serve.
ORIGINS = OriginPolicy([SITE_ORIGIN, *OriginPolicy.from_env().allowed])
#: What this process serves: one long-lived instance per endpoint; being stateless, it does not care.
ENDPOINTS = {path: factory() for path, factory in MCP_FACTORIES.items()}
for _endpoint in ENDPOINTS.values():
    _endpoint.origins = ORIGINS
#: The authorization demo keeps what an authorization server must (codes, refresh tokens): one instance.
AUTH_DEMO = demo.AuthDemo()


def servers() -> list[Server]:
    """The MCP servers behind the endpoints: the ones whose listen streams end on shutdown."""
    return [endpoint.server for endpoint in ENDPOINTS.values()]


def make_app(fallback: ASGIApp | None = None) -> ASGIApp:
    """Each MCP endpoint at its own exact path, the authorization demo at its paths, and `fallback`
    (the built pages, in `docsite.py`) for every other HTTP request; without one, `/` lists the
    endpoints and anything else is a plain 404.

    A request that looks meant for an MCP endpoint (`/mcp/`, `/MCP`) gets its 404 as a JSON-RPC
    error naming the endpoint, so an MCP client shows something useful. Never a 500 with a
    traceback: anything unexpected is `CatchAll`'s uniform one.
    """
    rest = fallback or index

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            # Nothing to start or stop; the MCP endpoint answers the lifespan protocol for us.
            await ENDPOINTS["/mcp"](scope, receive, send)
            return
        path = scope.get("path", "")
        if demo.handles(path):
            await AUTH_DEMO(scope, receive, send)
            return
        if path == sandbox.PATH:  # MCP Apps: a page's view runs in it, loaded from the other loopback name
            await sandbox.app(scope, receive, send)
            return
        endpoint = ENDPOINTS.get(path)
        if endpoint is not None:
            await endpoint(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        meant = meant_endpoint(path)
        if meant is not None:
            await _not_an_endpoint(send, meant)
            return
        await rest(scope, receive, send)

    return CatchAll(_readable_from_the_site(app))


def _readable_from_the_site(app: ASGIApp) -> ASGIApp:
    """What a page on another origin needs to show an endpoint's whole answer, on top of the
    endpoints' own CORS (they name an allowed Origin in `Access-Control-Allow-Origin`):

    - every response header readable (`Access-Control-Expose-Headers: *`), so the page's console
      compares `Cache-Control`, `X-Accel-Buffering` and the rest with the documented frame;
    - the Private Network Access answer: before an https page (the published site) may call a
      loopback address, Chromium's preflight asks `Access-Control-Request-Private-Network: true`,
      and goes on only if an allowed preflight says `Access-Control-Allow-Private-Network: true`.

    Only on answers that already allow the request's origin: a refused origin learns nothing more.
    """

    async def with_site_cors(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not any(name == b"origin" for name, _ in scope["headers"]):
            await app(scope, receive, send)
            return
        private_network = scope["method"] == "OPTIONS" and (
            (b"access-control-request-private-network", b"true") in scope["headers"]
        )

        async def send_readable(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                if b"access-control-allow-origin" in names:
                    if b"access-control-expose-headers" not in names:
                        headers.append((b"access-control-expose-headers", b"*"))
                    if private_network:
                        headers.append((b"access-control-allow-private-network", b"true"))
                    message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_readable)

    return with_site_cors


def meant_endpoint(path: str) -> str | None:
    """The MCP endpoint a near-miss path was probably meant for: a trailing slash, another case."""
    folded = path.rstrip("/").lower()
    return next((endpoint for endpoint in (*ENDPOINTS, demo.SECURE_PATH) if endpoint == folded), None)


async def _not_an_endpoint(send: Send, meant: str) -> None:
    error = MCPError(INVALID_REQUEST, f"Not Found: the MCP endpoint is {meant} (exact path)")
    body = encode(error_response(None, error))
    await plain_response(send, 404, body, content_type=b"application/json")


INDEX = (
    "mcpref demo: the endpoints the pages of the mcpref site call.\n\n"
    + "".join(f"  {path}\n" for path in (*ENDPOINTS, demo.SECURE_PATH, demo.AUTH_PREFIX + "/"))
    + "\nPOST MCP requests to one of them; the pages show how.\n"
).encode()


async def index(scope: Scope, receive: Receive, send: Send) -> None:
    """What a browser sees at `/` without the built pages: the list of endpoints; a 404 elsewhere."""
    if scope.get("method") not in ("GET", "HEAD"):
        await plain_response(send, 405, b"Method Not Allowed", extra=[(b"allow", b"GET, HEAD")])
    elif scope.get("path") != "/":
        await plain_response(send, 404, b"Not Found")
    else:
        await plain_response(send, 200, INDEX, content_type=b"text/plain; charset=utf-8")
