"""An MCP endpoint as an OAuth 2.1 resource server: the server's part of basic/authorization/.

`ProtectedResource` wraps a `StreamableHTTP` endpoint and answers, before the endpoint sees a byte
of the body:

1. its protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource<path>`;
2. a foreign `Host` on a loopback bind with 421, and a disallowed `Origin` with 403, first, exactly
   as the endpoint would (DNS rebinding: a hostile page learns nothing, not even whether a token
   would have worked);
3. a request without a valid access token with 401 and
   `WWW-Authenticate: Bearer resource_metadata="...", scope="..."`; a token that is expired, forged,
   from another issuer or minted for another resource (its `aud` is not this server) is invalid;
4. a token without the scopes the operation needs with 403 and `error="insufficient_scope"`,
   naming every scope needed, so the client can step up
   ([`basic/authorization/index.mdx` §Scope Challenge Handling](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#scope-challenge-handling)).

Browser clients (CORS): the metadata is a public document, readable by a page from any origin
(`Access-Control-Allow-Origin: *`, no credentials). The endpoint's own answers, the 401/403
challenges included, go to the origins its `OriginPolicy` allows, with `WWW-Authenticate` exposed
to the page, and its preflight (which never carries a token) is the endpoint's: an allowed page
learns it may send `Authorization`.

Which operation a request is comes from its `Mcp-Method` and `Mcp-Name` headers, which the
endpoint then checks against the body (-32020 on any difference), so they cannot lie. A request
without `Mcp-Method` gets the endpoint's own 400 (-32020), not a step-up; only where the endpoint
serves 2025-11-25 clients, whose requests carry no such header, must it hold every scope this
server knows (fail closed). `scope_implies` says which scopes a broader one covers (scope
hierarchies); by default scopes are flat.

The validated token's issuer and subject become the request's principal (`PRINCIPAL_SCOPE_KEY`):
`requestState`, handles and private cache entries are bound to the user, not to one token, so a
refreshed token continues an MRTR round and another user's token does not. The token itself goes
no further: handlers never see it, and the server never sends it anywhere (no token passthrough).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx
from joserfc import jws, jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from .catchall import LINES_PER_SECOND, LogBudget
from .headers import METHOD_HEADER, NAME_HEADER, decode_value
from .jsonrpc import MCPError
from .transports.http import PRINCIPAL_SCOPE_KEY, Receive, Scope, Send, StreamableHTTP

__all__ = ["AccessToken", "InvalidToken", "JWTValidator", "ProtectedResource", "public_cors"]

#: Clock skew allowed on `exp`, `nbf` and `iat`, in seconds.
LEEWAY = 30
#: Signature algorithms accepted on access tokens: asymmetric only, never `none` or HMAC.
ALGORITHMS = ("ES256", "ES384", "RS256", "PS256", "EdDSA")
#: How long fetched keys are trusted before they are fetched again, in seconds.
JWKS_TTL = 300
#: An issuer's keys are fetched at most this often, in seconds: after a failed fetch (tokens are
#: refused meanwhile, so forged tokens naming a trusted issuer cannot turn this server into a
#: flood of fetches), and for a `kid` the keys at hand do not have.
JWKS_RETRY = 10
#: How old the keys at hand may grow while fetching them again fails, in seconds (6 x JWKS_TTL).
#: An outage of the authorization server should not lock every user out at once, but a key it
#: withdrew must stop working some time: past this, its tokens are refused until a fetch succeeds.
JWKS_STALE_LIMIT = 1800
#: How long a JWKS fetch may take before the token it was for is refused, in seconds.
JWKS_TIMEOUT = 5.0

#: Why a token was refused, at INFO, `LINES_PER_SECOND` a second at most: the client only ever
#: sees `invalid_token`.
logger = logging.getLogger("mcpref.auth")


#: How long a browser may keep a preflight's answer, in seconds (as the MCP endpoint's).
PREFLIGHT_MAX_AGE = 600


def public_cors(request_headers: Mapping[str, str]) -> dict[str, str]:
    """The CORS headers of a public document (RFC 9728 and RFC 8414 metadata, a JWKS): any page may
    read it, since it holds nothing secret and no credentials go with it. For a preflight (a
    browser MCP client may add `MCP-Protocol-Version` to a GET), GET with the headers asked for.

    Args:
        request_headers: The request's headers, keyed by lower-case name.

    Returns:
        The CORS response headers by name.
    """
    cors = {"Access-Control-Allow-Origin": "*"}
    if "access-control-request-method" in request_headers:
        asked = request_headers.get("access-control-request-headers", "")
        cors |= {"Access-Control-Allow-Methods": "GET", "Access-Control-Max-Age": str(PREFLIGHT_MAX_AGE)}
        cors |= {"Access-Control-Allow-Headers": asked} if asked else {}
    return cors


class InvalidToken(Exception):
    """The access token is not one this server accepts; the message says why (it is logged, not sent)."""


@dataclass(frozen=True)
class AccessToken:
    """A validated access token: who issued it, whom it names, what it allows, until when.

    Args:
        issuer: The `iss` claim: the authorization server that issued it.
        subject: The `sub` claim: the user (or client) it was issued for.
        scopes: The `scope` claim, split.
        client_id: The `client_id` claim, if any.
        expires_at: The `exp` claim, in epoch seconds.
    """

    issuer: str
    subject: str
    scopes: frozenset[str]
    client_id: str | None
    expires_at: int

    @property
    def principal(self) -> str:
        """The user, as this server binds state to them: unique across issuers."""
        return f"{self.issuer}#{self.subject}"


class JWTValidator:
    """Validates JWT access tokens (RFC 9068) from trusted issuers, for one resource (`audience`).

    `issuers` maps each trusted issuer to its keys: a `KeySet`, or the URL of its JWKS (fetched
    and cached for `JWKS_TTL`; fetched early for a key id it does not know). Hostile tokens cannot
    make it fetch often: one fetch per issuer at a time, at most one every `JWKS_RETRY` seconds
    (a failed one included), and keys no fetch could renew are used up to `JWKS_STALE_LIMIT`.

    Args:
        issuers: Each trusted issuer (its `iss` exactly) mapped to its keys: a `KeySet`, or the
            URL of its JWKS.
        audience: This resource's canonical URI: a token must name it in `aud`
            ([`basic/authorization/index.mdx` §Token Handling](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#token-handling)).
    """

    def __init__(self, issuers: Mapping[str, KeySet | str], audience: str) -> None:
        self.audience = audience
        self._sources = dict(issuers)
        #: Fetched keys by issuer, with when they were fetched.
        self._keys: dict[str, tuple[KeySet, float]] = {}
        #: When each issuer's keys were last asked for, whatever came of it.
        self._tried_at: dict[str, float] = {}
        #: One fetch per issuer at a time: the others wait for its outcome.
        self._fetching: dict[str, asyncio.Lock] = {}

    async def validate(self, token: str) -> AccessToken:
        """Check a token's signature, issuer, audience and lifetime.

        Whatever the token holds, nothing but `InvalidToken` comes out: its header and claims are
        the sender's JSON, of any type.

        Args:
            token: The bearer token, as the `Authorization` header carried it.

        Returns:
            What the token says, once it is checked.

        Raises:
            InvalidToken: The token is not one this server accepts; the message says why.
        """
        try:
            unverified = jws.extract_compact(token.encode("ascii"))
            payload = json.loads(unverified.payload)
        except (JoseError, ValueError, UnicodeError) as exc:
            raise InvalidToken("not a JWT") from exc
        if not isinstance(payload, dict):
            raise InvalidToken("not a JWT")
        issuer, header = payload.get("iss"), unverified.protected
        if not isinstance(issuer, str) or issuer not in self._sources:
            raise InvalidToken(f"issuer {_shown(issuer)} is not trusted here")
        typ, kid = header.get("typ"), header.get("kid")
        if not isinstance(typ, str) or typ.lower() not in ("at+jwt", "application/at+jwt"):
            raise InvalidToken("not an access token (typ must be at+jwt, RFC 9068 §4)")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("kid is not a string")
        keys = await self._keys_for(issuer, kid)
        try:
            claims = jwt.decode(token, keys, algorithms=list(ALGORITHMS)).claims
            jwt.JWTClaimsRegistry(
                leeway=LEEWAY,
                iss={"essential": True, "value": issuer},
                aud={"essential": True, "value": self.audience},
                sub={"essential": True},
                exp={"essential": True},
            ).validate(claims)
            expires_at = int(claims["exp"])
        except (JoseError, ValueError, TypeError, OverflowError) as exc:
            # TypeError: a header field of the wrong type that joserfc reads as it is (`crit`).
            raise InvalidToken(f"rejected: {exc}") from exc
        scope, client_id = claims.get("scope", ""), claims.get("client_id")
        return AccessToken(
            issuer=issuer,
            subject=str(claims["sub"]),
            scopes=frozenset(scope.split() if isinstance(scope, str) else ()),
            client_id=client_id if isinstance(client_id, str) else None,
            expires_at=expires_at,
        )

    async def _keys_for(self, issuer: str, kid: str | None) -> KeySet:
        source = self._sources[issuer]
        if isinstance(source, KeySet):
            return source
        keys = self._fresh(issuer, kid)
        if keys is not None:
            return keys
        async with self._fetching.setdefault(issuer, asyncio.Lock()):
            # A request that waited here finds the fetch it waited for under JWKS_RETRY ago, so it
            # takes that fetch's outcome rather than starting another.
            return await self._fetch(issuer, source)

    def _fresh(self, issuer: str, kid: str | None) -> KeySet | None:
        """The keys at hand, if they are fresh and have `kid` (any, for a token without one)."""
        cached = self._keys.get(issuer)
        if cached is None or time.monotonic() >= cached[1] + JWKS_TTL:
            return None
        return cached[0] if kid is None or any(key.kid == kid for key in cached[0].keys) else None

    async def _fetch(self, issuer: str, source: str) -> KeySet:
        """The issuer's keys fetched again, unless they were asked for under `JWKS_RETRY` ago;
        failing that, the keys at hand while they are under `JWKS_STALE_LIMIT` old."""
        now = time.monotonic()
        cached = self._keys.get(issuer)
        usable = cached[0] if cached and now < cached[1] + JWKS_STALE_LIMIT else None
        tried = self._tried_at.get(issuer)
        if tried is not None and now - tried < JWKS_RETRY:
            if usable is None:
                raise InvalidToken(f"the keys of {issuer} are unavailable: the last fetch failed")
            return usable  # an unknown kid does not buy a fetch every time
        self._tried_at[issuer] = now
        try:
            async with httpx.AsyncClient(timeout=JWKS_TIMEOUT) as http:
                response = await http.get(source)
                response.raise_for_status()
                keys = KeySet.import_key_set(response.json())
        except (httpx.HTTPError, ValueError, JoseError) as exc:
            if usable is None:
                raise InvalidToken(f"the keys of {issuer} could not be fetched") from exc
            return usable
        self._keys[issuer] = (keys, now)
        return keys


ScopeRule = Callable[[str | None, str | None], Collection[str]]


class ProtectedResource:
    """`StreamableHTTP` behind OAuth: pass the endpoint, its canonical URL and how to check tokens.

    It serves the protected resource metadata (RFC 9728) at its well-known path, answers a request
    without a good token with 401 and a `WWW-Authenticate` challenge, one whose token lacks a scope
    with 403 `insufficient_scope`, and passes the rest to the endpoint with the principal.

    Args:
        endpoint: The MCP endpoint it guards.
        resource: This server's canonical URI (RFC 8707), e.g. `https://mcp.example.com/mcp`;
            tokens must name it in `aud`, and its path is the one served.
        authorization_servers: The issuers clients should use, for the metadata document.
        validator: Turns a token into an `AccessToken` or raises `InvalidToken`.
        scopes_supported: The scopes for basic use, published in the metadata and asked for in
            the 401 challenge.
        required_scopes: `required_scopes(method, name)` gives the scopes an operation needs
            (`name`: the tool, prompt or resource); by default `scopes_supported`.
        all_scopes: What a request that does not say what it is (a legacy one) must hold, failing
            closed; by default `scopes_supported`.
        resource_name: A name for people, in the metadata.
        scope_implies: Which scopes a broader one covers, e.g. `{"mcp:admin": ["mcp:tools"]}`
            (servers account for scope hierarchies:
            [`basic/authorization/index.mdx` §Step-Up Authorization Flow](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization#step-up-authorization-flow));
            followed through, so `a` → `b` → `c` lets a token with `a` do what needs `c`. By
            default none: flat.
    """

    def __init__(
        self,
        endpoint: StreamableHTTP,
        *,
        resource: str,
        authorization_servers: Sequence[str],
        validator: JWTValidator,
        scopes_supported: Sequence[str] = (),
        required_scopes: ScopeRule | None = None,
        all_scopes: Sequence[str] | None = None,
        resource_name: str | None = None,
        scope_implies: Mapping[str, Collection[str]] | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.resource = resource
        self.path = urlsplit(resource).path or "/"
        self.metadata_path = "/.well-known/oauth-protected-resource" + urlsplit(resource).path.rstrip("/")
        origin = urlsplit(resource)
        self.metadata_url = f"{origin.scheme}://{origin.netloc}{self.metadata_path}"
        self.validator = validator
        #: Refusals are logged a few a second, so a flood of bad tokens cannot flood the log.
        self._refusals_logged = LogBudget(LINES_PER_SECOND)
        self.scopes_supported = list(scopes_supported)
        self.required_scopes = required_scopes or (lambda method, name: self.scopes_supported)
        #: What a request that does not say what it is must hold (fail closed).
        self.all_scopes = list(all_scopes if all_scopes is not None else scopes_supported)
        #: Each scope with every scope it covers, itself included, followed through.
        self.covers = _closure(scope_implies or {})
        self.document: dict[str, Any] = {
            "resource": self.resource,
            "authorization_servers": list(authorization_servers),
            "bearer_methods_supported": ["header"],
            **({"scopes_supported": self.scopes_supported} if self.scopes_supported else {}),
            **({"resource_name": resource_name} if resource_name else {}),
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.endpoint(scope, receive, send)
            return
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        if scope["path"] == self.metadata_path:
            cors = _encoded(public_cors(headers))
            if scope["method"] == "OPTIONS":
                await _respond(send, 204, b"", cors)
                return
            body = json.dumps(self.document).encode()
            await _respond(send, 200, body, [(b"content-type", b"application/json"), *cors])
            return
        if scope["path"] != self.path:
            await _respond(send, 404, b"Not Found")
            return
        origin = headers.get("origin")
        if (
            scope["method"] == "OPTIONS"
            or not self.endpoint.hosts.allows(headers.get("host"), scope.get("server"))
            or not self.endpoint.origins.allows(origin)
        ):
            # The endpoint's own preflight (no browser sends a token with one), or its own 421 or
            # 403 (DNS rebinding), checked before anything else: a page that renamed a loopback
            # server's address learns nothing, not even that a token is wanted.
            await self.endpoint(scope, receive, send)
            return
        # A page from an allowed origin reads the challenge: the status, and the header that says
        # where to sign in, which a browser hides from scripts unless it is exposed.
        cors = [] if origin is None else [*_cors_for(origin), (b"access-control-expose-headers", b"WWW-Authenticate")]
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await self._challenge(send, 401, scope=self.scopes_supported, cors=cors)
            return
        try:
            access = await self.validator.validate(token.strip())
        except InvalidToken as refused:
            dropped = self._refusals_logged.take()
            if dropped is not None:
                more = f" ({dropped} more not logged)" if dropped else ""
                logger.info("access token refused: %.300s%s", refused, more)
            await self._challenge(send, 401, error="invalid_token", scope=self.scopes_supported, cors=cors)
            return
        needed = self._needed(headers)
        if not set(needed) <= self.held(access.scopes):
            # Name every scope this operation needs and the token had, so one step-up serves both;
            # never offline_access, which is no resource's requirement (index.mdx, Refresh Tokens).
            wanted = (set(needed) | access.scopes) - {"offline_access"}
            await self._challenge(send, 403, error="insufficient_scope", scope=sorted(wanted), cors=cors)
            return
        await self.endpoint({**scope, PRINCIPAL_SCOPE_KEY: access.principal}, receive, send)

    def held(self, granted: frozenset[str]) -> frozenset[str]:
        """The scopes a token holds: those granted, and every scope they imply (`scope_implies`).

        Args:
            granted: The token's scopes.

        Returns:
            Every scope held.
        """
        if not self.covers:
            return granted
        return frozenset().union(granted, *(self.covers.get(scope, ()) for scope in granted))

    def _needed(self, headers: Mapping[str, str]) -> Collection[str]:
        """The scopes the operation the headers name needs. The endpoint then refuses (-32020)
        any request whose headers are not its body's, so these cannot lie about what runs."""
        method = headers.get(METHOD_HEADER.lower())
        if method is None:
            # A modern request without Mcp-Method is refused by the endpoint whatever the token
            # holds (400, -32020): let it say so, rather than ask for every scope over a malformed
            # request. Only a legacy request (2025-11-25 clients send no Mcp-Method) can run
            # without one, so where the endpoint serves those it must hold every scope (fail closed).
            return self.all_scopes if self.endpoint.server.serve_legacy else ()
        raw_name = headers.get(NAME_HEADER.lower())
        try:
            name = decode_value(raw_name.strip(" \t")) if raw_name is not None else None
        except MCPError:
            # A malformed base64 form: the endpoint refuses it (-32020) for a method whose body
            # it mirrors, and ignores it for any other. Either way the method alone decides.
            name = None
        return self.required_scopes(method, name)

    async def _challenge(
        self,
        send: Send,
        status: int,
        *,
        scope: Sequence[str],
        error: str | None = None,
        cors: Sequence[tuple[bytes, bytes]] = (),
    ) -> None:
        """401/403 with the `WWW-Authenticate` challenge of RFC 6750 §3 and RFC 9728 §5.1."""
        parts = [f'resource_metadata="{self.metadata_url}"']
        if scope:
            parts.append(f'scope="{" ".join(scope)}"')
        if error:
            parts.append(f'error="{error}"')
        # No body: everything a client acts on is in the challenge (RFC 6750 §3), and an MCP client
        # reading this endpoint's JSON would take any JSON body for a JSON-RPC message.
        await _respond(send, status, b"", [(b"www-authenticate", ("Bearer " + ", ".join(parts)).encode()), *cors])


def _closure(implies: Mapping[str, Collection[str]]) -> dict[str, frozenset[str]]:
    """Each scope with all it covers, followed through (cycles included: each then covers all)."""
    covers: dict[str, frozenset[str]] = {}
    for scope in implies:
        seen, todo = {scope}, [scope]
        while todo:
            for narrower in implies.get(todo.pop(), ()):
                if narrower not in seen:
                    seen.add(narrower)
                    todo.append(narrower)
        covers[scope] = frozenset(seen)
    return covers


def _shown(value: Any, limit: int = 100) -> str:
    """A value from a token, for a log line: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _cors_for(origin: str) -> list[tuple[bytes, bytes]]:
    """What lets a page from `origin` (already allowed) read an answer that depends on who asks."""
    return [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]


def _encoded(headers: Mapping[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]


async def _respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    headers = [*(headers or [(b"content-type", b"text/plain; charset=utf-8")])]
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
