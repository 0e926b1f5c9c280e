"""The token half of mcpref.client's OAuth, in process, against a scripted authorization server and
protected MCP endpoint under uvicorn: the code exchange, refreshing (before expiry, after a 401,
when refused), requests that meet a 401 together, the step-up for more scope and its limit, how
the client authenticates at the token endpoint, and DPoP's nonces at both servers.

The conformance suite's auth/* scenarios run the same flows, but in a child process; these state
each rule where a test of this process sees it. The client is the real one; the servers answer
what each test scripts (`token_answers`, `mcp_answers`), and otherwise issue and honour tokens.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import string
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from joserfc import jwt
from joserfc.jwk import ECKey
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.gzip import GZipMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpref.client import AuthorizationError, Client, ClientRegistration, MCPClientError, OAuth
from mcpref.client._auth import MAX_ANSWER_BYTES, authorization_server_metadata_urls
from tests.client.conftest import authorization_server_metadata
from tests.client.test_dpop import verified
from tests.conftest import running

pytestmark = pytest.mark.anyio

REDIRECT_URI = "http://127.0.0.1:33418/callback"
METADATA_URL = "https://app.example.com/client.json"


class World:
    """An MCP endpoint at `/mcp` and its authorization server, on one origin."""

    def __init__(self) -> None:
        self.base = ""
        self.reset()

    def reset(self) -> None:
        self.metadata: dict[str, Any] = {}
        #: Answers of the token endpoint, in order, as (status, body, headers); then fresh tokens.
        self.token_answers: list[tuple[int, dict[str, Any], dict[str, str]]] = []
        #: Each token request: its form and its headers.
        self.token_requests: list[tuple[dict[str, str], dict[str, str]]] = []
        #: Answers of the MCP endpoint before it looks at the token, as (status, headers), or
        #: (status, headers, body).
        self.mcp_answers: list[tuple[int, dict[str, str]] | tuple[int, dict[str, str], bytes]] = []
        self.mcp_requests: list[dict[str, str]] = []
        self.valid: set[str] = set()
        self.issued = 0
        self.registered = 0
        self.authorized: list[dict[str, list[str]]] = []

    @property
    def resource(self) -> str:
        return f"{self.base}/mcp"

    def good_metadata(self) -> dict[str, Any]:
        return authorization_server_metadata(self.base)

    def app(self) -> Starlette:
        async def mcp(request: Request) -> Response:
            self.mcp_requests.append(dict(request.headers))
            if self.mcp_answers:
                status, headers, *body = self.mcp_answers.pop(0)
                return Response(b"".join(body), status_code=status, headers=headers)
            token = request.headers.get("authorization", " ").split(" ", 1)[1]
            if token not in self.valid:
                challenge = f'Bearer resource_metadata="{self.base}/.well-known/oauth-protected-resource/mcp"'
                return Response(status_code=401, headers={"WWW-Authenticate": challenge + ', scope="files:read"'})
            message = await request.json()
            result = {"resultType": "complete", "tools": []}
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": result})

        async def resource_metadata(request: Request) -> Response:
            return JSONResponse({"resource": self.resource, "authorization_servers": [self.base]})

        async def server_metadata(request: Request) -> Response:
            return JSONResponse(self.metadata)

        async def register(request: Request) -> Response:
            self.registered += 1
            return JSONResponse({"client_id": "stub-client"}, 201)

        async def token(request: Request) -> Response:
            form = {key: str(value) for key, value in (await request.form()).items()}
            self.token_requests.append((form, dict(request.headers)))
            if self.token_answers:
                status, body, headers = self.token_answers.pop(0)
            else:
                self.issued += 1
                status, headers = 200, {}
                body = {"access_token": f"at-{self.issued}", "token_type": "Bearer", "expires_in": 3600}
                body["refresh_token"] = f"rt-{self.issued}"
            if "access_token" in body:
                self.valid.add(body["access_token"])
            return JSONResponse(body, status, headers=headers)

        # Large answers go gzipped, as a real server's would: the client reads them decoded.
        return Starlette(
            middleware=[Middleware(GZipMiddleware)],
            routes=[
                Route("/mcp", mcp, methods=["POST"]),
                Route("/.well-known/oauth-protected-resource/mcp", resource_metadata),
                Route("/.well-known/oauth-authorization-server", server_metadata),
                Route("/register", register, methods=["POST"]),
                Route("/token", token, methods=["POST"]),
            ]
        )

    def oauth(self, **options: Any) -> OAuth:
        """An OAuth whose redirect step records the authorization request and answers with a code."""

        async def redirect(url: str) -> str:
            query = parse_qs(urlsplit(url).query)
            self.authorized.append(query)
            return f"{REDIRECT_URI}?{urlencode({'code': 'c', 'state': query['state'][0]})}"

        return OAuth(redirect=redirect, redirect_uri=REDIRECT_URI, **options)

    @property
    def grants(self) -> list[str]:
        return [form["grant_type"] for form, _ in self.token_requests]

    def revoke_all(self) -> None:
        self.valid.clear()


@pytest.fixture(scope="module")
def world_server() -> Iterator[World]:
    world = World()
    with running(world.app()) as base:
        world.base = base
        yield world


@pytest.fixture
def world(world_server: World) -> World:
    world_server.reset()
    world_server.metadata = world_server.good_metadata()
    return world_server


def bearer(token: str, refresh: str | None = None, **more: Any) -> tuple[int, dict[str, Any], dict[str, str]]:
    body: dict[str, Any] = {"access_token": token, "token_type": "Bearer", **more}
    if refresh is not None:
        body["refresh_token"] = refresh
    return 200, body, {}


async def list_tools(world: World, auth: OAuth) -> None:
    async with Client(world.resource, auth=auth, version="2026-07-28") as client:
        await client.list_tools()


# -- refreshing ------------------------------------------------------------------------------


async def test_a_token_about_to_expire_is_refreshed_before_it_is_sent(world: World) -> None:
    """Within EXPIRY_MARGIN (30 s) of its `expires_in` a token counts as expired; one with an
    hour left, or with no `expires_in` at all, is sent as it is."""
    world.token_answers = [bearer("at-soon", "rt-soon", expires_in=10)]
    auth = world.oauth()
    await list_tools(world, auth)
    assert world.grants == ["authorization_code", "refresh_token"]
    refresh, _ = world.token_requests[1]
    assert refresh == {
        "grant_type": "refresh_token",
        "refresh_token": "rt-soon",
        "resource": world.resource,
        "client_id": "stub-client",
    }
    assert world.mcp_requests[-1]["authorization"] == "Bearer at-1"
    await list_tools(world, auth)  # an hour left: no refresh
    assert world.grants == ["authorization_code", "refresh_token"]
    world.token_answers = [bearer("at-forever", "rt-forever")]
    forever = world.oauth()
    await list_tools(world, forever)
    await list_tools(world, forever)
    assert world.grants[2:] == ["authorization_code"]
    assert world.mcp_requests[-1]["authorization"] == "Bearer at-forever"


async def test_a_refresh_answer_without_a_refresh_token_or_scope_keeps_the_old_ones(world: World) -> None:
    """The server may keep the old refresh token valid, and a token response without `scope`
    grants what was asked for: the refreshed token keeps both."""
    world.token_answers = [bearer("at-a", "rt-a", expires_in=10), bearer("at-b", expires_in=10)]
    auth = world.oauth()
    await list_tools(world, auth)  # authorized, then refreshed at once: at-b
    await list_tools(world, auth)  # at-b is about to expire too: refreshed with rt-a again
    assert world.grants == ["authorization_code", "refresh_token", "refresh_token"]
    assert [form["refresh_token"] for form, _ in world.token_requests[1:]] == ["rt-a", "rt-a"]
    assert auth.store.tokens[(world.base, world.resource)].scopes == {"files:read"}


async def test_an_expired_token_whose_refresh_is_refused_is_never_sent(world: World) -> None:
    world.token_answers = [bearer("at-soon", "rt-soon", expires_in=10), (400, {"error": "invalid_grant"}, {})]
    auth = world.oauth()
    with pytest.raises(MCPClientError):
        await list_tools(world, auth)  # this request already authorized once: its 401 is the caller's
    await list_tools(world, auth)  # the next one signs in afresh
    assert world.grants == ["authorization_code", "refresh_token", "authorization_code"]
    assert all(headers.get("authorization") != "Bearer at-soon" for headers in world.mcp_requests)


async def test_a_rejected_token_is_refreshed_and_a_refused_refresh_starts_the_flow_over(world: World) -> None:
    auth = world.oauth()
    await list_tools(world, auth)
    world.revoke_all()
    await list_tools(world, auth)  # 401: refreshed with rt-1, and the request sent again
    assert world.grants == ["authorization_code", "refresh_token"]
    assert world.mcp_requests[-1]["authorization"] == "Bearer at-2"
    world.revoke_all()
    world.token_answers = [(400, {"error": "invalid_grant"}, {})]
    await list_tools(world, auth)  # 401, the refresh refused: the user signs in again
    assert world.grants == ["authorization_code", "refresh_token", "refresh_token", "authorization_code"]
    assert len(world.authorized) == 2
    assert world.mcp_requests[-1]["authorization"] == "Bearer at-3"


async def test_without_a_refresh_token_or_a_registration_a_rejected_token_means_signing_in_again(
    world: World,
) -> None:
    world.token_answers = [bearer("at-a")]
    auth = world.oauth()
    await list_tools(world, auth)
    world.revoke_all()
    await list_tools(world, auth)  # no refresh token: no refresh request, a new sign-in
    assert world.grants == ["authorization_code", "authorization_code"]
    world.revoke_all()
    auth.store.registrations.clear()  # a store that kept the tokens but not the client ID
    await list_tools(world, auth)
    assert world.grants == ["authorization_code"] * 3
    assert world.registered == 2 and len(world.authorized) == 3


async def test_a_client_id_metadata_document_url_is_the_client_id_when_refreshing_too(world: World) -> None:
    world.metadata["client_id_metadata_document_supported"] = True
    auth = world.oauth(client_metadata_url=METADATA_URL)
    await list_tools(world, auth)
    world.revoke_all()
    await list_tools(world, auth)
    assert world.grants == ["authorization_code", "refresh_token"]
    assert [form["client_id"] for form, _ in world.token_requests] == [METADATA_URL, METADATA_URL]
    assert world.registered == 0


async def test_where_the_server_takes_no_metadata_document_the_registered_id_refreshes(world: World) -> None:
    auth = world.oauth(client_metadata_url=METADATA_URL)
    await list_tools(world, auth)
    world.revoke_all()
    await list_tools(world, auth)
    assert world.grants == ["authorization_code", "refresh_token"]
    assert [form["client_id"] for form, _ in world.token_requests] == ["stub-client", "stub-client"]


async def test_requests_that_meet_the_first_401_together_send_the_user_once(world: World) -> None:
    """The second waits for the first's sign-in and takes its token, rather than starting its own."""
    async with Client(world.resource, auth=world.oauth(), version="2026-07-28") as client:
        await asyncio.gather(client.list_tools(), client.list_tools())
    assert len(world.authorized) == 1 and world.grants == ["authorization_code"]
    assert len(world.mcp_requests) == 4  # each sent without a token, then with the one token


