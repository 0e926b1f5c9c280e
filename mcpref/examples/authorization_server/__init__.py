"""A local OAuth 2.1 authorization server, so the authorization examples run with no outside service.

The MCP specification leaves the authorization server out of its scope (basic/authorization/,
"Roles"); an MCP deployment uses one it already has. This one does what the examples, the docs
and the tests need, and no more:

- metadata (RFC 8414) at `/.well-known/oauth-authorization-server` (path-inserted under a mount
  point), with `authorization_response_iss_parameter_supported` and
  `client_id_metadata_document_supported`;
- the authorization code grant with PKCE, S256 only (OAuth 2.1 §4.1), `iss` in every
  authorization response (RFC 9207), and the `resource` parameter (RFC 8707) required and bound
  into the token's audience (`aud`);
- refresh tokens, rotated on each use (OAuth 2.1 §4.3.1), bound to client, user and resource;
- clients pre-registered (public or with a secret), or identified by a client ID metadata
  document (an HTTPS URL the server fetches: `metadata_documents.MetadataDocuments`, public
  addresses only, one deadline, a size bound, a cache, a cap on fetches at once);
- what strangers can make it hold is bounded: forms are small and urlencoded only
  (`MAX_FORM_BYTES`), and each table of consents, codes and refresh tokens refuses a new entry
  past `MAX_PENDING` live ones rather than drop someone's;
- access tokens as signed JWTs (RFC 9068, `typ: at+jwt`) with joserfc; the public keys at
  `jwks_uri`. The signing key comes from `MCPREF_AS_SIGNING_KEY` (a PEM EC P-256 key) or is
  generated per process, so tokens die with the process unless a key is configured.

Browser clients (CORS): the metadata and the keys are public documents, readable from any origin;
the token endpoint answers a public client's page on the origin of one of the client's own
redirect URIs (the page the code came back to; a loopback one on any port); the authorization
endpoint has no CORS at all, since a browser navigates to it and never fetches it.

Signing in is a stand-in: the consent page lets the user pick one of the configured users and
approve; `auto_approve="alice"` skips the page (tests, the docs' frames, the conformance run).
A real deployment puts its own login here.

Run it: `uvicorn mcpref.examples.authorization_server:app --port 9000` (the issuer is then
`MCPREF_AS_ISSUER`, default http://127.0.0.1:9000).
"""

from __future__ import annotations

import base64
import html
import os
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urlencode, urlsplit

from authlib.common.security import generate_token
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, KeySetSerialization
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from mcpref.auth import public_cors

from .metadata_documents import Busy, MetadataDocuments, Refused

#: How long an authorization code, an access token and a refresh token live, in seconds.
CODE_LIFETIME = 60
ACCESS_TOKEN_LIFETIME = 3600
REFRESH_TOKEN_LIFETIME = 30 * 24 * 3600
#: What the server keeps in memory at most, of each: pending consents, unused codes, refresh
#: tokens. Past it the expired go; if none has, the new one is refused, never an old one dropped.
MAX_PENDING = 10_000
#: The largest form the token endpoint and the consent decision read, in bytes (a token request
#: is a few hundred); they read `application/x-www-form-urlencoded` only (no multipart).
MAX_FORM_BYTES = 16 * 1024
#: Fields in one form, at most.
MAX_FORM_FIELDS = 32
FORM_TYPE = "application/x-www-form-urlencoded"
#: How soon a client refused for load (503) may try again, in seconds.
RETRY_AFTER = "5"

SCOPES = ("mcp:tools", "mcp:admin", "offline_access")
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


@dataclass
class RegisteredClient:
    client_id: str
    redirect_uris: Sequence[str]
    #: None for a public client (PKCE only, `token_endpoint_auth_method` none).
    client_secret: str | None = None
    client_name: str = ""


@dataclass
class Grant:
    """What a code or a refresh token stands for."""

    client_id: str
    user: str
    scope: list[str]
    resource: str
    expires_at: float
    redirect_uri: str = ""
    code_challenge: str = ""


