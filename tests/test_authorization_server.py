"""mcpref/examples/authorization_server under a real uvicorn: each rule of the code grant refuses what it should.

The suite's own checks of the happy path are in tests/conformance/test_authorization_conformance.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import KeySet

from mcpref.examples.authorization_server import RegisteredClient, create_app
from tests.conftest import running

REDIRECT = "http://127.0.0.1:1/callback"
RESOURCE = "http://127.0.0.1:8000/secure/mcp"
VERIFIER = "v" * 50


class Deferred:
    """An ASGI app made once the server's URL (its issuer) is known."""

    app: Any = None
    base: str = ""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def issuer() -> Iterator[str]:
    deferred = Deferred()
    with running(deferred) as base:
        deferred.app = create_app(
            base,
            clients=[RegisteredClient("app", [REDIRECT]), RegisteredClient("backend", [REDIRECT], "s3cret")],
            auto_approve="alice",
            resources=[RESOURCE, "http://127.0.0.1:8000/other/mcp"],
        )
        yield base


def authorize(issuer: str, **overrides: str) -> dict[str, list[str]]:
    """The query of the redirect back to the client (the server auto-approves as alice)."""
    query = {
        "response_type": "code",
        "client_id": "app",
        "redirect_uri": REDIRECT,
        "state": "xyz",
        "code_challenge": create_s256_code_challenge(VERIFIER),
        "code_challenge_method": "S256",
        "resource": RESOURCE,
        "scope": "mcp:tools",
        **overrides,
    }
    response = httpx.get(f"{issuer}/authorize?{urlencode({k: v for k, v in query.items() if v})}")
    assert response.status_code == 302, response.text
    location = response.headers["location"]
    assert location.startswith(overrides.get("redirect_uri", REDIRECT) + "?")
    return parse_qs(urlsplit(location).query)


def token(issuer: str, **form: str) -> httpx.Response:
    return httpx.post(f"{issuer}/token", data=form)


def exchange(issuer: str, code: str, **overrides: str) -> httpx.Response:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "client_id": "app"}
    return token(issuer, **{"code_verifier": VERIFIER, "resource": RESOURCE, **form, **overrides})


def test_the_token_is_for_the_resource_and_the_user(issuer: str) -> None:
    answer = authorize(issuer)
    assert answer["iss"] == [issuer] and answer["state"] == ["xyz"]
    response = exchange(issuer, answer["code"][0])
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    body = response.json()
    keys = KeySet.import_key_set(httpx.get(f"{issuer}/jwks").json())
    claims = jwt.decode(body["access_token"], keys).claims
    assert (claims["iss"], claims["sub"], claims["aud"], claims["scope"]) == (issuer, "alice", RESOURCE, "mcp:tools")
    assert 0 < claims["exp"] - claims["iat"] <= 3600, "access tokens are short-lived"
    assert body["token_type"] == "Bearer" and body["refresh_token"]


def test_a_wrong_pkce_verifier_is_refused(issuer: str) -> None:
    response = exchange(issuer, authorize(issuer)["code"][0], code_verifier="w" * 50)
    assert (response.status_code, response.json()["error"]) == (400, "invalid_grant")


def test_a_code_works_once(issuer: str) -> None:
    code = authorize(issuer)["code"][0]
    assert exchange(issuer, code).status_code == 200
    assert exchange(issuer, code).json()["error"] == "invalid_grant"


def test_the_code_serves_only_its_resource(issuer: str) -> None:
    response = exchange(issuer, authorize(issuer)["code"][0], resource="http://127.0.0.1:8000/other/mcp")
    assert response.json()["error"] == "invalid_target"


def test_plain_pkce_and_no_resource_are_refused_with_iss(issuer: str) -> None:
    answer = authorize(issuer, code_challenge_method="plain", code_challenge=VERIFIER)
    assert (answer["error"], answer["iss"]) == (["invalid_request"], [issuer])
    assert authorize(issuer, resource="")["error"] == ["invalid_target"]
    assert authorize(issuer, resource="https://evil.example/mcp")["error"] == ["invalid_target"]


