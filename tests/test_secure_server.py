"""The authorization demo under a real uvicorn: the local authorization server at /auth, the protected
MCP server at /secure/mcp (examples/secure_server), and mcpref.client's OAuth between them.

Every attack case fails closed: no token, a token for another resource (what a server that
passed tokens through would be handed), a token from another issuer or forged, too little scope,
a handle or a `requestState` that belongs to another user, a hostile Origin before anything else.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import ECKey

from examples.authorization_server import Grant
from examples.secure_server.demo import DOCS_CLIENT, AuthDemo
from mcpref.client import Client, ClientRegistration, LoopbackRedirect, OAuth
from tests.conformance.test_authorization_conformance import free_port
from tests.conftest import META, VERSION, checked, running

REDIRECT = DOCS_CLIENT.redirect_uris[0]
#: Request `_meta` of a client that can answer a form elicitation.
ELICITING = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
VERIFIER = "x" * 64


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[AuthDemo, str]]:
    """The demo with its consent page on, so each test signs in as the user it needs."""
    app = AuthDemo(auto_approve=None)
    with running(app) as url:
        yield app, url


@pytest.fixture
def origin(demo: tuple[AuthDemo, str]) -> str:
    return demo[1]


@pytest.fixture
def demo_server(demo: tuple[AuthDemo, str]) -> Any:
    """The demo's authorization server object (to mint tokens the flow never would)."""
    app, origin = demo
    return app.pair(origin)[0].state.server


def sign_in(origin: str, user: str, scope: str = "mcp:tools") -> dict[str, Any]:
    """The authorization code flow by hand, as a browser and a client would: the consent page,
    the user's choice, the redirect, the token request. Returns the token response."""
    query = {
        "response_type": "code",
        "client_id": DOCS_CLIENT.client_id,
        "redirect_uri": REDIRECT,
        "state": "s",
        "code_challenge": create_s256_code_challenge(VERIFIER),
        "code_challenge_method": "S256",
        "resource": f"{origin}/secure/mcp",
        "scope": scope,
    }
    with httpx.Client(base_url=origin) as http:
        page = http.get(f"/auth/authorize?{urlencode(query)}")
        assert page.status_code == 200 and "asks for access" in page.text
        request_id = re.search(r'name="request" value="([^"]+)"', page.text)[1]  # type: ignore[index]
        back = http.post("/auth/authorize/decision", data={"request": request_id, "user": user, "decision": "approve"})
        assert back.status_code == 302
        code = parse_qs(urlsplit(back.headers["location"]).query)["code"][0]
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT,
            "code_verifier": VERIFIER,
            "client_id": DOCS_CLIENT.client_id,
            "resource": f"{origin}/secure/mcp",
        }
        answer = http.post("/auth/token", data=form)
        assert answer.status_code == 200, answer.text
        return answer.json()


def refresh(origin: str, refresh_token: str) -> dict[str, Any]:
    form = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "client_id": DOCS_CLIENT.client_id,
        "resource": f"{origin}/secure/mcp",
    }
    answer = httpx.post(f"{origin}/auth/token", data=form)
    assert answer.status_code == 200, answer.text
    return answer.json()


def call(origin: str, token: str | None, name: str, arguments: dict[str, Any], **params: Any) -> httpx.Response:
    """`tools/call` on the protected server, with `Authorization: Bearer <token>` when given."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
        **({"Authorization": f"Bearer {token}"} if token else {}),
    }
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": ELICITING, **params},
    }
    response = httpx.post(f"{origin}/secure/mcp", json=body, headers=headers)
    if response.status_code == 200:
        response.messages = checked(response, "tools/call")  # type: ignore[attr-defined]
    return response


def result(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    return response.messages[-1]["result"]  # type: ignore[attr-defined]


def challenge(response: httpx.Response) -> str:
    return response.headers["www-authenticate"]


# -- the client does the whole flow -------------------------------------------------------------


async def browser(url: str) -> None:
    """The user at a browser: the consent page, "alice", Approve, and the redirect followed to the
    client's loopback listener."""
    async with httpx.AsyncClient(follow_redirects=True) as http:
        page = await http.get(url)
        request_id = re.search(r'name="request" value="([^"]+)"', page.text)[1]  # type: ignore[index]
        action = urlsplit(url)._replace(path="/auth/authorize/decision", query="").geturl()
        done = await http.post(action, data={"request": request_id, "user": "alice", "decision": "approve"})
        assert "You can close this tab" in done.text


