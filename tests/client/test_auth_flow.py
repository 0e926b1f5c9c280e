"""mcpref.client's OAuth against an authorization server that misbehaves on purpose, under uvicorn.

The suite's auth/* scenarios cover the usual flows; these cover what they do not: what dynamic
registration sends, a refused registration, metadata without PKCE, a redirect with the wrong state.
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

from mcpref.client import AuthorizationError, Client, OAuth
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
        self.registered: list[dict[str, Any]] = []
        self.authorized: list[dict[str, list[str]]] = []

    def app(self) -> Starlette:
        async def mcp(request: Request) -> Response:
            challenge = f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
            return Response(status_code=401, headers={"WWW-Authenticate": challenge})

        async def resource_metadata(request: Request) -> Response:
            return JSONResponse({"resource": f"{self.base}/mcp", "authorization_servers": [self.base]})

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
    stub_server.registered.clear()
    stub_server.authorized.clear()
    return stub_server


def oauth(stub: Stub, redirect_uri: str = "http://127.0.0.1:33418/callback", answer_state: str | None = None) -> OAuth:
    """An OAuth whose redirect step records the authorization request and answers with a code."""

    async def redirect(url: str) -> str:
        query = parse_qs(urlsplit(url).query)
        stub.authorized.append(query)
        state = answer_state if answer_state is not None else query["state"][0]
        return f"{redirect_uri}?{urlencode({'code': 'c', 'state': state})}"

    return OAuth(redirect=redirect, redirect_uri=redirect_uri)


async def call(stub: Stub, auth: OAuth) -> None:
    async with Client(f"{stub.base}/mcp", auth=auth, version="2026-07-28") as client:
        await client.list_tools()


async def test_dynamic_registration_asks_for_refresh_and_says_what_kind_of_app(stub: Stub) -> None:
    stub.registration = (400, {"error": "invalid_client_metadata", "error_description": "stop here"})
    with pytest.raises(AuthorizationError):
        await call(stub, oauth(stub))
    (sent,) = stub.registered
    assert sent["grant_types"] == ["authorization_code", "refresh_token"]
    assert sent["application_type"] == "native"  # a loopback redirect: a CLI or desktop app
    assert sent["redirect_uris"] == ["http://127.0.0.1:33418/callback"]


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
    with pytest.raises(AuthorizationError, match="state"):
        await call(stub, oauth(stub, answer_state="forged"))
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
        return f"http://127.0.0.1:33418/callback?{urlencode(forged_error)}"

    with pytest.raises(AuthorizationError) as refused:
        await call(stub, OAuth(redirect=forged, redirect_uri="http://127.0.0.1:33418/callback"))
    assert "RFC 9207" in str(refused.value)
    assert "SCAM" not in str(refused.value) and refused.value.error is None
