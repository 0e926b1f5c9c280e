"""mcpref.auth in the test process: the MCP endpoint as an OAuth 2.1 resource server.

`ProtectedResource` is driven through httpx's ASGI transport (and, where the ASGI messages
themselves are the rule, message by message) in front of a real `StreamableHTTP` with one tool;
`JWTValidator` checks tokens minted here with real keys, and fetches a JWKS from a real uvicorn on
loopback. Each test builds its own objects, so a mutation run (scripts/mutate) sees every line run
inside the test that states its rule. The whole flow under a real server, with mcpref.client and the
demo's authorization server, is in tests/test_secure_server.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import time
import warnings
from collections.abc import Callable, Collection, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import httpx
import pytest
from joserfc import jws, jwt
from joserfc.errors import SecurityWarning
from joserfc.jwk import ECKey, KeySet, OctKey, OKPKey, RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpref import RequestContext, Server, StreamableHTTP, catchall
from mcpref import auth as auth_module
from mcpref.auth import JWTValidator, ProtectedResource, public_cors
from tests.conftest import SteppedClock, mcp_body, mcp_headers, running

pytestmark = pytest.mark.anyio

ISSUER = "https://as.example"
RESOURCE = "https://mcp.example.com/mcp"
METADATA_URL = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
#: A page on a loopback origin: the endpoint's default origin policy allows it.
PAGE = "http://localhost:5173"


def new_key() -> ECKey:
    key = ECKey.generate_key("P-256")
    key.ensure_kid()
    return key


KEY = new_key()


def mint(key: Any = KEY, alg: str = "ES256", typ: str | None = "at+jwt", **claims: Any) -> str:
    """An access token for RESOURCE from ISSUER, for alice with `mcp:tools`, valid a minute;
    `claims` replace any of those (`None` leaves one out)."""
    now = int(time.time())
    payload = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": RESOURCE,
        "scope": "mcp:tools",
        "client_id": "docs-client",
        "iat": now,
        "exp": now + 60,
        **claims,
    }
    header = {"alg": alg, "typ": typ, "kid": key.kid}
    return jwt.encode(
        {name: value for name, value in header.items() if value is not None},
        {name: value for name, value in payload.items() if value is not None},
        key,
        algorithms=[alg],
    )


def protected(**options: Any) -> ProtectedResource:
    """A protected endpoint at RESOURCE whose tool `whoami` says who asks; `options` replace any
    of ProtectedResource's (by default: ISSUER's KEY, `mcp:tools` for everything)."""
    server = Server("auth-test", "1.0.0", serve_legacy=False)

    @server.tool(input_schema={"type": "object", "properties": {}})
    def whoami(ctx: RequestContext) -> str:
        return str(ctx.principal)

    settings: dict[str, Any] = {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "validator": JWTValidator({ISSUER: KeySet([KEY])}, audience=RESOURCE),
        "scopes_supported": ["mcp:tools"],
        **options,
    }
    return ProtectedResource(StreamableHTTP(server, path=None), **settings)


async def request(
    app: Any, method: str = "POST", path: str = "/mcp", headers: dict[str, str] | None = None, body: Any = None
) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://mcp.example.com") as http:
        return await http.request(method, path, headers=headers, json=body)


async def call(
    app: Any, token: str | None, name: str = "whoami", authorization: str | None = None, **extra: str
) -> httpx.Response:
    """`tools/call` of `name` with `Authorization: Bearer <token>` (or exactly `authorization`)."""
    headers = mcp_headers("tools/call", name, **extra)
    if authorization is not None or token is not None:
        headers["Authorization"] = authorization if authorization is not None else f"Bearer {token}"
    body = mcp_body("tools/call", {"name": name, "arguments": {}})
    return await request(app, headers=headers, body=body)


def challenge(response: httpx.Response) -> str:
    return response.headers["www-authenticate"]


def said(response: httpx.Response) -> str:
    """The text of a successful tool call's answer."""
    assert response.status_code == 200, (response.status_code, response.headers, response.text)
    message = response.json()
    return str(message["result"]["content"][0]["text"])


class Sent(list[MutableMapping[str, Any]]):
    """An ASGI `send` that keeps what it is given."""

    async def __call__(self, message: MutableMapping[str, Any]) -> None:
        self.append(message)


async def asgi(app: Any, method: str, path: str, headers: dict[str, str]) -> Sent:
    """The ASGI messages `app` sends for one bodiless request."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [(name.lower().encode(), value.encode()) for name, value in headers.items()],
        "client": ("127.0.0.1", 50000),
        "server": ("mcp.example.com", 443),
    }

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    sent = Sent()
    await app(scope, receive, sent)
    return sent


# -- public_cors: the metadata documents are public ---------------------------------------------


def cors_of(request_headers: dict[str, str]) -> dict[str, str]:
    """`public_cors`'s answer with its names in lower case (header names have no case)."""
    return {name.lower(): value for name, value in public_cors(request_headers).items()}


def test_a_public_document_may_be_read_by_any_page() -> None:
    assert cors_of({"origin": "https://app.example"}) == {"access-control-allow-origin": "*"}


