"""The authorization demo under a real uvicorn: the local authorization server at /auth, the protected
MCP server at /secure/mcp (mcpref/examples/secure_server), and mcpref.client's OAuth between them.

Every attack case fails closed: no token, a token for another resource (what a server that
passed tokens through would be handed), a token from another issuer or forged, too little scope,
a handle or a `requestState` that belongs to another user, a hostile Origin before anything else.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

from mcpref.client import AuthorizationError, Client, ClientRegistration, LoopbackRedirect, OAuth
from mcpref.examples.authorization_server import Grant
from mcpref.examples.secure_server import demo as demo_module
from mcpref.examples.secure_server.demo import DOCS_CLIENT, AuthDemo
from tests.conftest import META, checked, mcp_body, mcp_headers, running

REDIRECT = DOCS_CLIENT.redirect_uris[0]
#: Request `_meta` of a client that can answer a form elicitation.
ELICITING = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
VERIFIER = "x" * 64
#: Makes a `LoopbackRedirect` (the `loopback` fixture).
Listeners = Callable[..., LoopbackRedirect]


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
def loopback() -> Iterator[Listeners]:
    """Makes `LoopbackRedirect`s and gives their ports back after the test: a listener left to
    the garbage collector may have its socket collected first (a ResourceWarning, an error here)."""
    made: list[LoopbackRedirect] = []

    def make(**options: Any) -> LoopbackRedirect:
        made.append(LoopbackRedirect(**options))
        return made[-1]

    yield make
    for listener in made:
        listener.close()


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


def call(
    origin: str, token: str | None, name: str, arguments: dict[str, Any], page: str | None = None, **params: Any
) -> httpx.Response:
    """`tools/call` on the protected server, with `Authorization: Bearer <token>` when given, as a
    page from the origin `page` when given."""
    headers = mcp_headers("tools/call", name, **({"Authorization": f"Bearer {token}"} if token else {}))
    headers |= {"Origin": page} if page else {}
    body = mcp_body("tools/call", {"name": name, "arguments": arguments, **params}, meta=ELICITING)
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
async def test_the_client_authorizes_steps_up_and_confirms(origin: str, loopback: Listeners) -> None:
    def confirm(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"confirm": True}}

    listener = loopback(open_browser=browser)
    registration = ClientRegistration(DOCS_CLIENT.client_id)
    auth = OAuth(redirect=listener, clients={f"{origin}/auth": registration})
    async with Client(f"{origin}/secure/mcp", auth=auth, elicitation=confirm) as client:
        who = await client.call_tool("whoami", {})
        assert who["content"][0]["text"] == f"{origin}/auth#alice"
        notebook = (await client.call_tool("open_notebook", {}))["content"][0]["text"]
        # delete_notebook needs mcp:admin: 403 insufficient_scope, the client steps up, then confirms.
        deleted = await client.call_tool("delete_notebook", {"notebook": notebook})
        assert deleted["content"][0]["text"] == "deleted"
    assert auth.requested[(f"{origin}/auth", f"{origin}/secure/mcp")] >= {"mcp:tools", "mcp:admin"}


@pytest.mark.anyio
async def test_the_listener_takes_a_free_port_from_the_os_and_holds_it(origin: str) -> None:
    """No fixed port (33418 was in Linux's ephemeral range, and two clients collided on it): each
    listener gets its own from the OS, keeps it between flows, and the flow uses that one."""

    def taken(port: int) -> bool:
        with socket.socket() as other:
            try:
                other.bind(("127.0.0.1", port))
            except OSError:
                return True
            return False

    first, second = LoopbackRedirect(open_browser=browser), LoopbackRedirect()
    assert first.port != second.port and taken(first.port) and taken(second.port)
    auth = OAuth(redirect=first, clients={f"{origin}/auth": ClientRegistration(DOCS_CLIENT.client_id)})
    assert auth.redirect_uri == first.redirect_uri == f"http://127.0.0.1:{first.port}/callback"
    async with Client(f"{origin}/secure/mcp", auth=auth) as client:
        assert (await client.call_tool("whoami", {}))["content"][0]["text"] == f"{origin}/auth#alice"
    assert taken(first.port), "held again after the flow, for the next one"
    first.close()
    second.close()
    assert not taken(second.port), "given back (the first one's port keeps its connections in TIME_WAIT a while)"


# -- the protocol frames --------------------------------------------------------------------------


def test_the_consent_page_names_where_it_sends_the_user(origin: str) -> None:
    query = {
        "response_type": "code",
        "client_id": DOCS_CLIENT.client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": create_s256_code_challenge(VERIFIER),
        "code_challenge_method": "S256",
        "resource": f"{origin}/secure/mcp",
    }
    page = httpx.get(f"{origin}/auth/authorize?{urlencode(query)}")
    assert "Approving sends you to <strong>127.0.0.1</strong>" in page.text
    assert "runs on your own computer" in page.text
    assert page.headers["x-frame-options"] == "DENY"


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


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-authorization-server/auth", "/.well-known/oauth-protected-resource/secure/mcp"]
)
def test_a_host_that_is_a_loopback_name_and_more_is_421_and_written_nowhere(origin: str, path: str) -> None:
    """Issue 25: `127.0.0.1:PORT@evil.example` passed the loopback check and went into the
    metadata (`authorization_endpoint` then named evil.example) and the 401 challenge."""
    host = urlsplit(origin).netloc
    with httpx.Client(base_url=origin) as http:
        for forged in (f"{host}@evil.example", f"{host}@evil.example:{urlsplit(origin).port}", f"{host}/x"):
            assert http.get(path, headers={"Host": forged}).status_code == 421, forged
            response = http.post("/secure/mcp", json={}, headers={"Host": forged})
            assert response.status_code == 421 and "evil" not in response.headers.get("www-authenticate", "")


def test_made_up_ports_in_host_never_push_out_the_real_origins_grants(origin: str) -> None:
    """Issue 25: 64 requests naming other ports in `Host` evicted the real origin's authorization
    server, its refresh tokens and pending codes with it: every demo user was logged out."""
    tokens = sign_in(origin, "alice")
    port = urlsplit(origin).port
    with httpx.Client(base_url=origin) as http:
        for made_up in range(1, 2 * demo_module.MAX_ORIGINS):
            host = f"127.0.0.1:{made_up if made_up != port else 0}"
            metadata = http.get("/.well-known/oauth-authorization-server/auth", headers={"Host": host})
            assert metadata.json()["issuer"] == f"http://{host}/auth"  # a proxy in front may forward its Host
    assert refresh(origin, tokens["refresh_token"])["access_token"]


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


def test_a_malformed_request_is_the_endpoints_400_not_a_step_up(origin: str) -> None:
    """Issue 25: a request without `Mcp-Method`, or with a malformed `Mcp-Name`, got a 403 asking
    the user for every scope (admin rights over a malformed request)."""
    tokens = sign_in(origin, "alice")
    body = mcp_body("tools/call", {"name": "delete_notebook", "arguments": {"notebook": "n"}}, meta=ELICITING)
    correct = {**mcp_headers("tools/call", "delete_notebook"), "Authorization": f"Bearer {tokens['access_token']}"}
    without_method = {name: value for name, value in correct.items() if name != "Mcp-Method"}
    for headers in (without_method, {**correct, "Mcp-Name": "=?base64?!!!?="}):
        response = httpx.post(f"{origin}/secure/mcp", json=body, headers=headers)
        assert response.status_code == 400 and "www-authenticate" not in response.headers
        assert response.json()["error"]["code"] == -32020


def test_another_users_handle_is_refused(origin: str) -> None:
    alice, bob = sign_in(origin, "alice")["access_token"], sign_in(origin, "bob")["access_token"]
    notebook = result(call(origin, alice, "open_notebook", {}))["content"][0]["text"]
    assert "notebook of" in result(call(origin, alice, "read_notebook", {"notebook": notebook}))["content"][0]["text"]
    stolen = result(call(origin, bob, "read_notebook", {"notebook": notebook}))
    assert stolen["isError"] is True and "issued to someone else" in stolen["content"][0]["text"]


# -- a browser client from an allowed origin (CORS) ---------------------------------------------

#: A page on another loopback origin than the server's: the default origin policy allows it.
PAGE = "http://localhost:5173"
#: The headers a browser MCP client's authenticated POST carries, as its preflight names them.
POST_HEADERS = "authorization, content-type, mcp-protocol-version, mcp-method, mcp-name"


def readable_by(response: httpx.Response, page: str) -> bool:
    """Whether a browser lets a script on `page` read `response`."""
    allowed = response.headers.get("access-control-allow-origin")
    return allowed == "*" or (allowed == page and "origin" in response.headers.get("vary", "").lower())


def exposed(response: httpx.Response) -> set[str]:
    return {name.strip().lower() for name in response.headers.get("access-control-expose-headers", "").split(",")}


def test_a_page_from_an_allowed_origin_reads_the_challenge(origin: str) -> None:
    for token in (None, "not-a-token"):
        response = call(origin, token, "whoami", {}, page=PAGE)
        assert response.status_code == 401 and readable_by(response, PAGE)
        assert "www-authenticate" in exposed(response)


def test_the_authenticated_post_is_preflighted_without_a_token(origin: str) -> None:
    asked = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": POST_HEADERS}
    preflight = httpx.options(f"{origin}/secure/mcp", headers={"Origin": PAGE, **asked})
    assert preflight.status_code == 204 and readable_by(preflight, PAGE)
    allowed = {name.strip() for name in preflight.headers["access-control-allow-headers"].split(",")}
    assert allowed == set(POST_HEADERS.split(", "))
    assert "POST" in preflight.headers["access-control-allow-methods"].split(", ")
    hostile = httpx.options(f"{origin}/secure/mcp", headers={"Origin": "https://evil.example", **asked})
    assert hostile.status_code == 403 and "access-control-allow-origin" not in hostile.headers


def test_a_signed_in_page_reads_its_results_and_the_step_up_challenge(origin: str) -> None:
    token = sign_in(origin, "alice")["access_token"]
    opened = call(origin, token, "open_notebook", {}, page=PAGE)
    assert readable_by(opened, PAGE)
    notebook = result(opened)["content"][0]["text"]
    narrow = call(origin, token, "delete_notebook", {"notebook": notebook}, page=PAGE)
    assert narrow.status_code == 403 and readable_by(narrow, PAGE) and "www-authenticate" in exposed(narrow)


def test_the_metadata_documents_are_public_to_any_page(origin: str) -> None:
    anywhere = "https://app.example"
    asked = {"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "mcp-protocol-version"}
    for path in ("/.well-known/oauth-protected-resource/secure/mcp", "/.well-known/oauth-authorization-server/auth"):
        document = httpx.get(origin + path, headers={"Origin": anywhere})
        assert document.status_code == 200 and readable_by(document, anywhere), path
        preflight = httpx.options(origin + path, headers={"Origin": anywhere, **asked})
        assert preflight.status_code == 204 and readable_by(preflight, anywhere), path
        assert preflight.headers["access-control-allow-headers"] == "mcp-protocol-version"
        assert preflight.headers["access-control-allow-methods"] == "GET"


def list_tools(origin: str, token: str) -> dict[str, Any]:
    """`tools/list` on the protected server for the token's user."""
    headers = mcp_headers("tools/list", Authorization=f"Bearer {token}")
    response = httpx.post(f"{origin}/secure/mcp", json=mcp_body("tools/list"), headers=headers)
    assert response.status_code == 200, response.text
    response.messages = checked(response, "tools/list")  # type: ignore[attr-defined]
    return result(response)


def test_each_user_sees_their_own_tool_list_privately(origin: str) -> None:
    alice, bob = sign_in(origin, "alice")["access_token"], sign_in(origin, "bob")["access_token"]
    for_alice, for_bob = list_tools(origin, alice), list_tools(origin, bob)
    names = [tool["name"] for tool in for_alice["tools"]]
    assert "audit_log" in names
    assert [tool["name"] for tool in for_bob["tools"]] == [name for name in names if name != "audit_log"]
    # The list depends on who asks, so no shared cache may hand Alice's to Bob.
    assert for_alice["cacheScope"] == for_bob["cacheScope"] == "private"


def test_a_tool_hidden_from_the_caller_is_refused_like_an_unknown_one(origin: str) -> None:
    alice, bob = sign_in(origin, "alice")["access_token"], sign_in(origin, "bob")["access_token"]
    hidden, unknown = call(origin, bob, "audit_log", {}), call(origin, bob, "audit_logs", {})
    assert hidden.status_code == unknown.status_code == 200
    refused, missing = hidden.messages[-1]["error"], unknown.messages[-1]["error"]  # type: ignore[attr-defined]
    assert refused == {**missing, "message": missing["message"].replace("audit_logs", "audit_log")}
    assert refused == {"code": -32602, "message": "Unknown tool: audit_log"}
    result(call(origin, bob, "open_notebook", {}))
    log = result(call(origin, alice, "audit_log", {}))["content"][0]["text"]
    assert "opened by" in log and log.endswith("#bob")


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


def token_for(origin: str, server: Any, case: str) -> str:
    """An access token that is wrong for this server in one way only."""
    now = int(time.time())
    resource = f"{origin}/secure/mcp"
    if case == "another-audience":
        return server.access_token(Grant("mcpref-docs", "alice", ["mcp:tools"], "https://api.example/mcp", 0), now)
    if case == "expired":
        return server.access_token(Grant("mcpref-docs", "alice", ["mcp:tools"], resource, 0), 0)
    claims = {
        "iss": f"{origin}/auth",
        "sub": "alice",
        "aud": resource,
        "scope": "mcp:tools",
        "iat": now,
        "exp": now + 60,
    }
    if case == "no-audience":
        del claims["aud"]
        return jwt.encode({"alg": "ES256", "typ": "at+jwt", "kid": server.key.kid}, claims, server.key)
    if case == "unknown-issuer":
        claims["iss"] = "https://as.elsewhere.example"
    return jwt.encode({"alg": "ES256", "typ": "at+jwt"}, claims, ECKey.generate_key("P-256"))  # forged-signature


@pytest.mark.parametrize("case", ["another-audience", "no-audience", "unknown-issuer", "forged-signature", "expired"])
def test_a_token_not_meant_for_this_server_gets_nothing(origin: str, demo_server: Any, case: str) -> None:
    response = call(origin, token_for(origin, demo_server, case), "whoami", {})
    assert response.status_code == 401 and 'error="invalid_token"' in challenge(response)
    assert "alice" not in response.text  # nothing of the tool's answer reaches an unauthorized caller


@pytest.mark.parametrize(
    ("header", "claims"),
    [({}, {"iss": ["x"]}), ({}, {"iss": {"a": 1}}), ({"typ": 1}, {}), ({"typ": None}, {}), ({"crit": 1}, {})],
    ids=["iss-list", "iss-object", "typ-integer", "typ-null", "crit-integer"],
)
def test_a_token_of_the_wrong_shape_is_401_before_any_signature_check(
    origin: str, header: dict[str, Any], claims: dict[str, Any]
) -> None:
    """Issue 25: these raised in the validator, an unauthenticated 500."""
    sound = {"iss": f"{origin}/auth", "sub": "alice", "aud": f"{origin}/secure/mcp", "exp": int(time.time()) + 60}
    parts = ({"alg": "ES256", "typ": "at+jwt", **header}, {**sound, **claims})
    token = ".".join(base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode() for part in parts)
    response = call(origin, f"{token}.c2ln", "whoami", {})
    assert response.status_code == 401 and 'error="invalid_token"' in challenge(response)


# -- what the client's flow sends, recorded once ----------------------------------------------------


@dataclass
class Flow:
    """One sign-in by mcpref.client, as the servers saw it."""

    authorization_url: str = ""
    flow: list[httpx.Request] = field(default_factory=list)  # metadata, token: the flow's own requests
    mcp: list[httpx.Request] = field(default_factory=list)  # every request to the MCP endpoint

    def authorization_query(self) -> dict[str, str]:
        return {key: values[0] for key, values in parse_qs(urlsplit(self.authorization_url).query).items()}

    def token_form(self) -> dict[str, str]:
        (request,) = [r for r in self.flow if r.url.path.endswith("/token")]
        return {key: values[0] for key, values in parse_qs(request.content.decode()).items()}


@pytest.fixture(scope="module")
def signed_in(demo: tuple[AuthDemo, str]) -> Flow:
    origin = demo[1]
    recorded = Flow()

    async def sign_in_by_client() -> None:
        async def open_browser(url: str) -> None:
            recorded.authorization_url = url
            await browser(url)

        async def on_flow(request: httpx.Request) -> None:
            recorded.flow.append(request)

        async def on_mcp(request: httpx.Request) -> None:
            recorded.mcp.append(request)

        listener = LoopbackRedirect(open_browser=open_browser)
        auth = OAuth(
            redirect=listener,
            clients={f"{origin}/auth": ClientRegistration(DOCS_CLIENT.client_id)},
            dpop=False,
            http=lambda: httpx.AsyncClient(event_hooks={"request": [on_flow]}),
        )
        http = httpx.AsyncClient(event_hooks={"request": [on_mcp]})
        try:
            async with http, Client(f"{origin}/secure/mcp", auth=auth, http=http) as client:
                await client.call_tool("whoami", {})
                await client.list_tools()
        finally:
            listener.close()

    asyncio.run(sign_in_by_client())
    return recorded


def test_the_client_finds_the_metadata_the_challenge_names(origin: str, signed_in: Flow) -> None:
    assert str(signed_in.flow[0].url) == f"{origin}/.well-known/oauth-protected-resource/secure/mcp"


def test_the_client_signs_in_with_its_client_id(signed_in: Flow) -> None:
    assert signed_in.authorization_query()["client_id"] == DOCS_CLIENT.client_id


def test_the_first_sign_in_asks_for_the_challenged_scope(signed_in: Flow) -> None:
    # The 401's scope and nothing more, besides offline_access (asked for a refresh token, which the
    # authorization server lists: basic/authorization/index.mdx §Refresh Tokens).
    assert set(signed_in.authorization_query()["scope"].split()) == {"mcp:tools", "offline_access"}


def test_the_resource_goes_in_the_authorization_and_the_token_request(origin: str, signed_in: Flow) -> None:
    resource = f"{origin}/secure/mcp"
    assert signed_in.authorization_query()["resource"] == resource
    assert signed_in.token_form()["resource"] == resource


def test_the_resource_is_the_endpoint_itself_without_a_trailing_slash(origin: str, signed_in: Flow) -> None:
    resource = signed_in.authorization_query()["resource"]
    assert resource == f"{origin}/secure/mcp" and not resource.endswith("/")


def test_the_token_is_for_this_server_alone(origin: str, signed_in: Flow) -> None:
    (request,) = [r for r in signed_in.mcp if r.headers.get("authorization")][:1]
    token = request.headers["authorization"].removeprefix("Bearer ")
    assert jwt.decode(token, KeySet.import_key_set(httpx.get(f"{origin}/auth/jwks").json())).claims["aud"] == (
        f"{origin}/secure/mcp"
    )


def test_every_request_after_sign_in_carries_the_bearer_token(signed_in: Flow) -> None:
    first_authorized = next(i for i, r in enumerate(signed_in.mcp) if "authorization" in r.headers)
    after = signed_in.mcp[first_authorized:]
    assert len(after) >= 2
    for request in after:
        assert request.headers["authorization"].startswith("Bearer ")
        assert not request.url.query  # never in the query string


def test_the_authorization_request_uses_pkce_s256(signed_in: Flow) -> None:
    query = signed_in.authorization_query()
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) >= 43
    assert "code_verifier" in signed_in.token_form()


