"""The authorization demo as `./scripts/serve` runs it: the local authorization server at `/auth`
and the protected MCP server at `/secure/mcp`, on whatever loopback origin a request reached.

An issuer and a resource are URLs, and both must be exactly the URLs clients use: tokens carry
them in `iss` and `aud`, clients compare them character by character. A reader's server is at
http://127.0.0.1:8000, a test's at a port chosen at random; so the demo builds one pair (an
authorization server and the server it protects, sharing one signing key) per origin it is
reached at, for loopback origins only. Any other `Host` is answered 421 (Misdirected Request). A
real deployment configures its URLs instead: `mcpref.examples.secure_server.create_app` and
`mcpref.examples.authorization_server.create_app` take them.

The origin is the request's `Host` read whole (`mcpref.origins.split_host`): a loopback name and
a port, nothing after them, since it goes into the metadata and every challenge. Its state (codes,
refresh tokens, consents in flight) must outlive any number of made-up `Host` values: the origins
at the port the server really listens on are kept for the life of the process (three loopback
names, two schemes: six at most per port); the others (a proxy in front forwarding its own `Host`)
share `MAX_ORIGINS` places, the oldest leaving first, and can never push out the first kind.

The authorization server approves at once as "alice" (`auto_approve`) so the docs' code runs
unattended; `MCPREF_DEMO_CONSENT=1` shows the consent page instead, to click through in a browser.
"""

from __future__ import annotations

import os
from typing import Any

from joserfc.jwk import ECKey, KeySet

from mcpref.examples import authorization_server
from mcpref.examples.authorization_server import DOCS_CLIENT
from mcpref.origins import LOOPBACK_HOSTS, split_host

from . import create_app

AUTH_PREFIX = "/auth"
SECURE_PATH = "/secure/mcp"
#: The paths this demo answers (the rest of the site serves the others).
PATHS = (
    AUTH_PREFIX + "/",
    SECURE_PATH,
    "/.well-known/oauth-authorization-server" + AUTH_PREFIX,
    "/.well-known/oauth-protected-resource" + SECURE_PATH,
)
#: The paths the docs' frames reach (each gets a fresh demo in the harness).
FRAME_PATHS = (
    SECURE_PATH,
    "/.well-known/oauth-protected-resource" + SECURE_PATH,
    "/.well-known/oauth-authorization-server" + AUTH_PREFIX,
    AUTH_PREFIX + "/authorize",
    AUTH_PREFIX + "/token",
    AUTH_PREFIX + "/jwks",
)
#: Origins at another port than the server's own remembered at most (each is a few objects).
MAX_ORIGINS = 64
DEFAULT_PORTS = {"http": 80, "https": 443}


def handles(path: str) -> bool:
    return path.startswith(PATHS[0]) or path in PATHS[1:]


class AuthDemo:
    """An ASGI app: the pair for the request's origin, made on first use."""

    def __init__(self, *, auto_approve: str | None = "alice") -> None:
        self.key = ECKey.generate_key("P-256")
        self.key.ensure_kid()
        self.auto_approve = None if os.environ.get("MCPREF_DEMO_CONSENT") == "1" else auto_approve
        #: The pairs of the origins at the server's own port, kept for the life of the process.
        self.apps: dict[str, tuple[Any, Any]] = {}
        #: The pairs of other origins (`Host` naming another port): MAX_ORIGINS at most.
        self.elsewhere: dict[str, tuple[Any, Any]] = {}

    def pair(self, origin: str, own: bool = True) -> tuple[Any, Any]:
        """The authorization server and the protected server for `origin`; `own`: reached at the
        port the server listens on."""
        table = self.apps if own else self.elsewhere
        if origin not in table:
            if not own and len(table) >= MAX_ORIGINS:
                table.pop(next(iter(table)))
            issuer = origin + AUTH_PREFIX
            server = authorization_server.create_app(
                issuer,
                clients=[DOCS_CLIENT],
                resources=[origin + SECURE_PATH],
                auto_approve=self.auto_approve,
                signing_key_pem=self.key.as_pem(private=True).decode(),
            )
            protected = create_app(origin + SECURE_PATH, issuer, KeySet([self.key]))
            table[origin] = (server, protected)
        return table[origin]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        parts = split_host(host)
        if parts is None or parts[0] not in LOOPBACK_HOSTS:
            body = b"This demo answers loopback origins only."
            length = str(len(body)).encode()
            headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", length)]
            await send({"type": "http.response.start", "status": 421, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        name, port = parts
        scheme = scope.get("scheme", "http")
        origin = f"{scheme}://{f'[{name}]' if ':' in name else name}{'' if port is None else f':{port}'}"
        listening = scope.get("server")
        own = listening is not None and listening[1] == (port or DEFAULT_PORTS.get(scheme))
        server, protected = self.pair(origin, own)
        path = scope["path"]
        app = protected if path == SECURE_PATH or path.endswith(SECURE_PATH) else server
        await app(scope, receive, send)