def test_a_public_documents_preflight_allows_get_with_the_headers_asked_for_for_ten_minutes() -> None:
    asked = {"access-control-request-method": "GET", "access-control-request-headers": "mcp-protocol-version"}
    assert cors_of(asked) == {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET",
        "access-control-max-age": "600",
        "access-control-allow-headers": "mcp-protocol-version",
    }
    # No headers asked for: none allowed (an empty Access-Control-Allow-Headers is not sent).
    assert cors_of({"access-control-request-method": "GET"}) == {
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "GET",
        "access-control-max-age": "600",
    }


# -- the protected resource metadata (RFC 9728) --------------------------------------------------


async def test_the_metadata_says_the_resource_its_authorization_servers_and_how_to_send_a_token() -> None:
    app = protected(scopes_supported=["mcp:tools", "mcp:admin"], resource_name="Notes")
    response = await request(app, "GET", "/.well-known/oauth-protected-resource/mcp")
    assert response.status_code == 200 and response.headers["content-type"].lower() == "application/json"
    assert response.json() == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
        "scopes_supported": ["mcp:tools", "mcp:admin"],
        "resource_name": "Notes",
    }
    assert int(response.headers["content-length"]) == len(response.content)


async def test_the_metadata_leaves_out_scopes_and_a_name_it_was_not_given() -> None:
    app = protected(scopes_supported=())
    response = await request(app, "GET", "/.well-known/oauth-protected-resource/mcp")
    assert response.json() == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "bearer_methods_supported": ["header"],
    }


@pytest.mark.parametrize(
    ("resource", "endpoint", "metadata"),
    [
        ("https://mcp.example.com/mcp", "/mcp", "/.well-known/oauth-protected-resource/mcp"),
        (
            "https://mcp.example.com/tenants/LaTeX",
            "/tenants/LaTeX",
            "/.well-known/oauth-protected-resource/tenants/LaTeX",
        ),
        # At the origin's root, with or without its slash: the slash after the host goes (RFC 9728 §3.1).
        ("https://mcp.example.com", "/", "/.well-known/oauth-protected-resource"),
        ("https://mcp.example.com/", "/", "/.well-known/oauth-protected-resource"),
    ],
)
async def test_the_metadata_is_at_the_well_known_uri_built_from_the_resource(
    resource: str, endpoint: str, metadata: str
) -> None:
    app = protected(resource=resource)
    document = await request(app, "GET", metadata)
    assert document.status_code == 200 and document.json()["resource"] == resource
    refused = await call_at(app, endpoint)
    assert refused.status_code == 401
    assert challenge(refused).startswith(f'Bearer resource_metadata="https://mcp.example.com{metadata}"')


async def call_at(app: Any, path: str) -> httpx.Response:
    headers = mcp_headers("tools/call", "whoami")
    return await request(app, path=path, headers=headers, body=mcp_body("tools/call", {"name": "whoami"}))


async def test_the_metadata_is_public_to_any_page_and_its_preflight_has_no_body() -> None:
    app = protected()
    path = "/.well-known/oauth-protected-resource/mcp"
    document = await request(app, "GET", path, headers={"Origin": "https://app.example"})
    assert document.headers["access-control-allow-origin"] == "*"
    asked = {"Origin": "https://app.example", "Access-Control-Request-Method": "GET"}
    preflight = await request(app, "OPTIONS", path, headers=asked)
    assert preflight.status_code == 204 and preflight.content == b""
    assert preflight.headers["content-length"] == "0"
    assert preflight.headers["access-control-allow-methods"] == "GET"


async def test_another_path_is_not_found_in_plain_text() -> None:
    response = await request(protected(), "GET", "/elsewhere")
    assert response.status_code == 404 and response.text == "Not Found"
    assert response.headers["content-type"].lower() == "text/plain; charset=utf-8"
    assert response.headers["content-length"] == "9"


async def test_every_header_name_sent_is_lowercase_as_asgi_requires() -> None:
    """ASGI: header names must be lowercased; middleware around the resource (Starlette's among
    them) looks them up that way."""
    app = protected()
    metadata = "/.well-known/oauth-protected-resource/mcp"
    preflight = {"origin": PAGE, "access-control-request-method": "GET", "access-control-request-headers": "x-a"}
    token = mint(scope="")
    answers = [
        await asgi(app, "GET", metadata, {"origin": PAGE}),
        await asgi(app, "OPTIONS", metadata, preflight),
        await asgi(app, "GET", "/elsewhere", {}),
        await asgi(app, "POST", "/mcp", {"origin": PAGE}),
        await asgi(app, "POST", "/mcp", {"origin": PAGE, "authorization": f"Bearer {token}"}),
    ]
    for sent in answers:
        names = [name for name, _ in sent[0]["headers"]]
        assert names == [name.lower() for name in names] and b"content-length" in names, names


# -- the challenges (RFC 6750 §3, RFC 9728 §5.1) -------------------------------------------------


async def test_a_request_without_a_token_is_challenged_without_an_error_code() -> None:
    """RFC 6750 §3.1: a request with no authentication, or another scheme than Bearer, gets no
    error code; the challenge names the metadata and the scope, and has no body."""
    app = protected()
    expected = f'Bearer resource_metadata="{METADATA_URL}", scope="mcp:tools"'
    for authorization in (None, "Basic YWxpY2U6c2VjcmV0", f"Basic {mint()}", "Bearer", "Bearer   "):
        response = await call(app, None, authorization=authorization)
        assert response.status_code == 401, authorization
        assert challenge(response) == expected, authorization
        assert response.content == b"" and response.headers["content-length"] == "0"


