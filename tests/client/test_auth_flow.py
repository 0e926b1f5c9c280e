"""mcpref.client's OAuth against an authorization server that misbehaves on purpose, under uvicorn.

The suite's auth/* scenarios cover the usual flows; these cover what they do not: what dynamic
registration sends and keeps, a refused registration, metadata without PKCE, the scopes asked for,
the authorization URL, and each way an authorization response is refused.
The authorization server and the protected server here are a few Starlette routes whose answers
each test chooses; the client is the real one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpref.client import AuthorizationError, Client, ClientRegistration, OAuth
from tests.client.conftest import authorization_server_metadata
from tests.conftest import running

pytestmark = pytest.mark.anyio


class Stub:
    """A protected resource and its authorization server on one origin; `metadata` and
    `registration` are what the authorization server answers, `registered` what it received."""

    def __init__(self) -> None:
        self.base = ""
        self.metadata: dict[str, Any] = {}
        self.registration: tuple[int, dict[str, Any]] = (201, {"client_id": "stub-client"})
        #: The protected resource metadata's `scopes_supported`, if any.
        self.resource_scopes: Any = None
        self.registered: list[dict[str, Any]] = []
        self.authorized: list[dict[str, list[str]]] = []

    def app(self) -> Starlette:
        async def mcp(request: Request) -> Response:
            challenge = f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
            return Response(status_code=401, headers={"WWW-Authenticate": challenge})

        async def resource_metadata(request: Request) -> Response:
            document: dict[str, Any] = {"resource": f"{self.base}/mcp", "authorization_servers": [self.base]}
            if self.resource_scopes is not None:
                document["scopes_supported"] = self.resource_scopes
            return JSONResponse(document)

        async def server_metadata(request: Request) -> Response:
            return JSONResponse(self.metadata)

        async def register(request: Request) -> Response:
            self.registered.append(await request.json())
            status, body = self.registration
            return JSONResponse(body, status)

        return Starlette(
            routes=[
                Route("/mcp", mcp, methods=["POST"]),
                Route("/.well-known/oauth-protected-resource/mcp", resource_metadata),
                Route("/.well-known/oauth-authorization-server", server_metadata),
                Route("/register", register, methods=["POST"]),
            ]
        )

    def good_metadata(self) -> dict[str, Any]:
        return authorization_server_metadata(self.base)


@pytest.fixture(scope="module")
def stub_server() -> Iterator[Stub]:
    stub = Stub()
    app = stub.app()
    with running(app) as base:
        stub.base = base
        yield stub


@pytest.fixture
def stub(stub_server: Stub) -> Stub:
    stub_server.metadata = stub_server.good_metadata()
    stub_server.registration = (201, {"client_id": "stub-client"})
    stub_server.resource_scopes = None
    stub_server.registered.clear()
    stub_server.authorized.clear()
    return stub_server


REDIRECT_URI = "http://127.0.0.1:33418/callback"


def oauth(
    stub: Stub,
    redirect_uri: str = REDIRECT_URI,
    answer_state: str | None = None,
    answer: dict[str, Any] | None = None,
    **options: Any,
) -> OAuth:
    """An OAuth whose redirect step records the authorization request and answers with `answer`
    (by default a code) and the state sent."""

    async def redirect(url: str) -> str:
        query = parse_qs(urlsplit(url).query)
        stub.authorized.append(query)
        state = answer_state if answer_state is not None else query["state"][0]
        callback = {"code": "c"} if answer is None else answer
        return f"{redirect_uri}?{urlencode({**callback, 'state': state}, doseq=True)}"

    return OAuth(redirect=redirect, redirect_uri=redirect_uri, **options)


async def call(stub: Stub, auth: OAuth) -> None:
    async with Client(f"{stub.base}/mcp", auth=auth, version="2026-07-28") as client:
        await client.list_tools()


NOT_FOUND = "token request refused (HTTP 404): Not Found"  # the stub has no token endpoint: the flow ends there


@pytest.mark.parametrize(
    ("redirect_uri", "more", "expected"),
    [
        (REDIRECT_URI, {}, {"application_type": "native"}),  # a loopback redirect: a CLI or desktop app
        (
            "https://notes.example.com/cb",
            {"client_name": "Notes", "client_uri": "https://notes.example.com"},
            {"client_name": "Notes", "application_type": "web", "client_uri": "https://notes.example.com"},
        ),
    ],
)
async def test_dynamic_registration_sends_the_clients_metadata_and_nothing_else(
    stub: Stub, redirect_uri: str, more: dict[str, str], expected: dict[str, str]
) -> None:
    """RFC 7591 §2's client metadata; `refresh_token` among the grant types (index.mdx, Refresh
    Tokens) and an `application_type` that fits the redirect (client-registration.mdx, Application
    Type and Redirect URI Constraints); `client_uri` only when there is one."""
    stub.registration = (400, {"error": "invalid_client_metadata", "error_description": "stop here"})
    with pytest.raises(AuthorizationError):
        await call(stub, oauth(stub, redirect_uri, **more))
    assert stub.registered == [
        {
            "client_name": "mcpref client",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
            **expected,
        }
    ]


@pytest.mark.parametrize(
    ("methods", "wanted"),
    [
        (None, "client_secret_basic"),  # RFC 8414 §2: the default when the server lists none
        (["client_secret_basic", "none"], "none"),
        (["client_secret_post", "client_secret_basic"], "client_secret_basic"),
        (["private_key_jwt", "client_secret_post"], "client_secret_post"),
        (["private_key_jwt"], "private_key_jwt"),
    ],
)
async def test_registration_asks_to_be_a_public_client_else_basic_else_post_else_the_servers_first(
    stub: Stub, methods: list[str] | None, wanted: str
) -> None:
    """mcpref's choice among the server's `token_endpoint_auth_methods_supported`: a client on the
    user's machine keeps no secret well, so `none` first; then RFC 8414's default, then the form."""
    stub.metadata.pop("token_endpoint_auth_methods_supported")
    if methods is not None:
        stub.metadata["token_endpoint_auth_methods_supported"] = methods
    stub.registration = (400, {"error": "invalid_client_metadata"})
    with pytest.raises(AuthorizationError):
        await call(stub, oauth(stub))
    assert [sent["token_endpoint_auth_method"] for sent in stub.registered] == [wanted]


@pytest.mark.parametrize(
    ("answer", "kept"),
    [
        (
            {"client_id": "c1", "client_secret": "s1", "token_endpoint_auth_method": "client_secret_post"},
            ClientRegistration("c1", "s1", "client_secret_post"),
        ),
        ({"client_id": "c2"}, ClientRegistration("c2", None, "none")),
    ],
)
@pytest.mark.parametrize("status", [201, 200])
async def test_a_registration_is_kept_as_the_server_answered_it(
    stub: Stub, answer: dict[str, str], kept: ClientRegistration, status: int
) -> None:
    """RFC 7591 §3.2.1: the response holds what was registered, which may differ from what was
    asked; a method it leaves out is the one asked for. Kept per issuer (client-registration.mdx,
    Authorization Server Binding). The RFC's status is 201; a 200 is taken too."""
    stub.registration = (status, answer)
    auth = oauth(stub)
    with pytest.raises(AuthorizationError) as ended:
        await call(stub, auth)
    assert str(ended.value) == NOT_FOUND
    assert auth.store.registrations == {stub.base: kept}


