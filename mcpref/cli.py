"""The `mcpref` command: `mcpref demo` serves every endpoint the site's pages call.

A reader who installed the package, and nothing else, runs `mcpref demo` and every `curl` command
and client block on the pages works as written against http://127.0.0.1:8000. The pages stay
online (`mcpref.demo.SITE_URL`); `/` lists the endpoints. It serves them under the bounds of
`mcpref.limits` and the Origin allowlist of `mcpref.origins`, as `./scripts/serve` does in a
clone, which puts the built pages on top.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import __version__
from .run import add_address_options, add_limit_options, base_url, http_port, limits_from, serve_http

__all__ = ["main"]

#: What a plain install (no `demo` extra) is told, whether it came from a clone or from a wheel.
DEMO_EXTRA = (
    "mcpref demo needs Starlette, which the demo extra brings. Install mcpref again with it, the way you "
    'installed it plus [demo]: pip install "./mcpref[demo]" from the folder that holds a clone, or '
    f'pip install "dist/mcpref-{__version__}-py3-none-any.whl[demo]" with the path of your wheel'
)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="mcpref", description="mcpref, MCP 2026-07-28 explained by code that runs.")
    top.add_argument("--version", action="version", version=f"mcpref {__version__}")
    commands = top.add_subparsers(dest="command", metavar="command", required=True)
    demo = commands.add_parser(
        "demo",
        help="serve every endpoint the site's pages call (/mcp, /modern/mcp, /secure/mcp, /auth, ...)",
        description=(
            "Serve every endpoint the site's pages call, on one origin (http://127.0.0.1:8000 unless --port "
            "says otherwise), so each curl command and client block on a page runs as written. The pages "
            "themselves stay online; GET / lists the endpoints."
        ),
    )
    add_address_options(demo)
    add_limit_options(demo)
    return top


def main(argv: Sequence[str] | None = None) -> None:
    top = parser()
    args = top.parse_args(argv)
    if args.command == "demo":
        serve_demo(args, http_port(top, args))


def serve_demo(args: argparse.Namespace, port: int) -> None:
    try:
        from . import demo
    except ModuleNotFoundError as exc:
        if (exc.name or "").partition(".")[0] != "starlette":
            raise
        sys.exit(DEMO_EXTRA)
    base = base_url(args.host, port)
    # Not "the pages at /": a reader with the wheel has no built pages; / is a list of the endpoints.
    ready = f"mcpref demo: the reference server at {base}/mcp; {base}/ lists every endpoint the pages call"
    ready += f" (the pages: {demo.SITE_URL})"
    serve_http(demo.make_app(), demo.servers(), args.host, port, limits_from(args), ready=ready)