async def test_a_bearer_token_is_read_whatever_the_schemes_case_and_the_spaces_before_it() -> None:
    """RFC 6750 §2.1 / RFC 9110 §11.1: the scheme is case-insensitive, one or more spaces follow it."""
    app = protected()
    for authorization in (f"Bearer {mint()}", f"bearer {mint()}", f"BEARER  {mint()}"):
        assert said(await call(app, None, authorization=authorization)) == f"{ISSUER}#alice"


async def test_an_invalid_token_is_401_invalid_token_naming_the_scope_with_the_reason_only_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = protected()
    with caplog.at_level(logging.INFO, logger="mcpref.auth"):
        response = await call(app, "not-a-token")
    assert response.status_code == 401 and response.content == b""
    assert challenge(response) == (
        f'Bearer resource_metadata="{METADATA_URL}", scope="mcp:tools", error="invalid_token"'
    )
    assert "access token refused: not a JWT" in caplog.messages
    assert "not a JWT" not in challenge(response)


async def test_refused_tokens_are_logged_five_a_second_with_a_count_of_the_rest(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flood of bad tokens cannot flood the log: the catch-all's budget, the lines over it counted."""
    clock = SteppedClock(5000.0)
    monkeypatch.setattr(catchall, "time", clock)  # the budget's clock: all of it in one second
    app = protected()
    with caplog.at_level(logging.INFO, logger="mcpref.auth"):
        for _ in range(catchall.LINES_PER_SECOND + 3):
            assert (await call(app, "not-a-token")).status_code == 401
        assert caplog.messages == ["access token refused: not a JWT"] * catchall.LINES_PER_SECOND
        clock.now += 1
        assert (await call(app, "not-a-token")).status_code == 401
    assert caplog.messages[-1] == "access token refused: not a JWT (3 more not logged)"


async def test_a_challenge_without_scopes_names_none() -> None:
    response = await call(protected(scopes_supported=()), None)
    assert challenge(response) == f'Bearer resource_metadata="{METADATA_URL}"'


async def test_missing_scopes_are_403_naming_every_scope_needed_and_held_but_offline_access() -> None:
    """index.mdx, Scope Challenge Handling: all the scopes in one challenge; Refresh Tokens: never
    offline_access, which is no resource's requirement."""

    def needs(method: str | None, name: str | None) -> Collection[str]:
        return ("mcp:tools", "mcp:admin")

    app = protected(required_scopes=needs)
    token = mint(scope="mcp:tools offline_access profile")
    response = await call(app, token)
    assert response.status_code == 403 and response.content == b""
    assert challenge(response) == (
        f'Bearer resource_metadata="{METADATA_URL}", scope="mcp:admin mcp:tools profile", error="insufficient_scope"'
    )
    # No scope claim at all: exactly the scopes needed.
    response = await call(app, mint(scope=None))
    assert 'scope="mcp:admin mcp:tools"' in challenge(response)
    assert said(await call(app, mint(scope="mcp:admin mcp:tools"))) == f"{ISSUER}#alice"


async def test_a_scope_claim_that_is_not_a_string_grants_nothing() -> None:
    """RFC 9068 §2.2.3: `scope` is one space-separated string; a list is no grant (and no crash)."""
    response = await call(protected(), mint(scope=["mcp:tools"]))
    assert response.status_code == 403 and 'scope="mcp:tools"' in challenge(response)


async def test_by_default_every_operation_needs_the_supported_scopes() -> None:
    app = protected(scopes_supported=["mcp:tools", "mcp:read"])
    assert (await call(app, mint(scope="mcp:tools"))).status_code == 403
    assert said(await call(app, mint(scope="mcp:read mcp:tools"))) == f"{ISSUER}#alice"


async def test_the_scope_rule_gets_the_method_and_the_name_as_the_endpoint_reads_them() -> None:
    """`Mcp-Name` trimmed of spaces and tabs only, its base64 form decoded: what the endpoint
    then compares with the body, so the rule decides on what will run."""
    seen: list[tuple[str | None, str | None]] = []

    def needs(method: str | None, name: str | None) -> Collection[str]:
        seen.append((method, name))
        return ("mcp:tools",)

    app = protected(required_scopes=needs)
    for sent in (" \twhoami\t ", "=?base64?d2hvYW1p?=", "export_XLSX", "whoami\x0c"):
        await call(app, mint(), **{"Mcp-Name": sent})
    assert seen == [
        ("tools/call", "whoami"),
        ("tools/call", "whoami"),
        ("tools/call", "export_XLSX"),
        ("tools/call", "whoami\x0c"),
    ]


async def test_a_malformed_request_gets_the_endpoints_400_not_a_step_up() -> None:
    """Issue 25: without `Mcp-Method`, or with an `Mcp-Name` that is no valid base64 form, a request
    was told (403) to ask its user for every scope; the endpoint refuses it whatever the token, so
    its 400 -32020 is the answer. A token is still needed to learn that."""
    app = protected(scopes_supported=["mcp:tools"], all_scopes=["mcp:tools", "mcp:admin"])
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    body = mcp_body("tools/call", {"name": "whoami", "arguments": {}})
    for sent in (headers, {**mcp_headers("tools/call", "whoami"), "Mcp-Name": "=?base64?!!!?="}):
        response = await request(app, headers={**sent, "Authorization": f"Bearer {mint()}"}, body=body)
        assert response.status_code == 400 and "www-authenticate" not in response.headers, response.text
        assert response.json()["error"]["code"] == -32020
        assert (await request(app, headers=sent, body=body)).status_code == 401


async def test_a_malformed_name_leaves_the_method_to_decide() -> None:
    """A method whose body `Mcp-Name` does not mirror ignores it: the rule is asked with no name."""
    seen: list[tuple[str | None, str | None]] = []

    def needs(method: str | None, name: str | None) -> Collection[str]:
        seen.append((method, name))
        return ("mcp:admin",) if method == "tools/list" else ("mcp:tools",)

    app = protected(required_scopes=needs)
    headers = {**mcp_headers("tools/list"), "Mcp-Name": "=?base64?!!!?=", "Authorization": f"Bearer {mint()}"}
    response = await request(app, headers=headers, body=mcp_body("tools/list"))
    assert response.status_code == 403 and seen == [("tools/list", None)]


async def test_where_legacy_clients_are_served_a_request_without_mcp_method_needs_every_scope() -> None:
    """A 2025-11-25 request carries no `Mcp-Method`, so it does not say what it is: fail closed."""
    server = Server("auth-test", "1.0.0")  # serves legacy clients too

    @server.tool(input_schema={"type": "object", "properties": {}})
    def whoami(ctx: RequestContext) -> str:
        return str(ctx.principal)

    validator = JWTValidator({ISSUER: KeySet([KEY])}, audience=RESOURCE)
    settings = {"resource": RESOURCE, "authorization_servers": [ISSUER], "validator": validator}
    app = ProtectedResource(StreamableHTTP(server, path=None), scopes_supported=["mcp:tools"], **settings)
    legacy = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "whoami", "arguments": {}}}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
    answer = await request(app, headers={**headers, "Authorization": f"Bearer {mint(scope='')}"}, body=legacy)
    assert answer.status_code == 403 and 'scope="mcp:tools"' in challenge(answer)
    # `all_scopes`, when given, is what such a request must hold; by default the supported ones.
    wider = ProtectedResource(
        StreamableHTTP(server, path=None), scopes_supported=["mcp:tools"], all_scopes=["mcp:tools", "mcp:admin"],
        **settings,
    )
    answer = await request(wider, headers={**headers, "Authorization": f"Bearer {mint()}"}, body=legacy)
    assert answer.status_code == 403 and 'scope="mcp:admin mcp:tools"' in challenge(answer)
    answer = await request(app, headers={**headers, "Authorization": f"Bearer {mint()}"}, body=legacy)
    assert answer.status_code == 200 and f"{ISSUER}#alice" in answer.text
    # Headers that name a cheaper operation than the legacy body runs do not buy it: -32020.
    lying = {**headers, "Mcp-Method": "tools/list", "Authorization": f"Bearer {mint(scope='')}"}
    listing_is_free = ProtectedResource(
        StreamableHTTP(server, path=None),
        required_scopes=lambda method, name: ("mcp:tools",) if method == "tools/call" else (),
        **settings,
    )
    answer = await request(listing_is_free, headers=lying, body=legacy)
    assert answer.status_code == 400 and answer.json()["error"]["code"] == -32020