async def test_a_registration_answer_without_a_client_id_is_refused_in_words(stub: Stub) -> None:
    stub.registration = (201, {"client_secret": "s1"})
    with pytest.raises(AuthorizationError) as refused:
        await call(stub, oauth(stub))
    assert str(refused.value) == "the registration response has no client_id"
    assert stub.authorized == []


async def test_an_issuer_that_gives_no_client_id_is_named_with_what_to_pass(stub: Stub) -> None:
    """client-registration.mdx's three ways to a client ID, none of them open here."""
    stub.metadata.pop("registration_endpoint")
    with pytest.raises(AuthorizationError) as refused:
        await call(stub, oauth(stub, client_metadata_url="https://app.example.com/client.json"))
    assert str(refused.value) == (
        f"no client ID for {stub.base}: it takes no client ID metadata document or dynamic "
        "registration, and none was pre-registered (pass clients={issuer: ClientRegistration(...)})"
    )


async def test_a_refused_registration_is_an_error_that_says_why(stub: Stub) -> None:
    stub.registration = (400, {"error": "invalid_redirect_uri", "error_description": "web apps only"})
    with pytest.raises(AuthorizationError) as refused:
        await call(stub, oauth(stub))
    assert refused.value.error == "invalid_redirect_uri" and "web apps only" in str(refused.value)
    assert stub.authorized == []


@pytest.mark.parametrize("methods", [None, ["plain"]])
async def test_no_s256_in_the_metadata_and_the_flow_stops_before_the_user_sees_anything(
    stub: Stub, methods: list[str] | None
) -> None:
    stub.metadata.pop("code_challenge_methods_supported")
    if methods is not None:
        stub.metadata["code_challenge_methods_supported"] = methods
    with pytest.raises(AuthorizationError) as refused:
        await call(stub, oauth(stub))
    assert str(refused.value) == (
        f"{stub.base} does not list S256 in code_challenge_methods_supported: "
        "without PKCE the flow is refused (security-considerations.mdx)"
    )
    assert stub.authorized == []


