"""Grants for clients that act without a user at a browser: the MCP authorization extensions.

Each is an `OAuth` whose discovery, resource binding, token storage and retry rules are the same
as the authorization code flow's (`_auth.py`); only the way to the token differs:

- `ClientCredentials`: the client acts on its own behalf (extension
  `io.modelcontextprotocol/oauth-client-credentials`, SEP-1046), authenticating with a secret or a
  `private_key_jwt` assertion (RFC 7523 §2.2).
- `JWTBearer`: a JWT the client already holds is the grant (RFC 7523 §2.1), as in workload
  identity federation (SEP-1933): a platform-issued token for this workload.
- `EnterpriseManaged`: the enterprise's identity provider swaps the user's ID token for an
  identity assertion grant (RFC 8693 token exchange, SEP-990), which the MCP authorization
  server takes as a JWT bearer grant.

A refused grant raises `AuthorizationError` at once: retrying the same assertion, or falling
back to another grant, would not make it acceptable.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx

from ._auth import AuthorizationError, Binding, ClientRegistration, OAuth, Tokens, TokenStore, _post

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"

#: Where an assertion comes from: the JWT itself, or a function returning one (a fresh one per grant).
AssertionSource = str | Callable[[], str | Awaitable[str]]


async def _no_redirect(url: str) -> str:
    raise AuthorizationError("this client has no user to send to an authorization endpoint")


class _WithoutUser(OAuth):
    """An `OAuth` with no redirect step, holding the registration it authenticates with."""

    sends_user = False

    def __init__(
        self,
        registration: ClientRegistration,
        *,
        issuer: str | None = None,
        scope: Sequence[str] | None = None,
        store: TokenStore | None = None,
        timeout: float = 30.0,
    ) -> None:
        super().__init__(redirect=_no_redirect, scope=scope, store=store, timeout=timeout)
        self.registration = registration
        #: The authorization server the registration belongs to, if known: used nowhere else.
        self.issuer = issuer

    def _checked(self, binding: Binding) -> ClientRegistration:
        """Credentials are bound to their issuer (client-registration.mdx, Authorization Server Binding)."""
        if self.issuer is not None and binding.issuer != self.issuer:
            raise AuthorizationError(
                f"these client credentials belong to {self.issuer}, and the server now names {binding.issuer}"
            )
        return self.registration

    def _form(self, grant_type: str, binding: Binding, scopes: list[str] | None) -> dict[str, str]:
        return {
            "grant_type": grant_type,
            "resource": binding.resource,
            **({"scope": " ".join(scopes)} if scopes else {}),
        }


class ClientCredentials(_WithoutUser):
    """The client credentials grant: `ClientCredentials(ClientRegistration(id, secret))`, or with
    `private_key=PEM` for `private_key_jwt`.

    Args:
        registration: The client's credentials at the authorization server.
        issuer: The authorization server the credentials belong to; a server that names another
            is refused rather than sent them. None: whichever the resource names.
        scope: Ask for exactly these scopes instead of following the server's hints.
        store: Tokens, shared between clients or persisted.
        timeout: For each request to the authorization server, in seconds.
    """

    async def _grant(self, http: httpx.AsyncClient, binding: Binding, scopes: list[str] | None) -> Tokens:
        form = self._form("client_credentials", binding, scopes)
        return await self._token_request(http, binding, self._checked(binding), form, scopes)


class JWTBearer(_WithoutUser):
    """The JWT bearer grant with an assertion the client holds (a workload identity token).

    Args:
        assertion: The JWT, or a function returning one (sync or async), called for each grant
            so that a short-lived token is fresh.
        client_id: The client ID to send, if the authorization server wants one.
        **options: `issuer`, `scope`, `store`, `timeout`, as for `ClientCredentials`.
    """

    def __init__(self, assertion: AssertionSource, client_id: str | None = None, **options: Any) -> None:
        super().__init__(ClientRegistration(client_id or "", token_endpoint_auth_method="none"), **options)
        self.assertion = assertion
        self.client_id = client_id

    async def _assertion(self, http: httpx.AsyncClient, binding: Binding) -> str:
        value = self.assertion() if callable(self.assertion) else self.assertion
        return await value if inspect.isawaitable(value) else value

    async def _grant(self, http: httpx.AsyncClient, binding: Binding, scopes: list[str] | None) -> Tokens:
        form = self._form(JWT_BEARER, binding, scopes)
        form["assertion"] = await self._assertion(http, binding)
        return await self._token_request(http, binding, self._checked(binding), form, scopes)


class EnterpriseManaged(JWTBearer):
    """SEP-990: the user's ID token from the enterprise identity provider becomes an identity
    assertion grant there (token exchange), which the MCP authorization server takes as a JWT
    bearer grant from this (registered, authenticated) client.

    Args:
        registration: This client's credentials at the MCP authorization server.
        id_token: The user's ID token, or a function returning one, as for `JWTBearer`.
        idp_token_endpoint: The identity provider's token endpoint, for the token exchange.
        idp_client_id: The client ID at the identity provider, if it wants one.
        **options: `issuer`, `scope`, `store`, `timeout`, as for `ClientCredentials`.
    """

    def __init__(
        self,
        registration: ClientRegistration,
        *,
        id_token: AssertionSource,
        idp_token_endpoint: str,
        idp_client_id: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(id_token, **options)
        self.registration = registration
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_client_id = idp_client_id

    async def _assertion(self, http: httpx.AsyncClient, binding: Binding) -> str:
        form = {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": await super()._assertion(http, binding),
            "subject_token_type": ID_TOKEN,
            "requested_token_type": ID_JAG,
            "audience": binding.issuer,
            "resource": binding.resource,
            **({"client_id": self.idp_client_id} if self.idp_client_id else {}),
        }
        answer = await _post(http, self.idp_token_endpoint, data=form, what="token exchange at the identity provider")
        if answer.get("issued_token_type") != ID_JAG or not isinstance(answer.get("access_token"), str):
            raise AuthorizationError("the identity provider did not issue an identity assertion grant (id-jag)")
        assertion: str = answer["access_token"]
        return assertion