def test_the_authorization_request_carries_a_state(signed_in: Flow) -> None:
    assert len(signed_in.authorization_query()["state"]) >= 16


def test_a_redirect_with_another_state_is_refused_before_any_token_request(origin: str) -> None:
    flow: list[httpx.Request] = []

    async def forged(url: str) -> str:
        wrong = parse_qs(urlsplit(url).query)["state"][0][::-1]  # any state but the one sent
        return f"{REDIRECT}?code=stolen&state={wrong}&iss={origin}/auth"

    async def on_flow(request: httpx.Request) -> None:
        flow.append(request)

    async def attempt() -> None:
        auth = OAuth(
            redirect=forged,
            redirect_uri=REDIRECT,
            clients={f"{origin}/auth": ClientRegistration(DOCS_CLIENT.client_id)},
            http=lambda: httpx.AsyncClient(event_hooks={"request": [on_flow]}),
        )
        async with Client(f"{origin}/secure/mcp", auth=auth) as client:
            await client.call_tool("whoami", {})

    with pytest.raises(AuthorizationError, match="state"):
        asyncio.run(attempt())
    assert flow and not any(request.url.path.endswith("/token") for request in flow)


def protected_resource_metadata(origin: str) -> dict[str, Any]:
    return httpx.get(f"{origin}/.well-known/oauth-protected-resource/secure/mcp").json()


