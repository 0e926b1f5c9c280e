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
    """What the odd server publishes, and every path the client asked it for (with its Accept)."""

    def __init__(
        self,
        *,
        challenge_names_metadata: bool = True,
        challenge: bool = True,
        prm_at: str = "path",
        broken: str | None = None,
        **metadata: Any,
    ) -> None:
        self.challenge_names_metadata = challenge_names_metadata
        self.challenge = challenge  # False: a 401 with no WWW-Authenticate at all
        # "path": the path-inserted well-known URI; "root": the root one; "custom": elsewhere, named
        # by the challenge; "nowhere": not served.
        self.prm_at = prm_at
        self.broken = broken  # a path answered with a body that cannot be read (bad gzip)
        self.as_at = metadata.pop("as_at", "oauth")  # "oauth": RFC 8414; "oidc": OpenID path appending
        #: Over the protected resource metadata: `resource`, `authorization_servers` (None: left out).
        self.document = metadata.pop("document", {})
        self.metadata = metadata
        self.asked: list[str] = []
        self.accepts: list[str | None] = []
        self.base = ""

    def prm_path(self) -> str:
        custom = {"custom": "/meta/prm", "nowhere": "/nowhere"}
        well_known = "/.well-known/oauth-protected-resource" + ("/mcp" if self.prm_at == "path" else "")
        return custom.get(self.prm_at, well_known)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        request = Request(scope, receive)
        base = self.base = str(request.base_url).rstrip("/")
        path = request.url.path
        self.asked.append(path)
        self.accepts.append(request.headers.get("accept"))
        prm_path = self.prm_path()
        as_paths = {
            "oauth": "/.well-known/oauth-authorization-server/as",
            "oidc": "/as/.well-known/openid-configuration",
        }
        if path == "/mcp":
            hint = f' resource_metadata="{base}{prm_path}",' if self.challenge_names_metadata else ""
            headers = {"WWW-Authenticate": f'Bearer{hint} scope="s"'} if self.challenge else {}
            response: Response = Response(status_code=401, headers=headers)
        elif path == self.broken:
            response = Response(b"not gzip", headers={"Content-Type": "application/json", "Content-Encoding": "gzip"})
        elif path == prm_path and self.prm_at != "nowhere":
            document = {"resource": f"{base}/mcp", "authorization_servers": [f"{base}/as"], **self.document}
            response = JSONResponse({k: v for k, v in document.items() if v is not None})
        elif path == as_paths.get(self.as_at):
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
    assert isinstance(error, AuthorizationError)
    assert str(error) == (
        f"the metadata fetched for issuer '{setup.base}/as' says issuer 'https://honest.example': "
        "not used (RFC 8414 §3.3)"
    )
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


def test_a_metadata_url_named_in_the_challenge_is_the_one_fetched() -> None:
    """RFC 9728 §5.1: the challenge's `resource_metadata` is where the document is; the well-known
    URIs are for a challenge that names none. Every metadata request asks for JSON."""
    setup = Setup(prm_at="custom")
    error, _ = attempt(setup)
    assert isinstance(error, Reached)
    assert setup.asked[:3] == ["/mcp", "/meta/prm", "/.well-known/oauth-authorization-server/as"]
    assert [(accept or "").lower() for accept in setup.accepts[1:3]] == ["application/json"] * 2


def test_a_401_with_no_challenge_at_all_still_leads_to_the_well_known_uris() -> None:
    setup = Setup(challenge=False)
    error, _ = attempt(setup)
    assert isinstance(error, Reached)
    assert setup.asked[1] == "/.well-known/oauth-protected-resource/mcp"


def test_a_well_known_uri_whose_answer_cannot_be_read_is_passed_for_the_next() -> None:
    setup = Setup(challenge_names_metadata=False, prm_at="root", broken="/.well-known/oauth-protected-resource/mcp")
    error, _ = attempt(setup)
    assert isinstance(error, Reached)


def test_metadata_found_nowhere_is_named_with_every_uri_tried() -> None:
    setup = Setup(challenge_names_metadata=False, prm_at="nowhere")
    error, _ = attempt(setup)
    prm = f"{setup.base}/.well-known/oauth-protected-resource"
    assert str(error) == f"no protected resource metadata found: tried {prm}/mcp (HTTP 404), {prm} (HTTP 404)"
    setup = Setup(as_at="nowhere")
    error, _ = attempt(setup)
    tried = ", ".join(
        f"{setup.base}{path} (HTTP 404)"
        for path in (
            "/.well-known/oauth-authorization-server/as",
            "/.well-known/openid-configuration/as",
            "/as/.well-known/openid-configuration",
        )
    )
    assert str(error) == f"no authorization server metadata found: tried {tried}"


def test_a_metadata_answer_that_cannot_be_read_is_named_with_the_error() -> None:
    setup = Setup(broken="/meta/prm", prm_at="custom")
    error, _ = attempt(setup)
    assert str(error).startswith(f"no protected resource metadata found: tried {setup.base}/meta/prm (DecodingError(")


def test_metadata_for_another_resource_is_refused_by_name() -> None:
    """RFC 9728 §3.3: the document's `resource` must be the endpoint's (or a leading part of it)."""
    setup = Setup(document={"resource": "https://evil.example/mcp"})
    error, query = attempt(setup)
    assert str(error) == (
        f"the protected resource metadata names resource 'https://evil.example/mcp', which is not {setup.base}/mcp: "
        "refused (RFC 9728 §3.3)"
    )
    assert query == {}


@pytest.mark.parametrize("servers", [None, [], [5]])
def test_metadata_without_an_authorization_server_is_refused_in_words(servers: list[Any] | None) -> None:
    error, query = attempt(Setup(document={"authorization_servers": servers}))
    assert str(error) == "the protected resource metadata names no authorization server"
    assert query == {}
