"""OAuth 2.1 for the MCP client: an `httpx.Auth` that answers a 401 with the authorization flow.

basic/authorization/ in the 2026-07-28 specification, from the client's side:

1. A request goes out, with a token if one is stored for this server. A 401 names the server's
   protected resource metadata (`WWW-Authenticate: Bearer resource_metadata=...`, RFC 9728 §5.1);
   without it the client tries the well-known URIs, path first, then the root.
2. The metadata's `resource` must belong to the server's URL (RFC 9728 §3.3); its
   `authorization_servers` names the issuer. The issuer's metadata comes from RFC 8414 or OpenID
   discovery, tried in the spec's order, and is used only if its `issuer` is the issuer itself.
3. A client ID, in the spec's order of preference: one pre-registered for that issuer, a client
   ID metadata document URL, dynamic registration. Registrations are kept per issuer, never
   carried to another one (client-registration.mdx, Authorization Server Binding).
4. Authorization code with PKCE S256 and `resource`; the redirect step is pluggable
   (`RedirectHandler`). The response's `iss` is checked against the recorded issuer (RFC 9207)
   before the code goes anywhere.
5. The token request (again with `resource`), the retried request with the token. Tokens are
   stored per issuer *and* resource: a token is never sent to another server.

A 401 on a request that carried a token means refresh (if a refresh token exists), else the whole
flow again. A 403 with `error="insufficient_scope"` means step-up, at most `max_step_ups` times
per request. Either way, authorizing again asks for the union of the scopes asked for before and
the challenged ones, so what an earlier step-up won is kept.

The flow's own requests (metadata, registration, token) go through a short-lived
`httpx.AsyncClient`: they reach other hosts than the MCP server, and must never carry its token.
PKCE and random values come from authlib; nothing cryptographic is written here.
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import parse_qs, quote, urlencode, urlsplit, urlunsplit

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.rfc7636 import create_s256_code_challenge

from ._dpop import DPOP_HEADER, NONCE_HEADER, DPoPKey
from ._errors import MCPClientError
from ._http import BodyTooLarge, default_ssl_context, read_at_most

#: Takes the authorization URL, sends the user there, and returns the URL the authorization
#: server redirected back to (with `code`, `state`, maybe `iss`). See `LoopbackRedirect`.
RedirectHandler = Callable[[str], Awaitable[str]]

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
#: How long a stored access token is trusted before its `expires_in` runs out.
EXPIRY_MARGIN = 30.0
#: RFC 9449 §8, §9: how often one request is sent again for a server's new DPoP nonce, at the
#: resource (in a row) and at the token endpoint. Bounded, so a server that changes its nonce on
#: every answer cannot keep a request going round.
RESOURCE_NONCE_RETRIES = 2
TOKEN_NONCE_RETRIES = 1
#: The most bytes read of one answer from an authorization server (metadata, registration,
#: token) or an identity provider: they are small documents, and a server a hostile resource
#: names must not make the client hold whatever it sends.
MAX_ANSWER_BYTES = 1024 * 1024


class AuthorizationError(MCPClientError):
    """The authorization flow could not go on: bad metadata, a rejected response, a refused grant.

    Raised from the request that needed authorization; nothing was sent with a doubtful token.

    Args:
        message: What went wrong.
        error: The OAuth `error` code, when an authorization server sent one (`invalid_grant`, ...).
    """

    def __init__(self, message: str, *, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error


@dataclass
class ClientRegistration:
    """A client ID at one authorization server, and how the client authenticates there.

    Args:
        client_id: The client ID the authorization server knows this client by.
        client_secret: Its secret, for a confidential client; None for a public one.
        token_endpoint_auth_method: `none`, `client_secret_basic`, `client_secret_post` or
            `private_key_jwt`; chosen from the server's metadata if unset.
        private_key: For `private_key_jwt` (RFC 7523 §2.2): a PEM private key.
        signing_algorithm: The JWS algorithm `private_key` signs with.
    """

    client_id: str
    client_secret: str | None = None
    token_endpoint_auth_method: str | None = None
    private_key: str | None = None
    signing_algorithm: str = "ES256"


@dataclass
class Tokens:
    """What a token response gave for one (issuer, resource): the access token and what comes with it.

    Args:
        access_token: The token sent in `Authorization`.
        token_type: `Bearer`, or `DPoP` for a token bound to the client's DPoP key.
        refresh_token: For a new access token without the user, if one was issued.
        scopes: The scopes granted (the token response's `scope`, else the scopes asked for).
        expires_at: When the access token expires, in epoch seconds; None if the server did
            not say.
    """

    access_token: str
    token_type: str = "Bearer"
    refresh_token: str | None = None
    scopes: frozenset[str] = frozenset()
    expires_at: float | None = None

    def expired(self, now: float) -> bool:
        """Whether the access token is past its expiry, or within 30 seconds of it.

        Args:
            now: The time, in epoch seconds.

        Returns:
            True if it should be refreshed before use; never for a token without an expiry.
        """
        return self.expires_at is not None and now >= self.expires_at - EXPIRY_MARGIN


@dataclass
class TokenStore:
    """What a client keeps between flows: tokens per (issuer, resource), registrations per issuer.

    Subclass it to persist; keep refresh tokens and secrets confidential (OAuth 2.1 §4.3).

    Args:
        tokens: Tokens by (issuer, resource).
        registrations: Registrations (dynamic or given) by issuer.
    """

    tokens: dict[tuple[str, str], Tokens] = field(default_factory=dict)
    registrations: dict[str, ClientRegistration] = field(default_factory=dict)


@dataclass
class Binding:
    """What discovery found for one MCP endpoint: the resource, its issuer and that issuer's metadata."""

    resource: str
    issuer: str
    metadata: dict[str, Any]
    scopes_supported: list[str] | None = None


def parse_www_authenticate(value: str) -> dict[str, dict[str, str]]:
    """Parameters by lower-cased scheme: `Bearer realm="x", scope="a b"` -> {"bearer": {...}}.

    RFC 9110 §11.6.1 challenges: a scheme, then `name=token` or `name="quoted string"` pairs.
    """
    challenges: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    position = 0
    for found in _CHALLENGE_PART.finditer(value):
        if value[position : found.start()].strip(" ,"):
            break  # something that is not an auth-param: stop rather than guess
        position = found.end()
        if found["scheme"]:
            current = challenges.setdefault(found["scheme"].lower(), {})
        elif current is not None:
            raw = found["quoted"]
            text = re.sub(r"\\(.)", r"\1", raw) if raw is not None else found["token"]
            current[found["name"].lower()] = text
    return challenges


_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_CHALLENGE_PART = re.compile(
    rf"""\s*,?\s*(?:
        (?P<name>{_TOKEN})\s*=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<token>{_TOKEN}=*))
      | (?P<scheme>{_TOKEN})(?=\s|$|,)
    )""",
    re.VERBOSE,
)


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707 §2): lower-case scheme and host, no fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), parts.path, parts.query, ""))