async def test_a_broader_scope_covers_the_narrower_ones_it_implies() -> None:
    """index.mdx, Step-Up Authorization Flow: servers MUST account for scope hierarchies. With
    `scope_implies`, `notes:admin` covers `notes:write`, which covers `notes:read`; by default
    scopes are flat."""

    def needs(method: str | None, name: str | None) -> Collection[str]:
        return ("notes:read",)

    hierarchy = {"notes:admin": ["notes:write"], "notes:write": ["notes:read"]}
    app = protected(required_scopes=needs, scope_implies=hierarchy)
    for granted in ("notes:read", "notes:write", "notes:admin", "other notes:admin"):
        assert said(await call(app, mint(scope=granted))) == f"{ISSUER}#alice", granted
    refused = await call(app, mint(scope="other"))
    assert refused.status_code == 403 and 'scope="notes:read other"' in challenge(refused)
    flat = protected(required_scopes=needs)
    assert (await call(flat, mint(scope="notes:admin"))).status_code == 403
    assert app.held(frozenset({"notes:write"})) == {"notes:write", "notes:read"}


def test_a_cycle_of_implied_scopes_ends() -> None:
    app = protected(scope_implies={"a": ["b"], "b": ["a", "c"]})
    assert app.held(frozenset({"a"})) == app.held(frozenset({"b"})) == {"a", "b", "c"}


# -- browsers, origins, and what passes through -------------------------------------------------


async def test_an_allowed_page_reads_the_challenge_and_its_header() -> None:
    response = await call(protected(), None, Origin=PAGE)
    assert response.status_code == 401
    assert response.headers["access-control-allow-origin"] == PAGE
    assert [value.strip().lower() for value in response.headers["vary"].split(",")] == ["origin"]
    assert response.headers["access-control-expose-headers"].lower() == "www-authenticate"
    # Without an Origin (no browser), no CORS headers at all.
    plain = await call(protected(), None)
    assert not [name for name in plain.headers if name.startswith("access-control-")]


async def test_a_disallowed_origin_and_a_preflight_are_the_endpoints_to_answer() -> None:
    app = protected()
    hostile = await call(app, mint(), Origin="https://evil.example")
    assert hostile.status_code == 403 and "www-authenticate" not in hostile.headers
    asked = {"Origin": PAGE, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}
    preflight = await request(app, "OPTIONS", headers=asked)
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == PAGE
    assert "authorization" in preflight.headers["access-control-allow-headers"].lower()