def test_an_unregistered_redirect_uri_gets_no_redirect(issuer: str) -> None:
    query = {"response_type": "code", "client_id": "app", "redirect_uri": "https://evil.example/cb"}
    response = httpx.get(f"{issuer}/authorize?{urlencode(query)}")
    assert response.status_code == 400 and "location" not in response.headers


def test_a_loopback_redirect_may_use_any_port_and_nothing_else_varies(issuer: str) -> None:
    assert "code" in authorize(issuer, redirect_uri="http://127.0.0.1:45678/callback")
    for other in ("http://127.0.0.1:45678/elsewhere", "http://localhost:1/callback", "https://127.0.0.1:1/callback"):
        query = {"response_type": "code", "client_id": "app", "redirect_uri": other}
        assert httpx.get(f"{issuer}/authorize?{urlencode(query)}").status_code == 400


def test_a_loopback_redirect_registered_without_a_port_takes_any_port() -> None:
    """RFC 8252 §7.3, as the docs' client is registered: the port is the one the OS gave the listener."""
    deferred = Deferred()
    with running(deferred) as base:
        deferred.app = create_app(
            base, clients=[RegisteredClient("native", ["http://127.0.0.1/callback"])], auto_approve="alice"
        )
        for port in (1, 33418, 54321):
            sent = f"http://127.0.0.1:{port}/callback"
            assert "code" in authorize(base, client_id="native", redirect_uri=sent)
        query = {"response_type": "code", "client_id": "native", "redirect_uri": "http://127.0.0.1:1/other"}
        assert httpx.get(f"{base}/authorize?{urlencode(query)}").status_code == 400


def test_refresh_tokens_rotate(issuer: str) -> None:
    first = exchange(issuer, authorize(issuer)["code"][0]).json()["refresh_token"]
    form = {"grant_type": "refresh_token", "client_id": "app", "resource": RESOURCE}
    renewed = token(issuer, refresh_token=first, **form)
    assert renewed.status_code == 200 and renewed.json()["refresh_token"] != first
    replayed = token(issuer, refresh_token=first, **form)
    assert replayed.json()["error"] == "invalid_grant"
    wider = token(issuer, refresh_token=renewed.json()["refresh_token"], scope="mcp:tools mcp:admin", **form)
    assert wider.json()["error"] == "invalid_scope"


def test_a_confidential_client_must_authenticate(issuer: str) -> None:
    code = authorize(issuer, client_id="backend")["code"][0]
    assert exchange(issuer, code, client_id="backend").status_code == 401
    code = authorize(issuer, client_id="backend")["code"][0]
    response = httpx.post(
        f"{issuer}/token",
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": VERIFIER},
        auth=("backend", "s3cret"),
    )
    assert response.status_code == 200


def test_the_metadata_and_the_keys_are_public_to_any_page(issuer: str) -> None:
    asked = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "mcp-protocol-version"}
    for url in (f"{issuer}/.well-known/oauth-authorization-server", f"{issuer}/jwks"):
        assert httpx.get(url, headers={"Origin": "https://app.example"}).headers["access-control-allow-origin"] == "*"
        preflight = httpx.options(url, headers={"Origin": "https://app.example", **asked})
        assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"
        assert preflight.headers["access-control-allow-headers"] == "mcp-protocol-version"


@pytest.mark.parametrize(
    ("page", "readable"),
    [
        ("http://127.0.0.1:5173", True),  # the origin of the client's loopback redirect URI, any port
        ("http://localhost:5173", False),
        ("https://evil.example", False),
    ],
)
def test_only_a_public_clients_own_page_reads_its_token_responses(issuer: str, page: str, readable: bool) -> None:
    form = {"grant_type": "authorization_code", "redirect_uri": REDIRECT, "client_id": "app", "resource": RESOURCE}
    for verifier, status in ((VERIFIER, 200), ("w" * 50, 400)):  # its errors too
        code = authorize(issuer)["code"][0]
        sent = {**form, "code": code, "code_verifier": verifier}
        response = httpx.post(f"{issuer}/token", data=sent, headers={"Origin": page})
        assert response.status_code == status
        assert response.headers.get("access-control-allow-origin") == (page if readable else None)
        assert response.headers.get("vary") == ("Origin" if readable else None)