async def test_a_redirect_with_another_state_is_refused_before_the_token_request(stub: Stub) -> None:
    with pytest.raises(AuthorizationError) as refused:
        await call(stub, oauth(stub, answer_state="forged"))
    assert str(refused.value) == "the authorization response's state is not the one sent: refused"
    assert len(stub.authorized) == 1  # the user went; nothing came of the forged answer


async def test_an_error_from_the_wrong_issuer_is_not_acted_on_or_shown(stub: Stub) -> None:
    """A redirect carrying an error and another issuer's `iss`: refused for the issuer, and none of
    its error text reaches the caller (index.mdx, Authorization Response Validation)."""

    async def forged(url: str) -> str:
        query = parse_qs(urlsplit(url).query)
        stub.authorized.append(query)
        forged_error = {
            "error": "access_denied",
            "error_description": "call +1-555-SCAM to restore access",
            "state": query["state"][0],
            "iss": "https://evil.example",
        }
        return f"{REDIRECT_URI}?{urlencode(forged_error)}"

    with pytest.raises(AuthorizationError) as refused:
        await call(stub, OAuth(redirect=forged, redirect_uri=REDIRECT_URI))
    assert "RFC 9207" in str(refused.value)
    assert "SCAM" not in str(refused.value) and refused.value.error is None


@pytest.mark.parametrize(
    ("answer", "message", "error"),
    [
        (
            {"error": "access_denied", "error_description": "the user said no"},
            "authorization refused: access_denied the user said no",
            "access_denied",
        ),
        ({"error": "access_denied"}, "authorization refused: access_denied", "access_denied"),
        ({}, "the authorization response has no code", None),
        ({"code": ""}, "the authorization response has no code", None),
        ({"code": ["c1", "c2"]}, "the authorization response has no code", None),
    ],
)
async def test_an_authorization_response_without_one_code_is_refused_with_the_servers_error(
    stub: Stub, answer: dict[str, Any], message: str, error: str | None
) -> None:
    """RFC 6749 §4.1.2.1: a refusal carries `error` and maybe `error_description`, both shown;
    anything else that is not exactly one non-empty `code` has no code to exchange."""
    with pytest.raises(AuthorizationError) as refused:
        await call(stub, oauth(stub, answer=answer))
    assert (str(refused.value), refused.value.error) == (message, error)


async def test_an_empty_iss_is_another_issuer_not_a_missing_one(stub: Stub) -> None:
    """RFC 9207 §2.4: an `iss` that is present must equal the issuer; a blank one is present."""
    with pytest.raises(AuthorizationError) as refused:
        await call(stub, oauth(stub, answer={"code": "c", "iss": ""}))
    assert str(refused.value) == (
        f"the authorization response came from issuer '', not {stub.base!r}: refused (RFC 9207)"
    )


async def test_an_authorization_endpoint_with_a_query_keeps_it(stub: Stub) -> None:
    """RFC 6749 §3.1: the endpoint's own query component is kept, and the request's added to it."""
    stub.metadata["authorization_endpoint"] = f"{stub.base}/authorize?tenant=t1"
    with pytest.raises(AuthorizationError):
        await call(stub, oauth(stub))
    (query,) = stub.authorized
    assert (query["tenant"], query["response_type"]) == (["t1"], ["code"])


@pytest.mark.parametrize(
    ("resource_scopes", "offered", "options", "asked"),
    [
        (["notes:read", "notes:write"], None, {}, ["notes:read notes:write"]),
        (["notes:read"], ["notes:read", "offline_access"], {}, ["notes:read offline_access"]),
        (["notes:read"], ["offline_access"], {"offline_access": False}, ["notes:read"]),
        (None, ["offline_access"], {}, None),  # offline_access alone is not worth a scope parameter
        ("notes:read", None, {}, None),  # RFC 9728 §2: scopes_supported is a JSON array, else not read
        (
            ["notes:read"],
            ["offline_access"],
            {"scope": ["offline_access", "notes:write"]},
            ["offline_access notes:write"],
        ),
    ],
)
async def test_the_scopes_asked_for_are_the_resources_and_offline_access_where_the_server_lists_it(
    stub: Stub,
    resource_scopes: Any,
    offered: list[str] | None,
    options: dict[str, Any],
    asked: list[str] | None,
) -> None:
    """index.mdx, Scope Selection Strategy: with no scope in the challenge, the protected resource
    metadata's `scopes_supported`; index.mdx, Refresh Tokens: `offline_access` added, once, when the
    authorization server's `scopes_supported` holds it; `OAuth(scope=...)` over both."""
    stub.resource_scopes = resource_scopes
    if offered is not None:
        stub.metadata["scopes_supported"] = offered
    with pytest.raises(AuthorizationError):
        await call(stub, oauth(stub, **options))
    (query,) = stub.authorized
    assert query.get("scope") == asked
