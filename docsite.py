"""The docs site app: the built pages on top of every MCP endpoint they talk to, on one origin.

Not an example (those are in mcpref/examples/, each a server a reader could start from), and not
the endpoints either: those are composed in `mcpref.demo`, which `mcpref demo`
serves from an installed package. This adds only the built site (mkdocs output in `site/`) for
every path that is not an endpoint. `./scripts/serve` runs it with uvicorn, at
http://127.0.0.1:8000.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import RedirectResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from mcpref import demo
from mcpref.catchall import plain_response

SITE_DIR = Path(os.environ.get("MCPREF_SITE_DIR", Path(__file__).resolve().parent / "site"))


def make_app(site_dir: Path) -> ASGIApp:
    """Pages from `site_dir` at `/`, on top of the endpoints (`mcpref.demo.make_app`).

    Any path that is not an endpoint is a static site's: 404 for what is not there, 405 for
    anything but GET and HEAD, never a 500.
    """
    pages = Pages(directory=site_dir, html=True, check_dir=False)

    async def site(scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await pages(scope, receive, send)
        except HTTPException as exc:
            await plain_response(send, exc.status_code, exc.detail.encode(), extra=_header_pairs(exc.headers))

    # The pages' text (HTML, CSS, JavaScript, the search index, mermaid's modules) compressed for
    # a browser that asks: a first visit is a fifth of what it was. Only the pages: the MCP
    # endpoints answer exactly as the frames on the pages show.
    return demo.make_app(GZipMiddleware(site, minimum_size=1024))


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


def _header_pairs(headers: dict[str, str] | None) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in (headers or {}).items()]


app = make_app(SITE_DIR)


if __name__ == "__main__":
    # `python -m docsite`: like `uvicorn docsite:app`, but Ctrl+C first ends the open
    # subscriptions/listen streams with their result instead of waiting for listeners to leave.
    import argparse
    import sys

    from mcpref.run import DEFAULT_PORT, port_number, serve_http

    try:
        port = port_number(os.environ.get("PORT", str(DEFAULT_PORT)))
    except argparse.ArgumentTypeError as exc:
        sys.exit(f"./scripts/serve: the PORT environment variable: {exc}")
    base = f"http://127.0.0.1:{port}"
    ready = f"site: {base}/   MCP endpoint (2026-07-28 and 2025-11-25): {base}/mcp"
    serve_http(app, demo.servers(), port=port, ready=ready)