async def test_oauth_owns_the_authorization_header_a_header_of_the_clients_is_not_sent(world: World) -> None:
    """Until OAuth holds a token for this server, no `Authorization` goes out: not one set on the client."""
    auth = world.oauth()
    async with Client(world.resource, auth=auth, headers={"Authorization": "Bearer mine"}, version="2026-07-28") as c:
        await c.list_tools()
    assert [headers.get("authorization") for headers in world.mcp_requests] == [None, "Bearer at-1"]


# -- step-up ---------------------------------------------------------------------------------


def insufficient(scope: str | None) -> tuple[int, dict[str, str]]:
    challenge = 'Bearer error="insufficient_scope"' + (f', scope="{scope}"' if scope is not None else "")
    return 403, {"WWW-Authenticate": challenge}


async def test_a_403_for_a_scope_not_granted_authorizes_again_for_both(world: World) -> None:
    auth = world.oauth()
    await list_tools(world, auth)
    world.mcp_answers = [insufficient("files:write")]
    await list_tools(world, auth)
    assert [query["scope"] for query in world.authorized] == [["files:read"], ["files:write files:read"]]
    assert world.mcp_requests[-1]["authorization"] == "Bearer at-2"


async def test_signing_in_again_after_a_401_keeps_the_scopes_stepped_up_to(world: World) -> None:
    """index.mdx §Scope Selection Strategy: when re-authorizing, the challenge's scopes go
    "alongside any previously granted scopes", so that what a step-up won is not lost. Was: a
    401 sign-in asked for the challenge's scopes alone, and the next write sent the user round
    again for files:write."""
    auth = world.oauth()
    await list_tools(world, auth)
    world.mcp_answers = [insufficient("files:write")]
    await list_tools(world, auth)
    world.revoke_all()
    world.token_answers = [(400, {"error": "invalid_grant"}, {})]  # the refresh refused: sign in again
    await list_tools(world, auth)
    assert [query["scope"] for query in world.authorized] == [
        ["files:read"],
        ["files:write files:read"],
        ["files:read files:write"],
    ]