async def test_a_foreign_host_on_a_loopback_bind_is_the_endpoints_421_before_any_challenge() -> None:
    """DNS rebinding: a page that renamed a loopback server's address gets the endpoint's 421, and
    no challenge that would tell it a token is wanted, nor where to get one."""
    app = protected()
    headers = mcp_headers("tools/call", "whoami")
    body = mcp_body("tools/call", {"name": "whoami", "arguments": {}})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000") as http:
        foreign = await http.post("/mcp", headers={**headers, "Host": "rebound.example"}, json=body)
        loopback = await http.post("/mcp", headers={**headers, "Host": "localhost:8000"}, json=body)
    assert foreign.status_code == 421 and "www-authenticate" not in foreign.headers
    assert loopback.status_code == 401 and "resource_metadata=" in challenge(loopback)


async def test_the_principal_is_the_tokens_issuer_and_subject() -> None:
    assert said(await call(protected(), mint(sub="bob"))) == f"{ISSUER}#bob"


def strings_in(value: Any, seen: set[int] | None = None) -> Iterator[str]:
    """Every string reachable from `value` through dataclass fields, attributes, mappings and
    sequences (what a handler can read from its context)."""
    seen = set() if seen is None else seen
    if id(value) in seen or callable(value):
        return
    seen.add(id(value))
    if isinstance(value, (str, bytes)):
        yield value if isinstance(value, str) else value.decode("latin-1")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from strings_in(key, seen)
            yield from strings_in(item, seen)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            yield from strings_in(item, seen)
    elif hasattr(value, "__dict__") or hasattr(value, "__slots__"):
        names = list(getattr(value, "__dict__", {})) + list(getattr(value, "__slots__", ()))
        for name in names:
            yield from strings_in(getattr(value, name, None), seen)


async def test_no_handler_ever_sees_the_token() -> None:
    """security-considerations.mdx, Access Token Privilege Restriction: a server calling upstream
    APIs never passes the client's token on. It cannot: nothing a handler can reach holds the token
    or any part of it, only the principal it stands for."""
    contexts: list[RequestContext] = []
    server = Server("auth-test", "1.0.0", serve_legacy=False)

    @server.tool(input_schema={"type": "object", "properties": {}})
    def upstream(ctx: RequestContext) -> str:
        contexts.append(ctx)
        return "called"

    validator = JWTValidator({ISSUER: KeySet([KEY])}, audience=RESOURCE)
    app = ProtectedResource(
        StreamableHTTP(server, path=None), resource=RESOURCE, authorization_servers=[ISSUER], validator=validator
    )
    token = mint()
    assert said(await call(app, token, "upstream")) == "called"
    reachable = list(strings_in(contexts[0]))
    assert f"{ISSUER}#alice" in reachable, "the walk reaches the principal"
    for part in (token, *token.split(".")):
        assert not [text for text in reachable if part in text], "a handler can read the token"


async def test_lifespan_is_the_endpoints() -> None:
    """Served as the app itself (`uvicorn module:app`), the resource passes lifespan on."""
    events = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])

    async def receive() -> Any:
        return next(events)

    sent = Sent()
    await protected()({"type": "lifespan", "asgi": {"version": "3.0"}}, receive, sent)
    assert [message["type"] for message in sent] == ["lifespan.startup.complete", "lifespan.shutdown.complete"]


# -- JWTValidator: which tokens are valid (RFC 9068, RFC 8707) ----------------------------------


async def test_a_valid_token_says_who_issued_it_whom_it_names_what_it_allows_until_when() -> None:
    expiry = int(time.time()) + 120
    access = await JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE).validate(mint(sub="42", scope="a b", exp=expiry))
    assert (access.issuer, access.subject, access.scopes) == (ISSUER, "42", frozenset({"a", "b"}))
    assert (access.client_id, access.expires_at, access.principal) == ("docs-client", expiry, f"{ISSUER}#42")
    assert (await JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE).validate(mint(client_id=None))).client_id is None


async def refusal(validator: JWTValidator, token: str) -> str:
    with pytest.raises(auth_module.InvalidToken) as refused:
        await validator.validate(token)
    return str(refused.value)


async def test_a_token_that_is_no_jwt_is_refused_as_such() -> None:
    validator = JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE)
    for token in ("not-a-token", "é.é.é", "e30.bm90IGpzb24.c2ln", "e30.WzFd.c2ln"):
        assert await refusal(validator, token) == "not a JWT", token


def forged(header: dict[str, Any], claims: Any) -> str:
    """A compact JWS with exactly this header and these claims, and a signature of no one's."""
    encoded = [base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode() for part in (header, claims)]
    return ".".join([*encoded, "c2ln"])


SIGNED_HEADER = {"alg": "ES256", "typ": "at+jwt", "kid": KEY.kid}
SOUND_CLAIMS = {"iss": ISSUER, "sub": "alice", "aud": RESOURCE, "exp": 4_000_000_000}
ANY_JSON = [["x"], {"a": 1}, 1, 1.5, None, True, ""]