def resource_covers(resource: str, endpoint: str) -> bool:
    """Whether metadata naming `resource` may speak for `endpoint`: same origin, and the resource's
    path is the endpoint's path or a leading part of it (a root `/.well-known` document names the origin)."""
    want, have = urlsplit(canonical_resource(resource)), urlsplit(canonical_resource(endpoint))
    if (want.scheme, want.netloc) != (have.scheme, have.netloc) or want.query:
        return False
    prefix = want.path.rstrip("/")
    return have.path == want.path or have.path.startswith(prefix + "/") or prefix == ""


def resource_metadata_urls(endpoint: str) -> list[str]:
    """The RFC 9728 well-known URIs for an endpoint, path-specific first, then the root."""
    parts = urlsplit(endpoint)
    path = parts.path.rstrip("/")
    urls = [urlunsplit((parts.scheme, parts.netloc, f"/.well-known/oauth-protected-resource{path}", "", ""))]
    if path:
        urls.append(urlunsplit((parts.scheme, parts.netloc, "/.well-known/oauth-protected-resource", "", "")))
    return urls


def authorization_server_metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order authorization-server-discovery.mdx gives."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")

    def at(path: str) -> str:
        return urlunsplit((parts.scheme, parts.netloc, path, "", ""))

    if not path:
        return [at("/.well-known/oauth-authorization-server"), at("/.well-known/openid-configuration")]
    return [
        at(f"/.well-known/oauth-authorization-server{path}"),
        at(f"/.well-known/openid-configuration{path}"),
        at(f"{path}/.well-known/openid-configuration"),
    ]