def test_the_metadata_names_where_to_get_tokens(origin: str) -> None:
    document = protected_resource_metadata(origin)
    assert document["resource"] == f"{origin}/secure/mcp"
    assert document["authorization_servers"] and all(isinstance(s, str) for s in document["authorization_servers"])


def test_the_challenge_points_at_the_well_known_metadata(origin: str) -> None:
    hint = re.search(r'resource_metadata="([^"]+)"', challenge(call(origin, None, "whoami", {})))[1]  # type: ignore[index]
    assert hint == f"{origin}/.well-known/oauth-protected-resource/secure/mcp"  # both mechanisms, one document
    assert httpx.get(hint).json() == protected_resource_metadata(origin)


def test_a_challenge_always_names_a_scope(origin: str) -> None:
    for tool in ("whoami", "delete_notebook"):
        assert re.search(r'scope="[^"]+"', challenge(call(origin, None, tool, {}))), tool


def test_the_server_never_offers_offline_access(origin: str) -> None:
    assert "offline_access" not in protected_resource_metadata(origin).get("scopes_supported", [])
    assert "offline_access" not in challenge(call(origin, None, "whoami", {}))


def test_a_pre_registered_client_registers_nothing(signed_in: Flow) -> None:
    assert not [r for r in signed_in.flow if r.method == "POST" and not r.url.path.endswith("/token")]
    assert signed_in.token_form()["client_id"] == DOCS_CLIENT.client_id