@pytest.mark.parametrize(
    ("header", "claims"),
    [
        *[pytest.param(SIGNED_HEADER, {**SOUND_CLAIMS, "iss": value}, id=f"iss={value!r}") for value in ANY_JSON],
        *[pytest.param({**SIGNED_HEADER, "typ": value}, SOUND_CLAIMS, id=f"typ={value!r}") for value in ANY_JSON],
        *[pytest.param({**SIGNED_HEADER, "kid": value}, SOUND_CLAIMS, id=f"kid={value!r}") for value in ANY_JSON],
        *[pytest.param({**SIGNED_HEADER, "crit": value}, SOUND_CLAIMS, id=f"crit={value!r}") for value in ANY_JSON],
        *[pytest.param({**SIGNED_HEADER, "alg": value}, SOUND_CLAIMS, id=f"alg={value!r}") for value in ANY_JSON],
    ],
)
async def test_a_header_or_claim_of_any_json_type_is_refused_before_any_signature_check(
    header: dict[str, Any], claims: dict[str, Any]
) -> None:
    """Issue 25: a list as the unverified `iss`, an integer or null as `typ`, a number as `crit`
    raised TypeError or AttributeError (an unauthenticated 500); any such token is just invalid."""
    assert await refusal(JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE), forged(header, claims))


async def test_what_is_refused_unverified_says_why() -> None:
    validator = JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE)
    assert await refusal(validator, forged(SIGNED_HEADER, [SOUND_CLAIMS])) == "not a JWT"  # claims not an object
    assert await refusal(validator, forged({**SIGNED_HEADER, "kid": 7}, SOUND_CLAIMS)) == "kid is not a string"
    assert await refusal(validator, forged(SIGNED_HEADER, {**SOUND_CLAIMS, "iss": ["x"]})) == (
        "issuer ['x'] is not trusted here"
    )
    # A long issuer is cut in the reason (it is logged): its repr's first 100 characters and "...".
    exactly = "e" * 98  # 100 characters with its quotes
    assert await refusal(validator, forged(SIGNED_HEADER, {**SOUND_CLAIMS, "iss": exactly})) == (
        f"issuer '{exactly}' is not trusted here"
    )
    longer = "e" * 99
    assert await refusal(validator, forged(SIGNED_HEADER, {**SOUND_CLAIMS, "iss": longer})) == (
        f"issuer '{longer}... is not trusted here"
    )


async def test_a_signed_token_with_claims_of_the_wrong_type_is_refused_or_read_safely() -> None:
    """After the signature: an expiry past any integer is refused, a `client_id` that is no
    string is none."""
    validator = JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE)
    huge = jwt.encode(SIGNED_HEADER, {**SOUND_CLAIMS, "exp": 1e400}, KEY)
    assert (await refusal(validator, huge)).startswith("rejected: ")
    assert (await validator.validate(mint(client_id={"a": 1}))).client_id is None


async def test_only_the_trusted_issuers_tokens_are_considered() -> None:
    validator = JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE)
    assert (
        await refusal(validator, mint(iss="https://evil.example"))
        == "issuer 'https://evil.example' is not trusted here"
    )
    assert "is not trusted here" in await refusal(validator, mint(iss=None))


async def test_an_access_token_says_it_is_one_in_its_typ() -> None:
    """RFC 9068 §4: `typ` is `at+jwt` or `application/at+jwt` (media types in any case); an ID
    token or a token with no `typ` is no access token."""
    validator = JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE)
    for typ in ("at+jwt", "application/at+jwt", "AT+JWT", "Application/AT+JWT"):
        assert (await validator.validate(mint(typ=typ))).subject == "alice", typ
    claims = json.dumps(jwt.decode(mint(), KEY).claims).encode()
    untyped = jws.serialize_compact({"alg": "ES256", "kid": KEY.kid}, claims, KEY)  # no `typ` at all
    for token in (mint(typ="JWT"), mint(typ="at+jwt-not"), untyped):
        assert await refusal(validator, token) == "not an access token (typ must be at+jwt, RFC 9068 §4)"


async def test_a_token_for_another_resource_is_refused() -> None:
    """RFC 8707, index.mdx Token Handling: only tokens issued for this server (its `aud`)."""
    validator = JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE)
    for audience in ("https://api.example/", ["https://api.example/"], None):
        assert (await refusal(validator, mint(aud=audience))).startswith("rejected: "), audience
    assert (await validator.validate(mint(aud=["https://api.example/", RESOURCE]))).subject == "alice"


async def test_a_token_without_a_subject_or_an_expiry_is_refused() -> None:
    validator = JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE)
    for missing in ("sub", "exp"):
        assert (await refusal(validator, mint(**{missing: None}))).startswith("rejected: "), missing


async def test_a_token_is_valid_until_thirty_seconds_past_its_expiry() -> None:
    """The clocks of issuer and server may differ a little (`LEEWAY`)."""
    validator = JWTValidator({ISSUER: KeySet([KEY])}, RESOURCE)
    now = int(time.time())
    assert (await validator.validate(mint(exp=now - 20, iat=now - 80))).subject == "alice"
    assert (await refusal(validator, mint(exp=now - 45, iat=now - 105))).startswith("rejected: ")
    assert (await refusal(validator, mint(nbf=now + 60))).startswith("rejected: ")