@pytest.mark.parametrize("scope", ["files:read", "", None])
async def test_a_403_naming_no_scope_beyond_the_granted_is_the_callers(world: World, scope: str | None) -> None:
    """A step-up that could not get more than the token has would only send the user round again."""
    auth = world.oauth()
    await list_tools(world, auth)
    world.mcp_answers = [insufficient(scope)]
    with pytest.raises(MCPClientError):
        await list_tools(world, auth)
    assert len(world.authorized) == 1


@pytest.mark.parametrize(("options", "step_ups"), [({}, 2), ({"max_step_ups": 1}, 1)])
async def test_one_request_steps_up_at_most_max_step_ups_times(
    world: World, options: dict[str, int], step_ups: int
) -> None:
    """index.mdx, Step-Up Authorization Flow: retry "no more than a few times"; by default twice."""
    auth = world.oauth(**options)
    await list_tools(world, auth)
    world.mcp_answers = [insufficient("files:write"), insufficient("files:admin"), insufficient("files:owner")]
    with pytest.raises(MCPClientError):
        await list_tools(world, auth)
    assert len(world.authorized) == 1 + step_ups


# -- client authentication at the token endpoint ---------------------------------------------


def registered(world: World, registration: ClientRegistration, methods: list[str]) -> OAuth:
    world.metadata["token_endpoint_auth_methods_supported"] = methods
    return world.oauth(clients={world.base: registration})


