"""mcpref.client's OAuth discovery against servers that publish their metadata oddly or wrongly.

A small real server (uvicorn on loopback) plays the MCP endpoint, its protected resource metadata
and its authorization server's metadata; each test changes one thing and watches which documents
the client asks for, and where it stops. Nothing here reaches a token request: the redirect step
records the authorization URL and ends the flow.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from mcpref.client import AuthorizationError, Client, ClientRegistration, OAuth
from tests.conftest import running

REDIRECT = "http://127.0.0.1:1/callback"


class Reached(Exception):
    """The flow got as far as sending the user to the authorization server."""


class Setup:
    """What the odd server publishes, and every path the client asked it for."""

    def __init__(self, *, challenge_names_metadata: bool = True, prm_at: str = "path", **metadata: Any) -> None:
        self.challenge_names_metadata = challenge_names_metadata
        self.prm_at = prm_at  # "path": the path-inserted well-known URI; "root": the root one
        self.as_at = metadata.pop("as_at", "oauth")  # "oauth": RFC 8414; "oidc": OpenID path appending
        self.metadata = metadata
        self.asked: list[str] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        base = str(request.base_url).rstrip("/")
        path = request.url.path
        self.asked.append(path)
        prm_path = "/.well-known/oauth-protected-resource" + ("/mcp" if self.prm_at == "path" else "")
        if path == "/mcp":
            hint = f' resource_metadata="{base}{prm_path}",' if self.challenge_names_metadata else ""
            response: Response = Response(status_code=401, headers={"WWW-Authenticate": f'Bearer{hint} scope="s"'})
        elif path == prm_path:
            response = JSONResponse({"resource": f"{base}/mcp", "authorization_servers": [f"{base}/as"]})
        elif (
            path
            == {"oauth": "/.well-known/oauth-authorization-server/as", "oidc": "/as/.well-known/openid-configuration"}[
                self.as_at
            ]
        ):
            document = {
                "issuer": f"{base}/as",
                "authorization_endpoint": f"{base}/as/authorize",
                "token_endpoint": f"{base}/as/token",
                "code_challenge_methods_supported": ["S256"],
                **self.metadata,
            }
            response = JSONResponse({k: v for k, v in document.items() if v is not None})
        else:
            response = Response(status_code=404)
        await response(scope, receive, send)


def attempt(setup: Setup) -> tuple[BaseException, dict[str, str]]:
    """Run the client against `setup` until the flow stops; the error and the authorization query."""
    query: dict[str, str] = {}

    async def redirect(url: str) -> str:
        query.update({k: v[0] for k, v in parse_qs(urlsplit(url).query).items()})
        raise Reached(url)

    async def run(base: str) -> None:
        auth = OAuth(redirect=redirect, redirect_uri=REDIRECT, clients={f"{base}/as": ClientRegistration("c")})
        async with Client(f"{base}/mcp", auth=auth, version="2026-07-28") as client:
            await client.call_tool("anything", {})

    with running(setup) as base, pytest.raises((Reached, AuthorizationError, httpx.HTTPError)) as caught:
        asyncio.run(run(base))
    return caught.value, query


def test_metadata_whose_issuer_differs_is_not_used() -> None:
    setup = Setup(issuer="https://honest.example")
    error, query = attempt(setup)
    assert isinstance(error, AuthorizationError) and "not used" in str(error)
    assert query == {}  # never sent anywhere on its strength


@pytest.mark.parametrize("as_at", ["oauth", "oidc"])
def test_no_s256_in_the_metadata_means_no_authorization(as_at: str) -> None:
    error, query = attempt(Setup(as_at=as_at, code_challenge_methods_supported=None))
    assert isinstance(error, AuthorizationError) and "S256" in str(error)
    assert query == {}


def test_without_a_hint_the_client_tries_the_well_known_uris_path_first() -> None:
    setup = Setup(challenge_names_metadata=False, prm_at="root")
    error, query = attempt(setup)
    assert isinstance(error, Reached)
    wanted = ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
    assert [path for path in setup.asked if "oauth-protected-resource" in path] == wanted


def test_authorization_server_metadata_is_found_by_either_discovery() -> None:
    for as_at in ("oauth", "oidc"):
        setup = Setup(as_at=as_at)
        error, query = attempt(setup)
        assert isinstance(error, Reached) and query["client_id"] == "c", as_at
        assert setup.asked[1].startswith("/.well-known/oauth-protected-resource")  # PRM first, then the AS