def test_no_page_reads_a_confidential_clients_tokens_nor_the_authorization_endpoint(issuer: str) -> None:
    code = authorize(issuer, client_id="backend")["code"][0]
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": VERIFIER}
    page = {"Origin": "http://127.0.0.1:5173"}
    answer = httpx.post(f"{issuer}/token", data=form, auth=("backend", "s3cret"), headers=page)
    assert answer.status_code == 200 and "access-control-allow-origin" not in answer.headers
    query = {"response_type": "code", "client_id": "app", "redirect_uri": REDIRECT, "resource": RESOURCE}
    navigated = httpx.get(f"{issuer}/authorize?{urlencode(query)}", headers=page)
    assert "access-control-allow-origin" not in navigated.headers


@pytest.mark.parametrize(
    ("field", "value"),
    [
        pytest.param("issuer", None, id="rfc8414"),
        pytest.param("authorization_response_iss_parameter_supported", True, id="iss-parameter"),
        pytest.param("code_challenge_methods_supported", ["S256"], id="pkce-s256"),
        pytest.param("client_id_metadata_document_supported", True, id="cimd"),
    ],
)
def test_the_metadata_advertises(issuer: str, field: str, value: Any) -> None:
    """RFC 8414 metadata at the path-inserted well-known URI, one advertised feature per case."""
    mount = urlsplit(issuer)
    url = f"{mount.scheme}://{mount.netloc}/.well-known/oauth-authorization-server{mount.path.rstrip('/')}"
    metadata = httpx.get(url).json()
    assert metadata[field] == (issuer if value is None else value)


def test_access_tokens_are_short_lived(issuer: str) -> None:
    body = exchange(issuer, authorize(issuer)["code"][0]).json()
    claims = jwt.decode(body["access_token"], KeySet.import_key_set(httpx.get(f"{issuer}/jwks").json())).claims
    assert 0 < claims["exp"] - claims["iat"] <= 3600 and body["expires_in"] <= 3600


@pytest.fixture(scope="module")
def metadata_documents() -> Iterator[str]:
    """Client ID metadata documents served on loopback (HTTPS in real life; see insecure_cimd_hosts):
    `good.json` names itself; `elsewhere.json` names another URL as its client_id."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    deferred = Deferred()

    async def document(request: Request) -> JSONResponse:
        name = "good.json" if request.path_params["name"] == "good.json" else "someone-else.json"
        body = {"client_id": f"{deferred.base}/clients/{name}", "client_name": "CIMD app", "redirect_uris": [REDIRECT]}
        return JSONResponse(body)

    deferred.app = Starlette(routes=[Route("/clients/{name:str}", document)])
    with running(deferred) as base:
        deferred.base = base
        yield base


def test_a_client_id_metadata_document_is_fetched_and_checked(metadata_documents: str) -> None:
    deferred = Deferred()
    with running(deferred) as issuer:
        deferred.app = create_app(issuer, auto_approve="alice", resources=[RESOURCE], insecure_cimd_hosts=["127.0.0.1"])
        client_id = f"{metadata_documents}/clients/good.json"
        code = authorize(issuer, client_id=client_id)["code"][0]
        assert exchange(issuer, code, client_id=client_id).status_code == 200
        # The document must name itself, and list the redirect URI.
        for bad in (f"{metadata_documents}/clients/elsewhere.json", f"{metadata_documents}/nothing-here"):
            query = {"response_type": "code", "client_id": bad, "redirect_uri": REDIRECT}
            assert httpx.get(f"{issuer}/authorize?{urlencode(query)}").status_code == 400
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": "http://127.0.0.1:1/other"}
        assert httpx.get(f"{issuer}/authorize?{urlencode(query)}").status_code == 400
    # Plain http is refused unless the host is allowed (loopback tests only).
    deferred = Deferred()
    with running(deferred) as issuer:
        deferred.app = create_app(issuer, auto_approve="alice", resources=[RESOURCE])
        client_id = f"{metadata_documents}/clients/good.json"
        query = {"response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT}
        assert httpx.get(f"{issuer}/authorize?{urlencode(query)}").status_code == 400