async def test_a_secret_goes_in_http_basic_where_the_server_takes_it(world: World) -> None:
    await list_tools(world, registered(world, ClientRegistration("my:app", "s/cret"), ["client_secret_basic"]))
    form, headers = world.token_requests[0]
    assert base64.b64decode(headers["authorization"].removeprefix("Basic ")) == b"my%3Aapp:s%2Fcret"
    assert "client_id" not in form and "client_secret" not in form


async def test_a_secret_goes_in_the_form_where_the_server_takes_only_that(world: World) -> None:
    await list_tools(world, registered(world, ClientRegistration("app", "s3cret"), ["client_secret_post"]))
    form, headers = world.token_requests[0]
    assert (form["client_id"], form["client_secret"]) == ("app", "s3cret")
    assert "authorization" not in headers


async def test_a_registration_that_says_none_sends_its_id_and_never_its_secret(world: World) -> None:
    registration = ClientRegistration("app", "s3cret", token_endpoint_auth_method="none")
    await list_tools(world, registered(world, registration, ["client_secret_post", "none"]))
    form, headers = world.token_requests[0]
    assert form["client_id"] == "app" and "client_secret" not in form and "authorization" not in headers


async def test_a_private_key_signs_a_client_assertion_for_this_issuer(world: World) -> None:
    key = ECKey.generate_key("P-256")
    registration = ClientRegistration("app", private_key=key.as_pem(private=True).decode())
    await list_tools(world, registered(world, registration, ["private_key_jwt"]))
    form, headers = world.token_requests[0]
    assert form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
    claims = jwt.decode(form["client_assertion"], key, algorithms=["ES256"]).claims
    assert (claims["iss"], claims["aud"]) == ("app", world.base)
    assert "client_id" not in form and "authorization" not in headers