@dataclass
class AuthorizationServer:
    """The server's state: its issuer, its key, its clients and users, and the grants in flight."""

    issuer: str
    key: ECKey
    clients: dict[str, RegisteredClient]
    users: Sequence[str] = ("alice", "bob")
    #: Resource URIs tokens may be minted for; empty means any absolute URI without a fragment.
    resources: Sequence[str] = ()
    auto_approve: str | None = None
    #: Fetches client ID metadata documents (public https URLs only, unless configured for tests).
    documents: MetadataDocuments = field(default_factory=MetadataDocuments)
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    codes: dict[str, Grant] = field(default_factory=dict)
    refresh_tokens: dict[str, Grant] = field(default_factory=dict)

    # -- metadata ---------------------------------------------------------------------------

    def metadata(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "jwks_uri": f"{self.issuer}/jwks",
            "scopes_supported": list(SCOPES),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "authorization_response_iss_parameter_supported": True,
            "client_id_metadata_document_supported": True,
        }

    def jwks(self) -> KeySetSerialization:
        return KeySet([self.key]).as_dict(private=False)

    # -- tokens -----------------------------------------------------------------------------

    def access_token(self, grant: Grant, now: float) -> str:
        """A JWT access token (RFC 9068): who (`sub`), for which resource (`aud`), what (`scope`)."""
        claims = {
            "iss": self.issuer,
            "sub": grant.user,
            "aud": grant.resource,
            "client_id": grant.client_id,
            "scope": " ".join(grant.scope),
            "iat": int(now),
            "exp": int(now) + ACCESS_TOKEN_LIFETIME,
            "jti": generate_token(16),
        }
        return jwt.encode({"alg": "ES256", "typ": "at+jwt", "kid": self.key.kid}, claims, self.key)

    def token_response(self, grant: Grant, now: float) -> JSONResponse:
        """The token response (OAuth 2.1 §3.2.3), always with a fresh refresh token: the server
        rotates them, so a stolen one works once at most, and its theft shows."""
        body: dict[str, Any] = {
            "access_token": self.access_token(grant, now),
            "token_type": "Bearer",
            "expires_in": ACCESS_TOKEN_LIFETIME,
            "scope": " ".join(grant.scope),
        }
        refresh = generate_token(48)
        kept = self._keep(
            self.refresh_tokens,
            refresh,
            Grant(grant.client_id, grant.user, grant.scope, grant.resource, now + REFRESH_TOKEN_LIFETIME),
        )
        if kept:  # else this sign-in gets none (OAuth 2.1 §3.2.3 makes it optional) and no one loses theirs
            body["refresh_token"] = refresh
        return JSONResponse(body, headers=NO_STORE)

    def _keep(self, table: dict[str, Any], key: str, value: Any) -> bool:
        """Keep `value` unless `table` holds MAX_PENDING live entries: memory stays bounded, and
        a flood of sign-ins cannot push out anyone's code or refresh token, only wait for them
        to expire. Whether it was kept."""
        if len(table) >= MAX_PENDING:
            now = time.time()
            for stale in [k for k, v in table.items() if _expires_at(v) < now]:
                del table[stale]
            if len(table) >= MAX_PENDING:
                return False
        table[key] = value
        return True


def _expires_at(entry: Grant | dict[str, Any]) -> float:
    return entry.expires_at if isinstance(entry, Grant) else float(entry["expires_at"])


RETRY_LATER = {"Retry-After": RETRY_AFTER}


async def read_form(request: Request, refuse: Callable[[int, str], Response]) -> dict[str, str] | Response:
    """The request's form, or `refuse(status, why)`'s answer: 415 for anything but
    `application/x-www-form-urlencoded` (OAuth 2.1 §3.2; a multipart body is never read, nor
    spooled to disk), 413 past `MAX_FORM_BYTES` (read no further), 400 for more than
    `MAX_FORM_FIELDS` fields, a field sent twice (RFC 6749 §3.2) or bytes that are not ASCII."""
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != FORM_TYPE:
        return refuse(415, f"the body must be {FORM_TYPE}")
    length = request.headers.get("content-length")
    too_large = f"the form is larger than {MAX_FORM_BYTES} bytes"
    if length is not None and (not length.isdigit() or int(length) > MAX_FORM_BYTES):
        return refuse(413, too_large)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return refuse(413, too_large)
    try:
        pairs = parse_qsl(body.decode("ascii"), keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS)
    except UnicodeDecodeError:
        return refuse(400, "a form is ASCII, anything else percent-encoded")
    except ValueError:
        return refuse(400, f"a form has {MAX_FORM_FIELDS} fields at most")
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            return refuse(400, f"{name} is sent twice")
        form[name] = value
    return form


def oauth_error(error: str, description: str, status: int = 400, **headers: str) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status, headers={**NO_STORE, **headers})


