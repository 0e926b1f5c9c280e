"""The grants without a user (client/_grants.py) against a stand-in authorization server, in
process: what each token request sends (RFC 6749 §4.4, RFC 7523 §2.1, RFC 8693 for SEP-990's
token exchange), and what is refused. The conformance client runs the same grants against the
suite's mocks, but in a child process that a mutation run cannot see."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpref.client import AuthorizationError, Client, ClientCredentials, ClientRegistration, JWTBearer, TokenStore
from mcpref.client._grants import ID_JAG, ID_TOKEN, JWT_BEARER, TOKEN_EXCHANGE, EnterpriseManaged
from tests.conftest import running

pytestmark = pytest.mark.anyio


class Server:
    """A protected MCP endpoint, its authorization server and an identity provider, one origin."""

    def __init__(self) -> None:
        self.base = ""
        self.forms: list[dict[str, str]] = []  # each token request's form, in order
        self.auth_headers: list[str | None] = []
        self.exchanged: list[dict[str, str]] = []
        self.idp_answer: dict[str, Any] = {"issued_token_type": ID_JAG, "access_token": "id-jag-1"}

    def app(self) -> Starlette:
        async def mcp(request: Request) -> Response:
            if request.headers.get("authorization") != "Bearer tok":
                challenge = f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
                return Response(status_code=401, headers={"WWW-Authenticate": challenge})
            message = await request.json()
            result = {"resultType": "complete", "tools": []}
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result})

        async def resource(request: Request) -> Response:
            return JSONResponse({"resource": f"{self.base}/mcp", "authorization_servers": [self.base]})

        async def metadata(request: Request) -> Response:
            return JSONResponse(
                {
                    "issuer": self.base,
                    "token_endpoint": f"{self.base}/token",
                    "response_types_supported": ["code"],
                    "grant_types_supported": ["client_credentials", JWT_BEARER],
                    "token_endpoint_auth_methods_supported": ["client_secret_post"],
                }
            )

        async def token(request: Request) -> Response:
            self.forms.append(dict(await request.form()))
            self.auth_headers.append(request.headers.get("authorization"))
            return JSONResponse({"access_token": "tok", "token_type": "Bearer", "expires_in": 3600})

        async def idp(request: Request) -> Response:
            self.exchanged.append(dict(await request.form()))
            return JSONResponse(self.idp_answer)

        return Starlette(
            routes=[
                Route("/mcp", mcp, methods=["POST"]),
                Route("/.well-known/oauth-protected-resource/mcp", resource),
                Route("/.well-known/oauth-authorization-server", metadata),
                Route("/token", token, methods=["POST"]),
                Route("/idp/token", idp, methods=["POST"]),
            ]
        )


@pytest.fixture
def server() -> Iterator[Server]:
    stub = Server()
    with running(stub.app()) as base:
        stub.base = base
        yield stub


async def listed(server: Server, auth: Any) -> list[Any]:
    async with Client(f"{server.base}/mcp", auth=auth, version="2026-07-28") as client:
        return await client.list_tools()


async def test_client_credentials_ask_for_a_token_for_the_resource_with_the_secret(server: Server) -> None:
    assert await listed(server, ClientCredentials(ClientRegistration("svc", "s3cret"), scope=["read", "write"])) == []
    assert server.forms == [
        {
            "grant_type": "client_credentials",
            "resource": f"{server.base}/mcp",
            "scope": "read write",
            "client_id": "svc",
            "client_secret": "s3cret",
        }
    ]


async def test_without_scopes_no_scope_is_sent(server: Server) -> None:
    await listed(server, ClientCredentials(ClientRegistration("svc", "s3cret")))
    assert "scope" not in server.forms[0] and server.forms[0]["grant_type"] == "client_credentials"


async def test_credentials_for_another_issuer_are_refused_before_any_token_request(server: Server) -> None:
    grant = ClientCredentials(ClientRegistration("svc", "s3cret"), issuer="https://as.example")
    with pytest.raises(
        AuthorizationError, match=f"belong to https://as.example, and the server now names {server.base}"
    ):
        await listed(server, grant)
    assert server.forms == []
    matching = ClientCredentials(ClientRegistration("svc", "s3cret"), issuer=server.base)
    assert await listed(server, matching) == [] and len(server.forms) == 1


@pytest.mark.parametrize("kind", ["a string", "a function", "a coroutine function"])
async def test_a_jwt_bearer_grant_sends_the_assertion_it_holds(server: Server, kind: str) -> None:
    async def fresh() -> str:
        return "jwt-1"

    assertion: Any = {"a string": "jwt-1", "a function": lambda: "jwt-1", "a coroutine function": fresh}[kind]
    await listed(server, JWTBearer(assertion, client_id="workload"))
    form = server.forms[0]
    assert form["grant_type"] == JWT_BEARER and form["assertion"] == "jwt-1"
    assert form["resource"] == f"{server.base}/mcp" and form["client_id"] == "workload"
    assert "client_secret" not in form and server.auth_headers == [None]


async def test_an_enterprise_grant_exchanges_the_id_token_at_the_idp_first(server: Server) -> None:
    grant = EnterpriseManaged(
        ClientRegistration("mcp-client", "s3cret"),
        id_token="id-token-1",
        idp_token_endpoint=f"{server.base}/idp/token",
        idp_client_id="idp-client",
    )
    await listed(server, grant)
    assert server.exchanged == [
        {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": "id-token-1",
            "subject_token_type": ID_TOKEN,
            "requested_token_type": ID_JAG,
            "audience": server.base,
            "resource": f"{server.base}/mcp",
            "client_id": "idp-client",
        }
    ]
    form = server.forms[0]
    assert form["grant_type"] == JWT_BEARER and form["assertion"] == "id-jag-1"
    assert form["client_id"] == "mcp-client" and form["client_secret"] == "s3cret"


@pytest.mark.parametrize(
    "answer",
    [{"issued_token_type": ID_TOKEN, "access_token": "x"}, {"issued_token_type": ID_JAG, "access_token": 7}, {}],
)
async def test_an_idp_answer_that_is_no_identity_assertion_grant_is_refused(server: Server, answer: dict) -> None:
    server.idp_answer = answer
    grant = EnterpriseManaged(
        ClientRegistration("mcp-client", "s3cret"), id_token="t", idp_token_endpoint=f"{server.base}/idp/token"
    )
    with pytest.raises(
        AuthorizationError, match=r"^the identity provider did not issue an identity assertion grant \(id-jag\)$"
    ):
        await listed(server, grant)
    assert "client_id" not in server.exchanged[0]  # no IdP client named: none sent
    assert server.forms == []


async def test_a_grant_keeps_its_options_and_sends_nobody_to_a_browser() -> None:
    store = TokenStore()
    grant = ClientCredentials(ClientRegistration("svc", "s"), store=store, timeout=5)
    assert grant.store is store
    # The timeout is the HTTP client's the grant makes for its requests: 30 s unless told.
    for made, seconds in ((grant, 5), (ClientCredentials(ClientRegistration("svc", "s")), 30)):
        async with made._new_http() as http:
            assert http.timeout == httpx.Timeout(seconds)
    assert JWTBearer("jwt", client_id="workload").client_id == "workload"
    with pytest.raises(AuthorizationError, match="^this client has no user to send to an authorization endpoint$"):
        await grant.redirect("https://as.example/authorize")


@pytest.mark.parametrize("kind", ["client credentials", "jwt bearer", "enterprise"])
async def test_the_scopes_asked_for_are_sent_and_kept_with_the_token(server: Server, kind: str) -> None:
    store, scope = TokenStore(), ["read", "write"]
    idp = f"{server.base}/idp/token"
    grant = {
        "client credentials": lambda: ClientCredentials(ClientRegistration("svc", "s"), scope=scope, store=store),
        "jwt bearer": lambda: JWTBearer("jwt-1", scope=scope, store=store),
        "enterprise": lambda: EnterpriseManaged(
            ClientRegistration("c", "s"), id_token="t", idp_token_endpoint=idp, scope=scope, store=store
        ),
    }[kind]()
    await listed(server, grant)
    assert server.forms[0]["scope"] == "read write"
    # The token response names no scope, so the token holds the scopes asked for.
    assert [tokens.scopes for tokens in store.tokens.values()] == [frozenset(scope)]


async def test_a_jwt_bearer_grant_without_a_client_id_names_none_and_is_bound_to_its_issuer(server: Server) -> None:
    await listed(server, JWTBearer("jwt-1"))
    assert "client_id" not in server.forms[0]
    with pytest.raises(AuthorizationError, match="belong to https://as.example"):
        await listed(server, JWTBearer("jwt-1", issuer="https://as.example"))


async def test_a_refused_token_exchange_names_the_identity_provider(server: Server) -> None:
    grant = EnterpriseManaged(ClientRegistration("c", "s"), id_token="t", idp_token_endpoint=f"{server.base}/nowhere")
    with pytest.raises(AuthorizationError, match=r"^token exchange at the identity provider"):
        await listed(server, grant)