def check_iss(callback: Mapping[str, list[str]], issuer: str, metadata: Mapping[str, Any]) -> None:
    """RFC 9207 §2.4 as basic/authorization/index.mdx tabulates it: a present `iss` must equal the
    recorded issuer exactly (no normalization); an absent one is refused only when advertised."""
    values = callback.get("iss", [])
    if len(values) > 1:
        raise AuthorizationError("the authorization response has more than one iss")
    if values:
        if values[0] != issuer:
            raise AuthorizationError(
                f"the authorization response came from issuer {values[0]!r}, not {issuer!r}: refused (RFC 9207)"
            )
    elif metadata.get("authorization_response_iss_parameter_supported") is True:
        raise AuthorizationError(
            f"{issuer} advertises iss in authorization responses, and this one has none: refused (RFC 9207)"
        )


class OAuth(httpx.Auth):
    """Authorization for an MCP client over HTTP: pass it as `Client(url, auth=OAuth(...))`.

    The whole flow of
    [`basic/authorization/index.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization),
    started by the server's 401: discovery, registration, the authorization code with PKCE,
    refresh, and step-up on a 403 `insufficient_scope`.

    Args:
        redirect: Sends the user to the authorization URL and returns the redirect it came back on.
        redirect_uri: Registered with the authorization server and sent with every code request;
            by default the `redirect_uri` of `redirect` (a `LoopbackRedirect` has one).
        clients: Pre-registered client IDs, by issuer (tried first).
        client_metadata_url: An HTTPS URL serving this client's metadata document, used as its
            client ID where the server says `client_id_metadata_document_supported`.
        client_name: For the metadata sent in dynamic registration.
        client_uri: For the metadata sent in dynamic registration.
        scope: Ask for exactly these scopes instead of following the server's hints.
        offline_access: Ask for `offline_access` when the authorization server lists it.
        store: Tokens and registrations, shared between clients or persisted.
        max_step_ups: Re-authorizations for more scope within one request.
        dpop: Ask for DPoP-bound tokens (RFC 9449) where the authorization server offers them.
        timeout: For each request to an authorization server, in seconds.
        http: Makes the `httpx.AsyncClient` for the authorization servers; by default one with
            `timeout` and the shared TLS context.

    Raises:
        ValueError: No redirect URI for a flow that needs one, a redirect URI neither https nor
            loopback http, or a `client_metadata_url` that is not an https URL with a path.
    """

    #: Whether this flow sends a user to the authorization endpoint (and so needs a redirect URI).
    sends_user: ClassVar[bool] = True

    def __init__(
        self,
        *,
        redirect: RedirectHandler,
        redirect_uri: str | None = None,
        clients: Mapping[str, ClientRegistration] | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "mcpref client",
        client_uri: str | None = None,
        scope: Sequence[str] | None = None,
        offline_access: bool = True,
        store: TokenStore | None = None,
        max_step_ups: int = 2,
        dpop: bool = True,
        timeout: float = 30.0,
        http: Callable[[], httpx.AsyncClient] | None = None,
    ) -> None:
        redirect_uri = redirect_uri or getattr(redirect, "redirect_uri", None) or ""
        if not redirect_uri and self.sends_user:
            raise ValueError("OAuth needs a redirect_uri: the URI at which `redirect` gets the authorization response")
        if redirect_uri and not _safe_redirect(redirect_uri):
            raise ValueError(
                f"redirect_uri {redirect_uri!r} must be https, or http on a loopback address "
                "(security-considerations.mdx, Communication Security)"
            )
        if client_metadata_url is not None and not _is_client_id_url(client_metadata_url):
            raise ValueError(f"client_metadata_url {client_metadata_url!r} must be an https URL with a path")
        self.redirect = redirect
        self.redirect_uri = redirect_uri
        self.clients = dict(clients or {})
        self.client_metadata_url = client_metadata_url
        self.client_name = client_name
        self.client_uri = client_uri
        self.scope = list(scope) if scope is not None else None
        self.offline_access = offline_access
        self.store = store if store is not None else TokenStore()
        self.max_step_ups = max_step_ups
        #: The DPoP key (RFC 9449), made when an authorization server first offers DPoP.
        self.dpop: DPoPKey | None = None
        self._dpop_allowed = dpop
        # The shared TLS context: building one loads the CA bundle, ~0.1 s of CPU per flow.
        self._new_http = http or (lambda: httpx.AsyncClient(timeout=timeout, verify=default_ssl_context()))
        #: What discovery found, per MCP endpoint; dropped when a flow starts over.
        self.bindings: dict[str, Binding] = {}
        #: Scopes asked for, per (issuer, resource): step-up asks for these and the new ones.
        self.requested: dict[tuple[str, str], frozenset[str]] = {}
        self._lock = asyncio.Lock()

    # -- httpx.Auth ----------------------------------------------------------------------

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """httpx's hook: send `request` with a token, and authorize again on the server's 401 or 403.

        Args:
            request: The request the client sends.

        Yields:
            The request, then again with a new token after each challenge it can meet.

        Raises:
            AuthorizationError: The flow could not go on.
        """
        endpoint = canonical_resource(str(request.url.copy_with(query=None)))
        sent = await self._authorize_request(request, endpoint)
        response = yield request
        step_ups = nonces = 0
        reauthorized = False
        while True:
            challenge = _challenge(response)
            new_nonce = self.dpop is not None and self.dpop.remember_nonce(
                str(request.url), response.headers.get(NONCE_HEADER)
            )
            if challenge.get("error") == "use_dpop_nonce" and new_nonce and nonces < RESOURCE_NONCE_RETRIES:
                await _read_challenge(response)
                nonces += 1  # RFC 9449 §9: the same request again, with the server's nonce
            elif response.status_code == 401 and not reauthorized:
                await _read_challenge(response)
                async with self._lock:
                    current = self._current_tokens(endpoint)
                    # Another request may have authorized meanwhile; else refresh, else start over.
                    refreshed = current is sent and sent is not None and await self._refresh(endpoint, sent)
                    if (current is None or current is sent) and not refreshed:
                        await self._authorize(endpoint, challenge)
                reauthorized = True
            elif (
                response.status_code == 403
                and challenge.get("error") == "insufficient_scope"
                and step_ups < self.max_step_ups
                and self._needs_more_scope(endpoint, challenge)
            ):
                await _read_challenge(response)
                async with self._lock:
                    await self._authorize(endpoint, challenge)
                step_ups += 1
            else:
                return
            sent = await self._authorize_request(request, endpoint)
            response = yield request

    # -- tokens for one request ------------------------------------------------------------

    def _current_tokens(self, endpoint: str) -> Tokens | None:
        binding = self.bindings.get(endpoint)
        return self.store.tokens.get((binding.issuer, binding.resource)) if binding else None

    async def _authorize_request(self, request: httpx.Request, endpoint: str) -> Tokens | None:
        """Put the stored token on the request (refreshing an expired one first), or none."""
        tokens = self._current_tokens(endpoint)
        if tokens is not None and tokens.expired(time.time()) and tokens.refresh_token:
            async with self._lock:
                if self._current_tokens(endpoint) is tokens:
                    await self._refresh(endpoint, tokens)
                tokens = self._current_tokens(endpoint)
        if tokens is None:
            request.headers.pop("Authorization", None)
            return None
        if tokens.token_type.lower() == "dpop" and self.dpop is not None:
            request.headers["Authorization"] = f"DPoP {tokens.access_token}"
            request.headers[DPOP_HEADER] = self.dpop.proof(request.method, str(request.url), tokens.access_token)
        else:
            request.headers["Authorization"] = f"Bearer {tokens.access_token}"
        return tokens

    def _needs_more_scope(self, endpoint: str, challenge: Mapping[str, str]) -> bool:
        """A step-up is worth trying only if the challenge names scopes the token was not granted."""
        tokens = self._current_tokens(endpoint)
        wanted = set(challenge.get("scope", "").split())
        return bool(wanted) and (tokens is None or not wanted <= tokens.scopes)

    # -- the flow ----------------------------------------------------------------------------

    async def _authorize(self, endpoint: str, challenge: Mapping[str, str]) -> None:
        """Sign in (or again, after a 401 or for more scope) for `endpoint`, asking for the
        challenge's scopes alongside those asked for before (index.mdx §Scope Selection Strategy)."""
        async with self._new_http() as http:
            binding = await self._discover(http, endpoint, challenge.get("resource_metadata"))
            self.bindings[endpoint] = binding
            key = (binding.issuer, binding.resource)
            scopes = self._choose_scopes(binding, challenge, self.requested.get(key))
            tokens = await self._grant(http, binding, scopes)
            self.requested[key] = frozenset(scopes or ())
            self.store.tokens[key] = tokens

    async def _grant(self, http: httpx.AsyncClient, binding: Binding, scopes: list[str] | None) -> Tokens:
        """Tokens for `binding.resource`: here the authorization code grant; subclasses use others."""
        registration = await self._register(http, binding)
        return await self._authorization_code(http, binding, registration, scopes)

    async def _discover(self, http: httpx.AsyncClient, endpoint: str, metadata_url: str | None) -> Binding:
        """The protected resource metadata, then its authorization server's metadata."""
        urls = [metadata_url] if metadata_url else resource_metadata_urls(endpoint)
        document = await _first_json(http, urls, "protected resource metadata")
        resource = document.get("resource")
        if not isinstance(resource, str) or not resource_covers(resource, endpoint):
            raise AuthorizationError(
                f"the protected resource metadata names resource {resource!r}, which is not {endpoint}: "
                "refused (RFC 9728 §3.3)"
            )
        servers = document.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            raise AuthorizationError("the protected resource metadata names no authorization server")
        issuer = servers[0]
        metadata = await _first_json(http, authorization_server_metadata_urls(issuer), "authorization server metadata")
        if metadata.get("issuer") != issuer:
            raise AuthorizationError(
                f"the metadata fetched for issuer {issuer!r} says issuer {metadata.get('issuer')!r}: "
                "not used (RFC 8414 §3.3)"
            )
        scopes = document.get("scopes_supported")
        return Binding(resource, issuer, metadata, scopes if isinstance(scopes, list) else None)

    def _choose_scopes(
        self, binding: Binding, challenge: Mapping[str, str], earlier: frozenset[str] | None
    ) -> list[str] | None:
        """index.mdx Scope Selection Strategy: the challenge's scopes, else the resource's
        `scopes_supported`, else none; with the scopes asked for before, when re-authorizing."""
        if self.scope is not None:
            scopes = list(self.scope)
        elif challenge.get("scope"):
            scopes = challenge["scope"].split()
        elif binding.scopes_supported:
            scopes = [str(scope) for scope in binding.scopes_supported]
        else:
            scopes = []
        for scope in sorted(earlier or ()):
            if scope not in scopes:
                scopes.append(scope)
        offered = binding.metadata.get("scopes_supported") or []
        if self.offline_access and "offline_access" in offered and scopes and "offline_access" not in scopes:
            scopes.append("offline_access")
        return scopes or None

    async def _register(self, http: httpx.AsyncClient, binding: Binding) -> ClientRegistration:
        """A client ID for this issuer: pre-registered, metadata document, or dynamic registration."""
        if binding.issuer in self.clients:
            return self.clients[binding.issuer]
        if self.client_metadata_url and binding.metadata.get("client_id_metadata_document_supported") is True:
            return ClientRegistration(self.client_metadata_url, token_endpoint_auth_method="none")
        known = self.store.registrations.get(binding.issuer)
        if known is not None:
            return known
        endpoint = binding.metadata.get("registration_endpoint")
        if not isinstance(endpoint, str):
            raise AuthorizationError(
                f"no client ID for {binding.issuer}: it takes no client ID metadata document or dynamic "
                "registration, and none was pre-registered (pass clients={issuer: ClientRegistration(...)})"
            )
        methods = binding.metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
        wanted = next((m for m in ("none", "client_secret_basic", "client_secret_post") if m in methods), methods[0])
        body = {
            "client_name": self.client_name,
            "redirect_uris": [self.redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": wanted,
            "application_type": _application_type(self.redirect_uri),
            **({"client_uri": self.client_uri} if self.client_uri else {}),
        }
        answer = await _post(http, endpoint, json=body, expect=(200, 201), what="client registration")
        if not isinstance(answer.get("client_id"), str):
            raise AuthorizationError("the registration response has no client_id")
        registration = ClientRegistration(
            answer["client_id"], answer.get("client_secret"), answer.get("token_endpoint_auth_method") or wanted
        )
        self.store.registrations[binding.issuer] = registration
        return registration

    async def _authorization_code(
        self, http: httpx.AsyncClient, binding: Binding, registration: ClientRegistration, scopes: list[str] | None
    ) -> Tokens:
        metadata = binding.metadata
        if "S256" not in (metadata.get("code_challenge_methods_supported") or []):
            raise AuthorizationError(
                f"{binding.issuer} does not list S256 in code_challenge_methods_supported: "
                "without PKCE the flow is refused (security-considerations.mdx)"
            )
        verifier, state = generate_token(64), generate_token(32)
        query = {
            "response_type": "code",
            "client_id": registration.client_id,
            "redirect_uri": self.redirect_uri,
            "state": state,
            # types-Authlib leaves this one function unannotated (it takes and returns str).
            "code_challenge": create_s256_code_challenge(verifier),
            "code_challenge_method": "S256",
            "resource": binding.resource,
            **({"scope": " ".join(scopes)} if scopes else {}),
        }
        endpoint = _endpoint(metadata, "authorization_endpoint")
        separator = "&" if urlsplit(endpoint).query else "?"
        callback_url = await self.redirect(f"{endpoint}{separator}{urlencode(query)}")
        callback = parse_qs(urlsplit(callback_url).query, keep_blank_values=True)
        check_iss(callback, binding.issuer, metadata)
        if callback.get("state") != [state]:
            raise AuthorizationError("the authorization response's state is not the one sent: refused")
        if "error" in callback:
            description = callback.get("error_description", [""])[0]
            raise AuthorizationError(
                f"authorization refused: {callback['error'][0]} {description}".strip(), error=callback["error"][0]
            )
        if len(callback.get("code", [])) != 1 or not callback["code"][0]:
            raise AuthorizationError("the authorization response has no code")
        form = {
            "grant_type": "authorization_code",
            "code": callback["code"][0],
            "redirect_uri": self.redirect_uri,
            "code_verifier": verifier,
            "resource": binding.resource,
        }
        return await self._token_request(http, binding, registration, form, scopes)

    async def _refresh(self, endpoint: str, tokens: Tokens) -> bool:
        """Swap a refresh token for new tokens; False (and the tokens forgotten) if refused."""
        binding = self.bindings.get(endpoint)
        if binding is None or not tokens.refresh_token:
            return False
        registration = self.clients.get(binding.issuer) or self.store.registrations.get(binding.issuer)
        if registration is None and self.client_metadata_url:
            registration = ClientRegistration(self.client_metadata_url, token_endpoint_auth_method="none")
        if registration is None:
            return False
        form = {"grant_type": "refresh_token", "refresh_token": tokens.refresh_token, "resource": binding.resource}
        try:
            async with self._new_http() as http:
                fresh = await self._token_request(http, binding, registration, form, sorted(tokens.scopes) or None)
        except AuthorizationError:
            self.store.tokens.pop((binding.issuer, binding.resource), None)
            return False
        if fresh.refresh_token is None:
            fresh.refresh_token = tokens.refresh_token  # the server may keep the old one valid
        self.store.tokens[(binding.issuer, binding.resource)] = fresh
        return True

    async def _token_request(
        self,
        http: httpx.AsyncClient,
        binding: Binding,
        registration: ClientRegistration,
        form: dict[str, str],
        scopes: list[str] | None,
    ) -> Tokens:
        method = registration.token_endpoint_auth_method or _auth_method(binding.metadata, registration)
        headers: dict[str, str] = {}
        if registration.private_key is not None:
            form["client_assertion_type"] = CLIENT_ASSERTION_TYPE
            form["client_assertion"] = client_assertion(registration, binding.issuer)
        elif method == "client_secret_basic" and registration.client_secret is not None:
            headers["Authorization"] = _basic(registration.client_id, registration.client_secret)
        elif registration.client_id:  # a JWT bearer grant may come with no client ID at all
            form["client_id"] = registration.client_id
            if method == "client_secret_post" and registration.client_secret is not None:
                form["client_secret"] = registration.client_secret
        url = _endpoint(binding.metadata, "token_endpoint")
        dpop = self._dpop_for(binding)
        for _ in range(1 + TOKEN_NONCE_RETRIES):
            if dpop is not None:
                headers[DPOP_HEADER] = dpop.proof("POST", url)
            response = await _send(http, url, data=form, headers=headers, what="token request")
            fresh_nonce = dpop is not None and dpop.remember_nonce(url, response.headers.get(NONCE_HEADER))
            if not (fresh_nonce and response.status_code == 400 and _error_of(response) == "use_dpop_nonce"):
                break  # else RFC 9449 §8: the server wants its nonce in the proof; once more
        return tokens_from(_answer(response, "token request"), scopes, dpop=dpop is not None)

    def _dpop_for(self, binding: Binding) -> DPoPKey | None:
        """The DPoP key, if this authorization server takes DPoP proofs signed the way it can sign."""
        algorithms = binding.metadata.get("dpop_signing_alg_values_supported")
        if not self._dpop_allowed or not isinstance(algorithms, list) or DPoPKey.algorithm not in algorithms:
            return None
        if self.dpop is None:
            self.dpop = DPoPKey()
        return self.dpop


def client_assertion(registration: ClientRegistration, audience: str, lifetime: int = 300) -> str:
    """A `private_key_jwt` client assertion (RFC 7523 §3): the client vouches for itself, for one
    authorization server (`aud`, its issuer), briefly, once (`jti`)."""
    now = int(time.time())
    claims = {
        "iss": registration.client_id,
        "sub": registration.client_id,
        "aud": audience,
        "iat": now,
        "exp": now + lifetime,
        "jti": generate_token(24),
    }
    from joserfc import jwt  # here, not at the top: most clients never sign anything (import cost)

    key = signing_key(registration.private_key or "", registration.signing_algorithm)
    # joserfc signs only with its "recommended" algorithms unless told which: PS256 is not one.
    algorithm = registration.signing_algorithm
    return jwt.encode({"alg": algorithm}, claims, key, algorithms=[algorithm])


def signing_key(pem: str, algorithm: str) -> Any:
    """A PEM private key as a JWK for `algorithm` (ES*: EC, RS*/PS*: RSA, EdDSA, Ed25519 and Ed448: OKP).

    Raises:
        ValueError: `algorithm` is none of those: `private_key_jwt` signs with a private key,
            so a shared-secret algorithm such as HS256 is refused by name.
    """
    from joserfc.jwk import JWKRegistry

    kind = {"ES": "EC", "RS": "RSA", "PS": "RSA"}.get(algorithm[:2])
    if algorithm in ("EdDSA", "Ed25519", "Ed448"):
        kind = "OKP"
    if kind is None:
        raise ValueError(
            f"private_key_jwt cannot sign with {algorithm!r}: "
            "use ES*, RS*, PS*, EdDSA, Ed25519 or Ed448 (an asymmetric one)"
        )
    return JWKRegistry.import_key(pem, kind)


def tokens_from(answer: Mapping[str, Any], scopes: Sequence[str] | None, *, dpop: bool = False) -> Tokens:
    """A token response (OAuth 2.1 §3.2.3) as `Tokens`: a bearer token, or a DPoP one if asked for."""
    token, kind = answer.get("access_token"), answer.get("token_type")
    if not isinstance(token, str) or not token or not isinstance(kind, str):
        raise AuthorizationError("the token response has no access_token or token_type")
    if kind.lower() not in (("bearer", "dpop") if dpop else ("bearer",)):
        raise AuthorizationError(f"the token response's token_type is {kind!r}, which this client cannot use")
    granted = answer.get("scope")
    expires_in = answer.get("expires_in")
    return Tokens(
        access_token=token,
        token_type=kind,
        refresh_token=answer.get("refresh_token") if isinstance(answer.get("refresh_token"), str) else None,
        scopes=frozenset(granted.split() if isinstance(granted, str) else (scopes or ())),
        expires_at=time.time() + expires_in if isinstance(expires_in, int | float) else None,
    )


def _challenge(response: httpx.Response) -> dict[str, str]:
    """The parameters of a 401 or 403's `Bearer` challenge, else of its `DPoP` one."""
    if response.status_code not in (401, 403):
        return {}
    challenges = parse_www_authenticate(response.headers.get("www-authenticate", ""))
    return challenges.get("bearer") or challenges.get("dpop") or {}


def client_metadata_document(
    client_id: str, redirect_uris: Sequence[str], client_name: str, **more: Any
) -> dict[str, Any]:
    """The client ID metadata document to serve at `client_id` (an https URL with a path): the
    fields
    [`basic/authorization/client-registration.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/authorization/client-registration)
    requires, `client_id` equal to that URL, refresh included.

    Args:
        client_id: The document's own HTTPS URL, which is the client ID.
        redirect_uris: The redirect URIs the client uses.
        client_name: A name for people, shown at consent.
        **more: Any other client metadata (`client_uri`, `logo_uri`, ...), over the defaults.

    Returns:
        The document, to serve as JSON at `client_id`.

    Raises:
        ValueError: `client_id` is not an https URL with a path.
    """
    if not _is_client_id_url(client_id):
        raise ValueError(f"a client ID metadata document's URL must be https with a path, not {client_id!r}")
    return {
        "client_id": client_id,
        "client_name": client_name,
        "redirect_uris": list(redirect_uris),
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **more,
    }


def _is_client_id_url(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme == "https" and bool(parts.netloc) and parts.path not in ("", "/") and not parts.fragment


def _safe_redirect(uri: str) -> bool:
    """https, or http to a loopback address: a code must not cross the network in the clear."""
    parts = urlsplit(uri)
    return parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in ("localhost", "127.0.0.1", "::1"))


def _application_type(redirect_uri: str) -> str:
    """client-registration.mdx: "native" for loopback redirects (CLI, desktop), "web" otherwise."""
    parts = urlsplit(redirect_uri)
    loopback = parts.hostname in ("localhost", "127.0.0.1", "::1")
    return "native" if loopback or parts.scheme not in ("http", "https") else "web"


def _auth_method(metadata: Mapping[str, Any], registration: ClientRegistration) -> str:
    """How a client with these credentials authenticates at the token endpoint (RFC 8414's default
    is client_secret_basic)."""
    if registration.client_secret is None:
        return "none"
    methods = metadata.get("token_endpoint_auth_methods_supported") or ["client_secret_basic"]
    if "client_secret_basic" not in methods and "client_secret_post" in methods:
        return "client_secret_post"
    return "client_secret_basic"


def _basic(client_id: str, secret: str) -> str:
    """HTTP Basic for a client: both parts form-urlencoded first (RFC 6749 §2.3.1)."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def _endpoint(metadata: Mapping[str, Any], name: str) -> str:
    value = metadata.get(name)
    if not isinstance(value, str) or not value:
        raise AuthorizationError(f"the authorization server metadata has no {name}")
    return value


async def _first_json(http: httpx.AsyncClient, urls: Sequence[str], what: str) -> dict[str, Any]:
    """The first of `urls` that answers 200 with a JSON object."""
    tried = []
    for url in urls:
        try:
            response = await _bounded(http, "GET", url, what, headers={"Accept": "application/json"})
        except (httpx.HTTPError, AuthorizationError) as exc:
            tried.append(f"{url} ({exc})" if isinstance(exc, AuthorizationError) else f"{url} ({exc!r})")
            continue
        if response.status_code == 200:
            try:
                document = response.json()
            except ValueError:
                document = None
            if isinstance(document, dict):
                return document
        tried.append(f"{url} (HTTP {response.status_code})")
    raise AuthorizationError(f"no {what} found: tried {', '.join(tried)}")


async def _post(
    http: httpx.AsyncClient, url: str, *, what: str, expect: tuple[int, ...] = (200,), **kwargs: Any
) -> dict[str, Any]:
    return _answer(await _send(http, url, what=what, **kwargs), what, expect)


async def _send(http: httpx.AsyncClient, url: str, *, what: str, **kwargs: Any) -> httpx.Response:
    headers = {"Accept": "application/json", **kwargs.pop("headers", {})}
    try:
        return await _bounded(http, "POST", url, what, headers=headers, **kwargs)
    except httpx.HTTPError as exc:
        raise AuthorizationError(f"{what} to {url} failed: {exc!r}") from exc


async def _read_challenge(response: httpx.Response) -> None:
    """Read the body of a challenge the flow answers (httpx reads it whole before it sends the
    next request), up to `MAX_ANSWER_BYTES`; past that an `AuthorizationError`, the rest unread."""
    try:
        # httpx's own read of it (before the next request) then finds the body here, not on the wire.
        response._content = await read_at_most(response, MAX_ANSWER_BYTES)
    except BodyTooLarge:
        raise AuthorizationError(
            f"the {response.status_code} answer of {response.url} is over {MAX_ANSWER_BYTES} bytes: not read"
        ) from None


async def _bounded(http: httpx.AsyncClient, method: str, url: str, what: str, **kwargs: Any) -> httpx.Response:
    """The response, read whole if it is at most `MAX_ANSWER_BYTES` once decoded; else an
    `AuthorizationError`, the rest unread and the connection closed."""
    async with http.stream(method, url, **kwargs) as response:
        try:
            body = await read_at_most(response, MAX_ANSWER_BYTES)
        except BodyTooLarge:
            raise AuthorizationError(f"the {what} answer of {url} is over {MAX_ANSWER_BYTES} bytes: not read") from None
    # The body is decoded already: a copy that still said gzip would be decoded twice.
    headers = [(k, v) for k, v in response.headers.multi_items() if k not in ("content-encoding", "content-length")]
    return httpx.Response(response.status_code, headers=headers, content=body, request=response.request)


def _error_of(response: httpx.Response) -> str | None:
    try:
        answer = response.json()
    except ValueError:
        return None
    return answer.get("error") if isinstance(answer, dict) else None


def _answer(response: httpx.Response, what: str, expect: tuple[int, ...] = (200,)) -> dict[str, Any]:
    """The JSON object of a successful answer, else an AuthorizationError with the OAuth `error`."""
    try:
        answer = response.json()
    except ValueError:
        answer = None
    if response.status_code not in expect or not isinstance(answer, dict):
        error = answer.get("error") if isinstance(answer, dict) else None
        detail = f"{error}: {answer.get('error_description', '')}" if error else response.text[:200]
        raise AuthorizationError(f"{what} refused (HTTP {response.status_code}): {detail}", error=error)
    return answer