def redirect_allowed(registered: Sequence[str], requested: str) -> bool:
    """Exact match, except that a registered loopback IP redirect takes any port (RFC 8252 §7.3,
    OAuth 2.1 §8.4.2: a native app listens on whatever port the OS gives it), registered with a
    port or without one. A URI with a fragment never matches."""
    if "#" in requested:
        return False  # a redirection URI has no fragment (RFC 6749 §3.1.2): the code would go after it
    if requested in registered:
        return True
    asked = urlsplit(requested)
    if asked.scheme != "http" or asked.hostname not in ("127.0.0.1", "::1"):
        return False
    for uri in registered:
        known = urlsplit(uri)
        if (known.scheme, known.hostname, known.path, known.query) == ("http", asked.hostname, asked.path, asked.query):
            return True
    return False


def web_origin_allowed(client: RegisteredClient, origin: str) -> bool:
    """Whether a page on `origin` may read this client's token responses: it is the origin of one
    of the client's redirect URIs, where the code arrived (a loopback IP one on any port, as for the
    redirect itself)."""
    origins = [f"{parts.scheme}://{parts.netloc}" for parts in map(urlsplit, client.redirect_uris)]
    return redirect_allowed(origins, origin)


def valid_resource(server: AuthorizationServer, resource: str | None) -> bool:
    if not resource:
        return False
    if server.resources:
        return resource in server.resources
    parts = urlsplit(resource)
    return bool(parts.scheme and parts.netloc) and "#" not in resource


async def client_for(server: AuthorizationServer, client_id: str, request: Request) -> RegisteredClient:
    """A pre-registered client, or the one a client ID metadata document describes; `Refused`
    (`Busy` when too many documents are being fetched, or too many for this peer) for any other."""
    if client_id in server.clients:
        return server.clients[client_id]
    document = await server.documents.get(client_id, caller=request.client.host if request.client else "")
    return RegisteredClient(client_id, list(document.redirect_uris), None, document.client_name)