async def test_only_asymmetric_signatures_are_accepted() -> None:
    """ES256, ES384, RS256, PS256, EdDSA; never HMAC (a shared secret, even among the issuer's
    keys), never `none`; and a key that is not the issuer's does not verify."""
    p384 = ECKey.generate_key("P-384", parameters={"kid": "p384"})
    rsa = RSAKey.generate_key(2048, parameters={"kid": "rsa"})
    ed = OKPKey.generate_key("Ed25519", parameters={"kid": "ed"})
    secret = OctKey.generate_key(256, parameters={"kid": "secret"})
    validator = JWTValidator({ISSUER: KeySet([KEY, p384, rsa, ed, secret])}, RESOURCE)
    for key, alg in ((KEY, "ES256"), (p384, "ES384"), (rsa, "RS256"), (rsa, "PS256")):
        assert (await validator.validate(mint(key, alg))).subject == "alice", alg
    with warnings.catch_warnings():  # joserfc warns that RFC 9864 deprecates the name "EdDSA"
        warnings.simplefilter("ignore", SecurityWarning)
        assert (await validator.validate(mint(ed, "EdDSA"))).subject == "alice"
    assert (await refusal(validator, mint(secret, "HS256"))).startswith("rejected: ")
    unsigned = mint().rsplit(".", 2)[1]
    assert await refusal(validator, f"eyJhbGciOiJub25lIiwidHlwIjoiYXQrand0In0.{unsigned}.") != ""
    assert (await refusal(validator, mint(new_key()))).startswith("rejected: ")


# -- JWTValidator: the issuer's keys from its JWKS URL -------------------------------------------


class Issuer:
    """A JWKS endpoint on a real server: the keys it publishes, how often it was asked, and
    whether it answers (`broken`) and how fast (`delay`)."""

    def __init__(self) -> None:
        self.keys = KeySet([KEY])
        self.fetches = 0
        self.broken = False
        self.delay = 0.0
        self.url = ""

    def app(self) -> Starlette:
        async def jwks(request: Request) -> Response:
            self.fetches += 1
            await asyncio.sleep(self.delay)
            if self.broken:
                return Response("down", status_code=503)
            return JSONResponse(self.keys.as_dict())

        return Starlette(routes=[Route("/jwks", jwks)])


@pytest.fixture(scope="module")
def issuer_server() -> Iterator[Issuer]:
    issuer = Issuer()
    with running(issuer.app()) as base:
        issuer.url = f"{base}/jwks"
        yield issuer


@pytest.fixture
def issuer(issuer_server: Issuer, monkeypatch: pytest.MonkeyPatch) -> Issuer:
    issuer_server.keys, issuer_server.fetches, issuer_server.broken, issuer_server.delay = KeySet([KEY]), 0, False, 0.0
    return issuer_server


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SteppedClock:
    fake = SteppedClock(5000.0)
    monkeypatch.setattr(auth_module, "time", fake)
    return fake


def fetching(issuer: Issuer) -> Callable[[str], Any]:
    validator = JWTValidator({ISSUER: issuer.url}, RESOURCE)
    return validator.validate


async def test_fetched_keys_are_trusted_for_five_minutes(issuer: Issuer, clock: SteppedClock) -> None:
    validate = fetching(issuer)
    assert (await validate(mint())).subject == "alice" and issuer.fetches == 1
    clock.now += auth_module.JWKS_TTL - 1  # long past JWKS_RETRY, still fresh: no fetch
    await validate(mint())
    await validate(mint(KEY, kid=None))
    assert issuer.fetches == 1
    clock.now += 1  # stale now: fetched again
    await validate(mint())
    assert issuer.fetches == 2


async def test_a_token_without_a_kid_is_checked_with_the_keys_at_hand(issuer: Issuer, clock: SteppedClock) -> None:
    validate = fetching(issuer)
    unnamed = jwt.encode({"alg": "ES256", "typ": "at+jwt"}, jwt.decode(mint(), KEY).claims, KEY)
    await validate(mint())
    clock.now += auth_module.JWKS_RETRY + 1
    assert (await validate(unnamed)).subject == "alice" and issuer.fetches == 1


async def test_a_rotated_key_is_fetched_but_an_unknown_kid_at_most_every_ten_seconds(
    issuer: Issuer, clock: SteppedClock
) -> None:
    validate = fetching(issuer)
    await validate(mint())
    rotated = new_key()
    issuer.keys = KeySet([KEY, rotated])
    clock.now += auth_module.JWKS_RETRY - 1  # a token naming a key not seen yet, too soon: no fetch
    assert (await refusal_of(validate, mint(rotated))).startswith("rejected: ")
    assert issuer.fetches == 1
    clock.now += 1  # ten seconds since the last fetch: the new key is fetched and used
    assert (await validate(mint(rotated))).subject == "alice" and issuer.fetches == 2
    # A kid nobody publishes: refused, and it buys no fetch within ten seconds of the last one.
    stranger = new_key()
    for _ in range(3):
        assert (await refusal_of(validate, mint(stranger))).startswith("rejected: ")
    assert issuer.fetches == 2
    # The keys fetched stay good for the known kids meanwhile.
    assert (await validate(mint(KEY))).subject == "alice" and issuer.fetches == 2


async def refusal_of(validate: Callable[[str], Any], token: str) -> str:
    with pytest.raises(auth_module.InvalidToken) as refused:
        await validate(token)
    return str(refused.value)


