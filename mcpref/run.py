"""Run a server from the command line: Streamable HTTP under uvicorn, or stdio.

`python -m mcpref.examples.minimal_server` serves HTTP on 127.0.0.1:8000; `--stdio` serves stdin and
stdout instead. Under HTTP, shutting down (Ctrl+C) first ends every `subscriptions/listen`
stream with its result, as the spec asks, instead of waiting for listeners to leave.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import errno
import math
import os
import socket
import sys
from collections.abc import Iterable, Sequence
from typing import Any

import uvicorn

from .limits import ServerLimits, uvicorn_config
from .server import Server
from .transports.http import StreamableHTTP
from .transports.stdio import serve_stdio

__all__ = ["main", "serve_http"]

#: The port every page's commands call, unless `--port` or `PORT` says otherwise.
DEFAULT_PORT = 8000


class _GracefulUvicorn(uvicorn.Server):
    """uvicorn waits for open responses before shutting down; listen streams never end on
    their own, so end them first. `ready` is printed once it accepts connections, not before."""

    def __init__(self, config: uvicorn.Config, servers: Iterable[Server], ready: str) -> None:
        super().__init__(config)
        self.mcp_servers = list(servers)
        self.ready = ready

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets)
        if self.started:
            print(self.ready, file=sys.stderr, flush=True)

    async def shutdown(self, sockets: Any = None) -> None:
        for server in self.mcp_servers:
            server.end_subscriptions()
        await super().shutdown(sockets)


def serve_http(
    app: Any,
    servers: Iterable[Server],
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    limits: ServerLimits | None = None,
    ready: str | None = None,
) -> None:
    """Serve an ASGI app with uvicorn until Ctrl+C, then shut down cleanly.

    An address it cannot listen on (the port taken by another server, a host that is not this
    machine's) ends the process with one line saying so, exit status 1, before anything is
    printed as served.

    Args:
        app: What to serve: a `StreamableHTTP`, or a larger app mounting several.
        servers: The MCP servers whose listen streams are ended, each with its final result, on
            shutdown (uvicorn would otherwise wait for them to close on their own).
        host: The address to bind; loopback by default, so nothing outside this machine reaches it.
        port: The TCP port.
        limits: What a connection may cost before the app sees a request (header size and time,
            connections, ...; see `mcpref.limits`); by default `ServerLimits()`.
        ready: The line printed on stderr once connections are accepted; by default the URL
            (the MCP endpoint's, for a `StreamableHTTP` on one path) and how to stop.

    Raises:
        SystemExit: The address cannot be listened on; the message says why and what to do.
    """
    # uvicorn's INFO lines (process started, startup complete...) would come before `ready` and
    # say less; its warnings and errors (a failing request's traceback) still print.
    config = uvicorn_config(app, limits or ServerLimits(), host=host, port=port, access_log=False, log_level="warning")
    listening = _listen(host, port)
    # uvicorn re-raises Ctrl+C after a clean shutdown; there is nothing left to report.
    with contextlib.suppress(KeyboardInterrupt):
        _GracefulUvicorn(config, servers, ready or _serving(app, host, port)).run([listening])


def _serving(app: Any, host: str, port: int) -> str:
    """What to open: the endpoint itself when the app is one (its root answers 404)."""
    path = app.path if isinstance(app, StreamableHTTP) and app.path else ""
    return f"Serving at {base_url(host, port)}{path} (Ctrl+C stops)"


def base_url(host: str, port: int) -> str:
    """`http://host:port`, an IPv6 address in brackets (`http://[::1]:8000`)."""
    return f"http://{f'[{host}]' if ':' in host else host}:{port}"


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, bound here rather than by uvicorn so that a taken port is one plain
    sentence with the way out, not uvicorn's log line after the server said it was serving."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            sys.exit(
                f"Port {port} on {host} is in use: another server (an mcpref demo?) listens there. "
                "Stop it, or choose another port: --port N (or PORT=N)."
            )
        sys.exit(f"Cannot listen on {host} port {port}: {exc.strerror or exc}.")
    return sock


def main(server: Server, app: Any = None, argv: Sequence[str] | None = None) -> None:
    """A server module's command line (`python -m ...`): HTTP on loopback by default, `--stdio`
    for stdin/stdout, and options for the address, the connection limits and the listen slots.

    Args:
        server: The server to run.
        app: What to serve over HTTP when it is more than `StreamableHTTP(server)`.
        argv: The arguments; None reads `sys.argv`.
    """
    parser = argparse.ArgumentParser(prog=_prog(), description=f"Run the MCP server {server.info['name']!r}.")
    parser.add_argument("--stdio", action="store_true", help="serve stdin/stdout instead of HTTP")
    add_address_options(parser)
    add_limit_options(parser)
    parser.add_argument("--max-listen-streams", type=int, help="open subscriptions/listen streams in all")
    parser.add_argument("--max-listen-per-caller", type=int, help="open listen streams for one caller")
    args = parser.parse_args(argv)
    if args.max_listen_streams is not None:
        server.subscriptions.max_subscriptions = args.max_listen_streams
    if args.max_listen_per_caller is not None:
        server.subscriptions.max_per_caller = args.max_listen_per_caller
    if args.stdio:
        if sys.stdin.isatty():
            # stdout is the protocol channel, so the hint goes to stderr.
            print(STDIO_TERMINAL_HINT, file=sys.stderr, flush=True)
        serve_stdio(server)
    else:
        serve_http(app or StreamableHTTP(server), [server], args.host, http_port(parser, args), limits_from(args))


STDIO_TERMINAL_HINT = "Reading JSON-RPC messages from stdin, one per line; answers go to stdout. Ctrl+D ends."


def _prog() -> str | None:
    """`python -m mcpref.examples.minimal_server` when run with -m, where argparse would say `__main__.py`."""
    spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    if spec is None or not spec.name:
        return None  # run as a script: argparse's own guess, the script's name, is right
    return f"python -m {spec.name.removesuffix('.__main__')}"


def add_address_options(parser: argparse.ArgumentParser) -> None:
    """`--host` (loopback unless told otherwise) and `--port`. `PORT` is read only when the port
    is needed (`http_port`): `--help` or `--stdio` work whatever it holds."""
    parser.add_argument("--host", default="127.0.0.1", help="HTTP address to bind (default: loopback)")
    parser.add_argument(
        "--port",
        type=port_number,
        help=f"HTTP port (default: the PORT environment variable, else {DEFAULT_PORT})",
    )


def port_number(text: str) -> int:
    """A TCP port as `--port` and `PORT` give it: a whole number from 1 to 65535.

    Args:
        text: The value as typed.

    Returns:
        The port.

    Raises:
        argparse.ArgumentTypeError: Anything else, with a message that says what a port is.
    """
    try:
        port = int(text)
    except ValueError:
        port = 0
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a TCP port (a whole number from 1 to 65535)")
    return port


def http_port(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """`--port`, else the `PORT` environment variable, else 8000; a `PORT` that is no port is a
    usage error (`parser.error`: one line and exit status 2), as a bad `--port` is."""
    if args.port is not None:
        port: int = args.port
        return port
    if "PORT" not in os.environ:
        return DEFAULT_PORT
    try:
        return port_number(os.environ["PORT"])
    except argparse.ArgumentTypeError as exc:
        parser.error(f"the PORT environment variable: {exc}; set it to a port or give --port N")


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """One option per field of `ServerLimits`: `--max-header-bytes`, `--header-timeout`..., each
    a positive number (`--max-connections -1` or `--header-timeout nan` served with no limit)."""
    for field in dataclasses.fields(ServerLimits):
        parser.add_argument(
            "--" + field.name.replace("_", "-"),
            type=_positive_int if isinstance(field.default, int) else _positive_float,
            default=field.default,
            help=f"{field.metadata['help']} (default: {field.default})",
        )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < math.inf:  # nan compares false
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds")
    return value


def limits_from(args: argparse.Namespace) -> ServerLimits:
    return ServerLimits(**{field.name: getattr(args, field.name) for field in dataclasses.fields(ServerLimits)})