@pytest.mark.anyio
async def test_a_rejected_token_is_refreshed_without_the_user(origin: str, loopback: Listeners) -> None:
    """A 401 on a request that carried a token: the refresh token gets a new one, no new consent."""
    opened: list[str] = []

    async def counting_browser(url: str) -> None:
        opened.append(url)
        await browser(url)

    listener = loopback(open_browser=counting_browser)
    registration = ClientRegistration(DOCS_CLIENT.client_id)
    auth = OAuth(redirect=listener, clients={f"{origin}/auth": registration})
    async with Client(f"{origin}/secure/mcp", auth=auth) as client:
        await client.call_tool("whoami", {})
        ((key, tokens),) = auth.store.tokens.items()
        tokens.access_token = "revoked"  # what the server now refuses (revoked, or its key rotated)
        who = await client.call_tool("whoami", {})
    assert who["content"][0]["text"] == f"{origin}/auth#alice"
    assert len(opened) == 1, "the refresh token should have spared the user a second consent"
    assert auth.store.tokens[key].access_token != "revoked"


@pytest.mark.anyio
async def test_one_oauth_keeps_a_token_per_server_and_sends_each_only_to_its_own(
    origin: str, loopback: Listeners
) -> None:
    """Two protected servers (the demo on 127.0.0.1 and on localhost: two issuers, two resources)
    through one OAuth: two tokens, each presented only where it belongs."""
    other = origin.replace("127.0.0.1", "localhost")
    seen: dict[str, set[str]] = {origin: set(), other: set()}

    async def record(request: httpx.Request) -> None:
        if request.url.path == "/secure/mcp" and "authorization" in request.headers:
            seen[f"{request.url.scheme}://{request.url.netloc.decode()}"].add(request.headers["authorization"])

    listener = loopback(open_browser=browser)
    registration = ClientRegistration(DOCS_CLIENT.client_id)
    auth = OAuth(
        redirect=listener,
        clients={f"{origin}/auth": registration, f"{other}/auth": registration},
    )
    for base in (origin, other):
        http = httpx.AsyncClient(event_hooks={"request": [record]})
        async with Client(f"{base}/secure/mcp", auth=auth, http=http) as client:
            who = await client.call_tool("whoami", {})
            assert who["content"][0]["text"] == f"{base}/auth#alice"
        await http.aclose()
    assert set(auth.store.tokens) == {(f"{b}/auth", f"{b}/secure/mcp") for b in (origin, other)}
    assert seen[origin] and seen[other] and not seen[origin] & seen[other]