async def test_an_issuer_that_cannot_be_reached_costs_its_tokens_not_the_keys_at_hand(
    issuer: Issuer, clock: SteppedClock
) -> None:
    validate = fetching(issuer)
    issuer.broken = True
    assert await refusal_of(validate, mint()) == f"the keys of {ISSUER} could not be fetched"
    issuer.broken = False
    clock.now += auth_module.JWKS_RETRY
    await validate(mint())
    issuer.broken = True
    clock.now += auth_module.JWKS_TTL  # stale, and the issuer is down: the keys at hand still serve
    assert (await validate(mint())).subject == "alice" and issuer.fetches == 3
    clock.now += auth_module.JWKS_RETRY - 1  # and it is asked again at most every ten seconds
    assert (await validate(mint())).subject == "alice" and issuer.fetches == 3
    clock.now += 1
    assert (await validate(mint())).subject == "alice" and issuer.fetches == 4


async def test_forged_tokens_wait_for_one_fetch_and_a_failed_one_is_not_retried_for_ten_seconds(
    issuer: Issuer, clock: SteppedClock
) -> None:
    """Tokens naming a trusted issuer cannot make this server fetch its keys once each: one fetch
    at a time, the others wait for it; after a failure, refused at once for JWKS_RETRY."""
    validate = fetching(issuer)
    issuer.broken, issuer.delay = True, 0.2
    forged = [mint(new_key()) for _ in range(20)]
    refusals = await asyncio.gather(*(refusal_of(validate, token) for token in forged))
    assert issuer.fetches == 1
    assert set(refusals) == {
        f"the keys of {ISSUER} could not be fetched",
        f"the keys of {ISSUER} are unavailable: the last fetch failed",
    }
    issuer.broken, issuer.delay = False, 0.0
    clock.now += auth_module.JWKS_RETRY - 1  # the issuer is back, but it is not asked yet
    assert await refusal_of(validate, mint()) == f"the keys of {ISSUER} are unavailable: the last fetch failed"
    assert issuer.fetches == 1
    clock.now += 1
    assert (await validate(mint())).subject == "alice" and issuer.fetches == 2


async def test_tokens_arriving_together_share_the_first_fetch(issuer: Issuer, clock: SteppedClock) -> None:
    validate = fetching(issuer)
    issuer.delay = 0.2
    accepted = await asyncio.gather(*(validate(mint()) for _ in range(10)))
    assert {access.subject for access in accepted} == {"alice"} and issuer.fetches == 1


async def test_keys_are_used_stale_for_half_an_hour_at_most_while_the_issuer_is_down(
    issuer: Issuer, clock: SteppedClock
) -> None:
    """A key the issuer withdrew stops working JWKS_STALE_LIMIT after the last successful fetch."""
    validate = fetching(issuer)
    await validate(mint())
    issuer.broken = True
    clock.now += auth_module.JWKS_STALE_LIMIT - 1
    assert (await validate(mint())).subject == "alice" and issuer.fetches == 2
    clock.now += 1  # past the limit: refused, and no fetch within ten seconds of the last
    assert await refusal_of(validate, mint()) == f"the keys of {ISSUER} are unavailable: the last fetch failed"
    clock.now += auth_module.JWKS_RETRY - 1
    assert await refusal_of(validate, mint()) == f"the keys of {ISSUER} could not be fetched"
    assert issuer.fetches == 3
    issuer.broken = False
    clock.now += auth_module.JWKS_RETRY
    assert (await validate(mint())).subject == "alice" and issuer.fetches == 4


async def test_an_issuer_slow_to_answer_holds_up_no_other_issuers_tokens(issuer: Issuer, clock: SteppedClock) -> None:
    """One fetch at a time is per issuer: another issuer's keys are fetched meanwhile."""
    other = "https://other.example"
    validator = JWTValidator({ISSUER: issuer.url, other: issuer.url.replace("/jwks", "/gone")}, RESOURCE)
    issuer.delay = 0.5
    finished: list[str] = []

    async def check(token: str) -> None:
        with pytest.raises(auth_module.InvalidToken):
            await validator.validate(token)
        finished.append(json.loads(jws.extract_compact(token.encode()).payload)["iss"])

    await asyncio.gather(check(mint(new_key())), check(mint(new_key(), iss=other)))
    assert finished == [other, ISSUER] and issuer.fetches == 1


def test_the_key_limits_have_their_line_in_the_limits_table() -> None:
    table = (Path(__file__).parents[1] / "docs/patterns/production.md").read_text("utf-8")
    rows = [line for line in table.splitlines() if line.startswith("|") and "`auth.JWKS_STALE_LIMIT`" in line]
    assert len(rows) == 1, "no line (or several) for the issuer's keys in the limits table"
    minutes = (auth_module.JWKS_TIMEOUT, auth_module.JWKS_TTL // 60, auth_module.JWKS_STALE_LIMIT // 60)
    assert rows[0].split("|")[2].strip() == (
        f"{minutes[0]:g} s; kept {minutes[1]} min, fetched again at most every {auth_module.JWKS_RETRY} s"
        f" (after a failure, or for an unknown `kid`); stale keys serve up to {minutes[2]} min"
    )


async def test_a_slow_jwks_is_given_up_on(issuer: Issuer, monkeypatch: pytest.MonkeyPatch) -> None:
    """An issuer that takes longer than `JWKS_TIMEOUT` holds no request longer than that."""
    monkeypatch.setattr(auth_module, "JWKS_TIMEOUT", 0.1)
    issuer.delay = 0.5
    assert await refusal_of(fetching(issuer), mint()) == f"the keys of {ISSUER} could not be fetched"