# -- DPoP ----------------------------------------------------------------------------------


async def test_dpop_proofs_follow_each_servers_nonce(world: World) -> None:
    """RFC 9449: where the authorization server takes DPoP, every token request carries a proof;
    a `use_dpop_nonce` answer (400 from the token endpoint, 401 from the resource) is tried once
    more with the nonce it named. A DPoP token goes out as `DPoP`, with a proof bound to it."""
    world.metadata["dpop_signing_alg_values_supported"] = ["ES256"]
    world.token_answers = [
        (400, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": "as-nonce"}),
        (200, {"access_token": "dp-1", "token_type": "DPoP", "expires_in": 3600}, {}),
    ]
    auth = world.oauth()
    await list_tools(world, auth)
    world.mcp_answers = [(401, {"WWW-Authenticate": 'DPoP error="use_dpop_nonce"', "DPoP-Nonce": "rs-nonce"})]
    await list_tools(world, auth)
    proofs = [verified(headers["dpop"])[1] for _, headers in world.token_requests]
    assert [(p["htm"], p["htu"], p.get("nonce")) for p in proofs] == [
        ("POST", f"{world.base}/token", None),
        ("POST", f"{world.base}/token", "as-nonce"),
    ]
    nonced = world.mcp_requests[-1]
    assert nonced["authorization"] == "DPoP dp-1"
    _, claims = verified(nonced["dpop"])
    assert (claims["htm"], claims["htu"], claims["nonce"]) == ("POST", world.resource, "rs-nonce")
    assert "ath" in claims
    # Nonces are kept per origin, and this one server is both: before, it had the token endpoint's.
    assert verified(world.mcp_requests[-2]["dpop"])[1]["nonce"] == "as-nonce"


async def test_without_dpop_offered_or_wanted_tokens_are_bearer_and_proofless(world: World) -> None:
    world.metadata["dpop_signing_alg_values_supported"] = ["RS256"]  # not how this client signs
    await list_tools(world, world.oauth())
    world.metadata["dpop_signing_alg_values_supported"] = ["ES256"]
    await list_tools(world, world.oauth(dpop=False))
    assert all("dpop" not in headers for _, headers in world.token_requests)
    assert all("dpop" not in headers for headers in world.mcp_requests)
    assert json.dumps(world.grants) == '["authorization_code", "authorization_code"]'


async def test_the_code_is_exchanged_with_its_verifier_redirect_uri_and_resource(world: World) -> None:
    """RFC 7636 §4.1 and §4.5: the verifier, 43 to 128 unreserved characters, whose S256 is the
    challenge sent; RFC 8707 §2: the same `resource` as the authorization request."""
    await list_tools(world, world.oauth())
    form, _ = world.token_requests[0]
    verifier = form.pop("code_verifier")
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert world.authorized[0]["code_challenge"] == [digest]
    assert 43 <= len(verifier) <= 128 and set(verifier) <= set(string.ascii_letters + string.digits + "-._~")
    assert form == {
        "grant_type": "authorization_code",
        "code": "c",
        "redirect_uri": REDIRECT_URI,
        "resource": world.resource,
        "client_id": "stub-client",
    }


def incompressible(size: int) -> str:
    """`size` characters gzip cannot shrink much, so the answer arrives in many reads."""
    return base64.b64encode(os.urandom(size))[:size].decode()


def token_answer_of(size: int, token: str) -> tuple[int, dict[str, Any], dict[str, str]]:
    """A token answer whose body, as Starlette's JSONResponse writes it, is `size` bytes."""
    body: dict[str, Any] = {"access_token": token, "token_type": "Bearer", "padding": ""}
    body["padding"] = incompressible(size - len(json.dumps(body, separators=(",", ":"))))
    return 200, body, {}


async def test_an_authorization_servers_answer_is_read_up_to_a_bound(world: World) -> None:
    """A resource names its authorization server, so a hostile one must not make the client hold
    whatever it sends: a token answer or metadata over MAX_ANSWER_BYTES (1 MiB, counted over
    every read, decoded: the World gzips) is refused in words; one of exactly the bound is read."""
    world.token_answers = [token_answer_of(MAX_ANSWER_BYTES, "at-edge")]
    await list_tools(world, world.oauth())
    assert world.mcp_requests[-1]["authorization"] == "Bearer at-edge"
    world.token_answers = [token_answer_of(MAX_ANSWER_BYTES + 1, "at-huge")]
    with pytest.raises(AuthorizationError) as refused:
        await list_tools(world, world.oauth())
    assert str(refused.value) == (
        f"the token request answer of {world.base}/token is over {MAX_ANSWER_BYTES} bytes: not read"
    )
    world.reset()
    world.metadata = {**world.good_metadata(), "padding": incompressible(MAX_ANSWER_BYTES)}
    with pytest.raises(AuthorizationError) as refused:
        await list_tools(world, world.oauth())
    # A metadata URL over the bound is one not found; the next is tried, and each is named.
    first, second = authorization_server_metadata_urls(world.base)
    too_large = f"the authorization server metadata answer of {first} is over {MAX_ANSWER_BYTES} bytes: not read"
    assert str(refused.value) == (
        f"no authorization server metadata found: tried {first} ({too_large}), {second} (HTTP 404)"
    )


async def test_a_challenge_with_a_body_over_the_bound_is_not_read_whole(world: World) -> None:
    """httpx reads a 401's body before it sends the request again, with no bound of its own, so
    the flow reads it first, and no more than MAX_ANSWER_BYTES of it, counted over every read."""
    auth = world.oauth()
    await list_tools(world, auth)
    challenge = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
    world.mcp_answers = [(401, challenge, incompressible(MAX_ANSWER_BYTES).encode())]
    await list_tools(world, auth)  # exactly the bound: read, refreshed, sent again
    assert world.grants == ["authorization_code", "refresh_token"]
    world.mcp_answers = [(401, challenge, incompressible(MAX_ANSWER_BYTES + 1).encode())]
    with pytest.raises(AuthorizationError) as refused:
        await list_tools(world, auth)
    assert str(refused.value) == f"the 401 answer of {world.resource} is over {MAX_ANSWER_BYTES} bytes: not read"
    assert world.grants == ["authorization_code", "refresh_token"]


async def test_the_token_endpoint_is_asked_for_json(world: World) -> None:
    await list_tools(world, world.oauth())
    assert [headers["accept"] for _, headers in world.token_requests] == ["application/json"]


async def test_a_refused_code_exchange_names_the_request_the_status_and_the_oauth_error(world: World) -> None:
    world.token_answers = [(400, {"error": "invalid_grant", "error_description": "code used"}, {})]
    with pytest.raises(AuthorizationError) as refused:
        await list_tools(world, world.oauth())
    assert str(refused.value) == "token request refused (HTTP 400): invalid_grant: code used"
    assert refused.value.error == "invalid_grant"


@pytest.mark.parametrize("endpoint", ["registration_endpoint", "token_endpoint"])
async def test_an_authorization_server_that_cannot_be_reached_is_named_with_the_step(
    world: World, endpoint: str
) -> None:
    world.metadata[endpoint] = "http://127.0.0.1:9/gone"  # port 9 (discard): nothing listens
    with pytest.raises(AuthorizationError) as failed:
        await list_tools(world, world.oauth())
    step = {"registration_endpoint": "client registration", "token_endpoint": "token request"}[endpoint]
    assert str(failed.value).startswith(f"{step} to http://127.0.0.1:9/gone failed: ConnectError(")


def dpop_world(world: World, *answers: tuple[int, Any, dict[str, str]]) -> OAuth:
    world.metadata["dpop_signing_alg_values_supported"] = ["ES256"]
    world.token_answers = list(answers)
    return world.oauth()


async def test_a_token_endpoint_that_keeps_changing_its_nonce_is_asked_twice_only(world: World) -> None:
    auth = dpop_world(
        world,
        (400, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": "n1"}),
        (400, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": "n2"}),
        (400, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": "n3"}),
    )
    with pytest.raises(AuthorizationError, match="use_dpop_nonce"):
        await list_tools(world, auth)
    assert world.grants == ["authorization_code"] * 2


@pytest.mark.parametrize(
    "answer",
    [
        (400, {"error": "use_dpop_nonce"}, {}),  # no nonce to use
        (401, {"error": "use_dpop_nonce"}, {"DPoP-Nonce": "n1"}),  # not the token endpoint's way to ask
        (400, ["use_dpop_nonce"], {"DPoP-Nonce": "n1"}),  # no error object
        (400, {"error": "invalid_grant"}, {"DPoP-Nonce": "n1"}),
    ],
)
async def test_only_a_400_asking_for_a_new_nonce_is_tried_again(world: World, answer: Any) -> None:
    with pytest.raises(AuthorizationError):
        await list_tools(world, dpop_world(world, answer))
    assert world.grants == ["authorization_code"]


async def test_a_bearer_token_from_a_server_that_offers_dpop_goes_out_as_bearer_without_a_proof(
    world: World,
) -> None:
    """RFC 9449 §5: the token response's `token_type` says how the token is used, whatever was offered."""
    await list_tools(world, dpop_world(world))
    assert "dpop" in world.token_requests[0][1]
    assert world.mcp_requests[-1]["authorization"] == "Bearer at-1" and "dpop" not in world.mcp_requests[-1]


async def test_a_token_that_comes_with_a_nonce_is_taken_at_once(world: World) -> None:
    auth = dpop_world(world, (200, {"access_token": "dp-1", "token_type": "DPoP"}, {"DPoP-Nonce": "n1"}))
    await list_tools(world, auth)
    assert world.grants == ["authorization_code"]
    assert verified(world.mcp_requests[-1]["dpop"])[1]["nonce"] == "n1"


def nonce_challenge(nonce: str | None) -> tuple[int, dict[str, str]]:
    headers = {"WWW-Authenticate": 'DPoP error="use_dpop_nonce"'}
    if nonce is not None:
        headers["DPoP-Nonce"] = nonce
    return 401, headers


async def test_a_resource_is_asked_again_for_two_new_nonces_at_most_then_the_token_counts_as_rejected(
    world: World,
) -> None:
    """RFC 9449 §9: a 401 `use_dpop_nonce` naming a new nonce means the same request again with it,
    twice at most in a row; the third is a rejected token (refreshed), the fourth the caller's."""
    auth = dpop_world(world)
    await list_tools(world, auth)
    before = len(world.mcp_requests)
    world.mcp_answers = [nonce_challenge(nonce) for nonce in ("n1", "n2", "n3", "n4")]
    with pytest.raises(MCPClientError):
        await list_tools(world, auth)
    assert len(world.mcp_requests) - before == 4
    assert world.grants == ["authorization_code", "refresh_token"]


async def test_a_use_dpop_nonce_without_a_new_nonce_is_a_rejected_token(world: World) -> None:
    """Without a nonce it has not used, the request would only go out as it went: refreshed instead."""
    auth = dpop_world(world)
    await list_tools(world, auth)
    world.mcp_answers = [nonce_challenge(None), nonce_challenge(None)]
    with pytest.raises(MCPClientError):
        await list_tools(world, auth)
    assert world.grants == ["authorization_code", "refresh_token"]