def create_app(
    issuer: str | None = None,
    *,
    clients: Sequence[RegisteredClient] = (),
    users: Sequence[str] = ("alice", "bob"),
    resources: Sequence[str] = (),
    auto_approve: str | None = None,
    documents: MetadataDocuments | None = None,
    signing_key_pem: str | None = None,
) -> Starlette:
    """The authorization server as a Starlette app, serving `issuer` (its own base URL);
    `documents` fetches client ID metadata documents (`MetadataDocuments(insecure_hosts=...)` to
    fetch them from loopback in tests)."""
    pem = signing_key_pem or os.environ.get("MCPREF_AS_SIGNING_KEY")
    key = ECKey.import_key(pem) if pem else ECKey.generate_key("P-256")
    key.ensure_kid()
    server = AuthorizationServer(
        (issuer or os.environ.get("MCPREF_AS_ISSUER", "http://127.0.0.1:9000")).rstrip("/"),
        key,
        {client.client_id: client for client in clients},
        users,
        resources,
        auto_approve,
        documents or MetadataDocuments(),
    )
    prefix = urlsplit(server.issuer).path

    def public(document: Mapping[str, Any], request: Request) -> Response:
        """A public document, and the answer to a browser's preflight for it."""
        cors = public_cors(request.headers)
        if request.method == "OPTIONS":
            return Response(status_code=204, headers=cors)
        return JSONResponse(document, 200, cors)

    async def metadata(request: Request) -> Response:
        return public(server.metadata(), request)

    async def jwks(request: Request) -> Response:
        return public(server.jwks(), request)

    async def authorize(request: Request) -> Response:
        """The authorization endpoint: check the request, then ask the user (or auto-approve)."""
        query = request.query_params
        try:
            client = await client_for(server, query.get("client_id", ""), request)
        except Busy:
            return HTMLResponse("<h1>Too many sign-ins at once: try again shortly</h1>", 503, RETRY_LATER)
        except Refused:
            client = None
        redirect_uri = query.get("redirect_uri", "")
        if client is None or not redirect_allowed(client.redirect_uris, redirect_uri):
            # Never redirect to a URI that is not the client's (OAuth 2.1 §4.1.2.1): say so here.
            return HTMLResponse("<h1>Unknown client or redirect URI</h1>", 400)

        def refuse(error: str, description: str) -> Response:
            return redirect_back(redirect_uri, query.get("state"), error=error, error_description=description)

        if query.get("response_type") != "code":
            return refuse("unsupported_response_type", "only the authorization code flow is offered")
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return refuse("invalid_request", "PKCE with S256 is required")
        if not valid_resource(server, query.get("resource")):
            return refuse("invalid_target", "resource must name an MCP server this server issues tokens for")
        scope = [s for s in query.get("scope", "mcp:tools").split() if s]
        if not set(scope) <= set(SCOPES):
            return refuse("invalid_scope", f"unknown scope; offered: {' '.join(SCOPES)}")
        request_id = secrets.token_urlsafe(24)
        kept = server._keep(
            server.pending,
            request_id,
            {
                "client_id": client.client_id,
                "redirect_uri": redirect_uri,
                "state": query.get("state"),
                "scope": scope,
                "resource": query["resource"],
                "code_challenge": query["code_challenge"],
                "expires_at": time.time() + 600,
            },
        )
        if not kept:
            return refuse("temporarily_unavailable", "too many sign-ins in progress; try again shortly")
        if server.auto_approve is not None:
            return approve(request_id, server.auto_approve)
        return consent_page(client, scope, query["resource"], request_id, redirect_uri)

    def consent_page(
        client: RegisteredClient, scope: list[str], resource: str, request_id: str, redirect_uri: str
    ) -> Response:
        """The user's decision. It names where approval sends them (security-considerations.mdx:
        the redirect's host, plainly) and warns when that is this computer, where any local
        program could be listening."""
        users = "".join(f'<option value="{html.escape(u)}">{html.escape(u)}</option>' for u in server.users)
        name = html.escape(client.client_name or client.client_id)
        host = urlsplit(redirect_uri).hostname or ""
        local = host in ("127.0.0.1", "::1", "localhost")
        warning = (
            "<p><strong>This app runs on your own computer.</strong> Approve only if you started it.</p>"
            if local
            else ""
        )
        page = f"""<!doctype html><title>Authorize {name}</title>
<h1>{name} asks for access</h1>
<p>to <code>{html.escape(resource)}</code> with scope <code>{html.escape(" ".join(scope))}</code>.</p>
<p>Approving sends you to <strong>{html.escape(host)}</strong>.</p>{warning}
<form method="post" action="{prefix}/authorize/decision">
<input type="hidden" name="request" value="{request_id}">
<label>Sign in as <select name="user">{users}</select></label>
<button name="decision" value="approve">Approve</button> <button name="decision" value="deny">Deny</button>
</form>"""
        # The page must not be framed (clickjacking) nor cached.
        return HTMLResponse(page, headers={"X-Frame-Options": "DENY", "Cache-Control": "no-store"})

    async def decision(request: Request) -> Response:
        form = await read_form(request, lambda status, why: HTMLResponse(f"<h1>{html.escape(why)}</h1>", status))
        if isinstance(form, Response):
            return form
        request_id, user = str(form.get("request", "")), str(form.get("user", ""))
        pending = server.pending.get(request_id)
        if pending is None or user not in server.users:
            return HTMLResponse("<h1>This authorization request has expired</h1>", 400)
        if form.get("decision") != "approve":
            server.pending.pop(request_id)
            return redirect_back(
                pending["redirect_uri"], pending["state"], error="access_denied", error_description="the user said no"
            )
        return approve(request_id, user)

    def approve(request_id: str, user: str) -> Response:
        pending = server.pending.pop(request_id)
        now = time.time()
        if now > pending["expires_at"]:
            return HTMLResponse("<h1>This authorization request has expired</h1>", 400)
        code = generate_token(32)
        kept = server._keep(
            server.codes,
            code,
            Grant(
                pending["client_id"],
                user,
                pending["scope"],
                pending["resource"],
                now + CODE_LIFETIME,
                pending["redirect_uri"],
                pending["code_challenge"],
            ),
        )
        if not kept:
            busy = {"error": "temporarily_unavailable", "error_description": "too many sign-ins; try again shortly"}
            return redirect_back(pending["redirect_uri"], pending["state"], **busy)
        return redirect_back(pending["redirect_uri"], pending["state"], code=code)

    def redirect_back(redirect_uri: str, state: str | None, **params: str) -> Response:
        """The authorization response: always with `iss` (RFC 9207), errors included."""
        query = {**params, **({"state": state} if state else {}), "iss": server.issuer}
        separator = "&" if urlsplit(redirect_uri).query else "?"
        location = f"{redirect_uri}{separator}{urlencode(query)}"
        return RedirectResponse(location, 302, headers={"Cache-Control": "no-store"})

    async def token(request: Request) -> Response:
        form = await read_form(request, lambda status, why: oauth_error("invalid_request", why, status))
        if isinstance(form, Response):
            return form
        client = await authenticate(request, form)
        if isinstance(client, Response):
            return client
        response = await exchange(form, client)
        origin = request.headers.get("origin")
        if origin is not None and client.client_secret is None and web_origin_allowed(client, origin):
            # A browser public client (PKCE) reads its tokens, and its errors, on its own origin only.
            response.headers.update({"Access-Control-Allow-Origin": origin, "Vary": "Origin"})
        return response

    async def exchange(form: Mapping[str, Any], client: RegisteredClient) -> Response:
        """The token endpoint's answer for an authenticated client: a code or a refresh token traded."""
        now = time.time()
        grant_type = form.get("grant_type")
        if grant_type == "authorization_code":
            grant = server.codes.pop(str(form.get("code", "")), None)  # single use, whatever happens next
            if grant is None or grant.expires_at < now or grant.client_id != client.client_id:
                return oauth_error("invalid_grant", "unknown, used or expired code")
            if form.get("redirect_uri") != grant.redirect_uri:
                return oauth_error("invalid_grant", "redirect_uri differs from the authorization request")
            verifier = str(form.get("code_verifier", ""))
            if not verifier or not secrets.compare_digest(create_s256_code_challenge(verifier), grant.code_challenge):
                return oauth_error("invalid_grant", "code_verifier does not match the code_challenge")
            if form.get("resource", grant.resource) != grant.resource:
                return oauth_error("invalid_target", "resource differs from the authorization request")
            return server.token_response(grant, now)
        if grant_type == "refresh_token":
            grant = server.refresh_tokens.pop(str(form.get("refresh_token", "")), None)  # rotated
            if grant is None or grant.expires_at < now or grant.client_id != client.client_id:
                return oauth_error("invalid_grant", "unknown, used or expired refresh token")
            if form.get("resource", grant.resource) != grant.resource:
                return oauth_error("invalid_target", "a refresh token serves the resource it was issued for")
            asked = str(form.get("scope", "")).split() or grant.scope
            if not set(asked) <= set(grant.scope):
                return oauth_error("invalid_scope", "a refresh cannot widen the scope")
            return server.token_response(replace(grant, scope=asked), now)
        return oauth_error("unsupported_grant_type", "authorization_code and refresh_token only")

    async def authenticate(request: Request, form: Mapping[str, Any]) -> RegisteredClient | Response:
        """The client at the token endpoint: Basic, secret in the body, or a public client's id."""
        client_id, secret = str(form.get("client_id", "")), form.get("client_secret")
        basic = request.headers.get("authorization", "")
        if basic.lower().startswith("basic "):
            try:
                client_id, secret = _decode_basic(basic[6:])
            except ValueError:
                return oauth_error("invalid_client", "malformed Basic credentials", 401)
        try:
            client = await client_for(server, client_id, request)
        except Busy as busy:
            return oauth_error("temporarily_unavailable", str(busy), 503, **RETRY_LATER)
        except Refused:
            return oauth_error("invalid_client", "unknown client", 401)
        if client.client_secret is not None and not (
            isinstance(secret, str) and secrets.compare_digest(secret, client.client_secret)
        ):
            return oauth_error("invalid_client", "client authentication failed", 401, **{"WWW-Authenticate": "Basic"})
        return client

    well_known = f"/.well-known/oauth-authorization-server{prefix}"
    routes = [
        Route(well_known, metadata, methods=["GET", "HEAD", "OPTIONS"]),
        Route(f"{prefix}/jwks", jwks, methods=["GET", "HEAD", "OPTIONS"]),
        Route(f"{prefix}/authorize", authorize),
        Route(f"{prefix}/authorize/decision", decision, methods=["POST"]),
        Route(f"{prefix}/token", token, methods=["POST"]),
    ]
    app = Starlette(routes=routes)
    app.state.server = server
    return app


def _decode_basic(value: str) -> tuple[str, str]:
    """RFC 6749 §2.3.1: base64 of form-urlencoded id and secret, joined by a colon."""
    try:
        decoded = base64.b64decode(value, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError) as exc:
        raise ValueError("not base64 UTF-8") from exc
    client_id, colon, secret = decoded.partition(":")
    if not colon:
        raise ValueError("no colon")
    return unquote_plus(client_id), unquote_plus(secret)


#: The pre-registered public client the docs use. Its loopback redirect URI names no port: any port
#: is accepted at request time (RFC 8252 §7.3), the one the OS gave the client's listener.
DOCS_CLIENT = RegisteredClient("mcpref-docs", ["http://127.0.0.1/callback"], None, "mcpref docs client")

app = create_app(clients=[DOCS_CLIENT])