@pytest.mark.anyio
async def test_the_client_authorizes_steps_up_and_confirms(origin: str) -> None:
    def confirm(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": True}}

    listener = LoopbackRedirect(free_port(), open_browser=browser)
    registration = ClientRegistration(DOCS_CLIENT.client_id)
    auth = OAuth(redirect=listener, redirect_uri=listener.redirect_uri, clients={f"{origin}/auth": registration})
    async with Client(f"{origin}/secure/mcp", auth=auth, elicitation=confirm) as client:
        who = await client.call_tool("whoami", {})
        assert who["content"][0]["text"] == f"{origin}/auth#alice"
        notebook = (await client.call_tool("open_notebook", {}))["content"][0]["text"]
        # delete_notebook needs mcp:admin: 403 insufficient_scope, the client steps up, then confirms.
        deleted = await client.call_tool("delete_notebook", {"notebook": notebook})
        assert deleted["content"][0]["text"] == "deleted"
    assert auth.requested[(f"{origin}/auth", f"{origin}/secure/mcp")] >= {"mcp:tools", "mcp:admin"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# -- the protocol frames --------------------------------------------------------------------------


def test_no_token_gets_401_naming_the_metadata_and_scope(origin: str) -> None:
    response = call(origin, None, "whoami", {})
    assert response.status_code == 401
    assert challenge(response) == (
        f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/secure/mcp", scope="mcp:tools"'
    )
    metadata = httpx.get(f"{origin}/.well-known/oauth-protected-resource/secure/mcp").json()
    assert metadata["resource"] == f"{origin}/secure/mcp"
    assert metadata["authorization_servers"] == [f"{origin}/auth"]


def test_a_hostile_origin_is_refused_before_authentication(origin: str) -> None:
    response = httpx.post(
        f"{origin}/secure/mcp", content=b"{}", headers={"Origin": "https://evil.example", "Content-Type": "x"}
    )
    assert response.status_code == 403 and "www-authenticate" not in response.headers


def test_a_token_for_another_resource_is_refused(origin: str, demo_server: Any) -> None:
    """What a server that passed tokens through would do: take a token meant for someone else."""
    grant = Grant("mcpref-docs", "alice", ["mcp:tools"], "https://api.example/", 0)
    token = demo_server.access_token(grant, time.time())
    response = call(origin, token, "whoami", {})
    assert response.status_code == 401 and 'error="invalid_token"' in challenge(response)


def test_a_token_from_another_issuer_or_key_is_refused(origin: str, demo_server: Any) -> None:
    now = int(time.time())
    claims = {"sub": "alice", "aud": f"{origin}/secure/mcp", "scope": "mcp:tools", "iat": now, "exp": now + 60}
    stranger = ECKey.generate_key("P-256")
    for issuer in ("https://evil.example", f"{origin}/auth"):  # unknown issuer; right issuer, wrong key
        token = jwt.encode({"alg": "ES256", "typ": "at+jwt"}, {**claims, "iss": issuer}, stranger)
        response = call(origin, token, "whoami", {})
        assert response.status_code == 401 and 'error="invalid_token"' in challenge(response)
    expired = demo_server.access_token(Grant("mcpref-docs", "alice", ["mcp:tools"], f"{origin}/secure/mcp", 0), 0)
    assert call(origin, expired, "whoami", {}).status_code == 401


def test_missing_scope_is_403_with_the_scopes_to_ask_for(origin: str) -> None:
    tokens = sign_in(origin, "alice")
    notebook = result(call(origin, tokens["access_token"], "open_notebook", {}))["content"][0]["text"]
    response = call(origin, tokens["access_token"], "delete_notebook", {"notebook": notebook})
    assert response.status_code == 403
    assert 'error="insufficient_scope"' in challenge(response) and 'scope="mcp:admin mcp:tools"' in challenge(response)


def test_another_users_handle_is_refused(origin: str) -> None:
    alice, bob = sign_in(origin, "alice")["access_token"], sign_in(origin, "bob")["access_token"]
    notebook = result(call(origin, alice, "open_notebook", {}))["content"][0]["text"]
    assert "notebook of" in result(call(origin, alice, "read_notebook", {"notebook": notebook}))["content"][0]["text"]
    stolen = result(call(origin, bob, "read_notebook", {"notebook": notebook}))
    assert stolen["isError"] is True and "issued to someone else" in stolen["content"][0]["text"]


def test_a_refreshed_token_continues_the_round_and_another_user_cannot(origin: str) -> None:
    alice = sign_in(origin, "alice", "mcp:tools mcp:admin")
    bob = sign_in(origin, "bob", "mcp:tools mcp:admin")
    notebook = result(call(origin, alice["access_token"], "open_notebook", {}))["content"][0]["text"]
    asked = result(call(origin, alice["access_token"], "delete_notebook", {"notebook": notebook}))
    assert asked["resultType"] == "input_required"
    retry = {
        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": True}}},
        "requestState": asked["requestState"],
    }
    # Bob replays Alice's round with his own valid token: the state is bound to Alice.
    replayed = call(origin, bob["access_token"], "delete_notebook", {"notebook": notebook}, **retry)
    error = replayed.messages[-1]["error"]  # type: ignore[attr-defined]
    assert error["code"] == -32602 and "issued to a different principal" in error["message"]
    # Alice's token is refreshed between the rounds: same user, so the round goes on.
    renewed = refresh(origin, alice["refresh_token"])
    assert renewed["access_token"] != alice["access_token"]
    done = result(call(origin, renewed["access_token"], "delete_notebook", {"notebook": notebook}, **retry))
    assert done["content"][0]["text"] == "deleted"

