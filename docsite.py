"""The docs site app: the documentation site and every MCP endpoint its pages talk to, on one origin.

Not an example (those are in mcpref/examples/, each a server a reader could start from): this composes
them for the site and the docs harness.

`./scripts/serve` runs this with uvicorn: the built pages (mkdocs output in `site/`) at `/`, the
reference server at `/mcp` (both eras, 2025-11-25 and 2026-07-28), the same server 2026-07-28-only
at `/modern/mcp` (for the versioning page; `/dual/mcp` is an old alias of `/mcp`), a second server
at `/tides/mcp` (for the composition page), the server the guides build at `/guide/mcp`, a server
with an extension at `/alerts/mcp`, one whose tools run as tasks at `/tasks/mcp`, and the
authorization demo (the local authorization server at `/auth`, a protected server at
`/secure/mcp`, their well-known metadata), and the MCP Apps sandbox proxy at `/apps/sandbox`, so
every `curl` command on a page works as written against http://127.0.0.1:8000. One ASGI function
picks the app by path; nothing else is shared.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.responses import RedirectResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpref.catchall import CatchAll, plain_response
from mcpref.examples import extension_server, reference_server, tasks_server
from mcpref.examples.guide_server import step7_cache_and_pages as guide_server
from mcpref.examples.host import sandbox
from mcpref.examples.reference_server import tides
from mcpref.examples.secure_server import demo
from mcpref.jsonrpc import INVALID_REQUEST, MCPError, encode, error_response

SITE_DIR = Path(os.environ.get("MCPREF_SITE_DIR", Path(__file__).resolve().parent / "site"))

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
#: What this process serves: one long-lived instance per endpoint; being stateless, it does not care.
ENDPOINTS = {path: factory() for path, factory in MCP_FACTORIES.items()}
#: The authorization demo keeps what an authorization server must (codes, refresh tokens): one instance.
AUTH_DEMO = demo.AuthDemo()


def make_app(site_dir: Path) -> ASGIApp:
    """Pages from `site_dir` at `/`, each MCP endpoint at its own exact path.

    Any other path is a static site's: 404 for what is not there, 405 for anything but GET and
    HEAD, never a 500. A request that looks meant for an MCP endpoint (`/mcp/`, `/MCP`) gets its
    404 as a JSON-RPC error naming the endpoint, so an MCP client shows something useful.
    """
    pages = Pages(directory=site_dir, html=True, check_dir=False)

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            # Nothing to start or stop; the MCP endpoint answers the lifespan protocol for us.
            await ENDPOINTS["/mcp"](scope, receive, send)
            return
        path = scope.get("path", "")
        if demo.handles(path):
            await AUTH_DEMO(scope, receive, send)
            return
        if path == sandbox.PATH:  # MCP Apps: the page's view runs in it, loaded from the other loopback name
            await sandbox.app(scope, receive, send)
            return
        endpoint = ENDPOINTS.get(path)
        if endpoint is not None:
            await endpoint(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        meant = _meant_endpoint(path)
        if meant is not None:
            await _not_an_endpoint(send, meant)
            return
        try:
            await pages(scope, receive, send)
        except HTTPException as exc:
            await plain_response(send, exc.status_code, exc.detail.encode(), extra=_header_pairs(exc.headers))

    return CatchAll(app)


class Pages(StaticFiles):
    """The built site. A directory asked for without its slash (`/guides`) is redirected to
    `/guides/` by path alone: Starlette's own redirect names the host the request claimed in
    `Host`, which the client chooses, so a forged Host turned the site into an open redirect
    (and a cache in front of it into a poisoned one)."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        if not isinstance(response, RedirectResponse):
            return response
        # `path` is the normalized one the file was found under: `//evil.example` cannot come back
        # as a scheme-relative `//evil.example/`.
        query = scope.get("query_string", b"").decode("latin-1")
        location = f"{scope.get('root_path', '')}/{quote(path.strip('/'))}/" + (f"?{query}" if query else "")
        return RedirectResponse(location, response.status_code)


def _meant_endpoint(path: str) -> str | None:
    """The MCP endpoint a near-miss path was probably meant for: a trailing slash, another case."""
    folded = path.rstrip("/").lower()
    return next((endpoint for endpoint in (*ENDPOINTS, demo.SECURE_PATH) if endpoint == folded), None)


async def _not_an_endpoint(send: Send, meant: str) -> None:
    error = MCPError(INVALID_REQUEST, f"Not Found: the MCP endpoint is {meant} (exact path)")
    body = encode(error_response(None, error))
    await plain_response(send, 404, body, content_type=b"application/json")


def _header_pairs(headers: dict[str, str] | None) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in (headers or {}).items()]


app = make_app(SITE_DIR)


if __name__ == "__main__":
    # `python -m docsite`: like `uvicorn docsite:app`, but Ctrl+C first ends the open
    # subscriptions/listen streams with their result instead of waiting for listeners to leave.
    from mcpref.run import serve_http

    serve_http(app, [endpoint.server for endpoint in ENDPOINTS.values()], port=int(os.environ.get("PORT", "8000")))
