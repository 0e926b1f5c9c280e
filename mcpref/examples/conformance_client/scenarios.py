"""What the conformance client does in each scenario, by name; see the package docstring."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from mcpref.client import (
    AuthorizationError,
    Client,
    ClientCredentials,
    ClientRegistration,
    EnterpriseManaged,
    JWTBearer,
    MCPClientError,
    OAuth,
    ProtocolError,
    default_ssl_context,
)

Handler = Callable[[str, dict[str, Any]], Awaitable[None]]

#: Scenario name -> what the client does in it.
SCENARIOS: dict[str, Handler] = {}

CLIENT_INFO = {"name": "mcpref-conformance-client", "version": "0.1.0"}


def scenario(*names: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        for name in names:
            SCENARIOS[name] = handler
        return handler

    return register


def connect(url: str, **handlers: Any) -> Client:
    """A client for the mock server; `handlers` are the input-request handlers to plug in."""
    return Client(url, client_info=CLIENT_INFO, **handlers)


def sample_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """A value for each required property of a flat object schema, by its type (a string if unsure)."""
    samples: dict[Any, Any] = {"string": "example", "integer": 1, "number": 1.5, "boolean": True}
    properties = schema.get("properties") or {}
    kinds = {name: str(properties.get(name, {}).get("type")) for name in schema.get("required", [])}
    return {name: samples.get(kind, "example") for name, kind in kinds.items()}


@scenario("initialize", "tools_call", "sse-retry")
async def call_each_tool(url: str, context: dict[str, Any]) -> None:
    """List the tools and call each: `add_numbers {a, b}` in `tools_call`, none in `initialize`,
    and in `sse-retry` one whose stream the mock closes before the answer, to be resumed."""
    async with connect(url) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool["name"], sample_arguments(tool["inputSchema"]))


@scenario("request-metadata")
async def discover_then_list(url: str, context: dict[str, Any]) -> None:
    """Every request's `_meta` and `MCP-Protocol-Version` are checked, and so are the roots,
    sampling and elicitation capabilities when declared: plug in a handler for each. The
    first request is refused with -32022."""
    async with connect(url, roots=[], sampling=refuse, elicitation=decline) as client:
        await client.discover()
        await client.list_tools()


@scenario("sep-2322-client-request-state")
async def answer_input_requests(url: str, context: dict[str, Any]) -> None:
    """Two tools answer `input_required` (one with `requestState`, one without) and one
    leaves out `resultType`. While the first waits for its answer, an unrelated call goes out:
    it must carry nothing of the other call's round."""
    unrelated_called = False

    async def confirm(params: dict[str, Any]) -> dict[str, Any]:
        nonlocal unrelated_called
        if not unrelated_called:
            unrelated_called = True
            await client.call_tool("test_mrtr_unrelated", {})
        return {"action": "accept", "content": {"confirmed": True}}

    async with connect(url, elicitation=confirm) as client:
        await client.call_tool("test_mrtr_echo_state", {})
        await client.call_tool("test_mrtr_no_state", {})
        await client.call_tool("test_mrtr_no_result_type", {})
    if not unrelated_called:
        raise SystemExit("the server never asked for input")


@scenario("http-standard-headers")
async def use_everything_offered(url: str, context: dict[str, Any]) -> None:
    """`Mcp-Method` and `Mcp-Name` are checked on every kind of request."""
    async with connect(url) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool["name"], sample_arguments(tool["inputSchema"]))
        for resource in await client.list_resources():
            await client.read_resource(resource["uri"])
        for prompt in await client.list_prompts():
            await client.get_prompt(prompt["name"])


@scenario("http-custom-headers")
async def call_with_the_given_arguments(url: str, context: dict[str, Any]) -> None:
    """The context names the calls; `x-mcp-header` arguments must come out as `Mcp-Param-*`."""
    async with connect(url) as client:
        for call in context["toolCalls"]:
            await client.call_tool(call["name"], call["arguments"])


@scenario("http-invalid-tool-headers")
async def call_every_tool(url: str, context: dict[str, Any]) -> None:
    """One tool is valid, ten break the `x-mcp-header` rules. Try to call every one of them:
    the client must keep the valid tool and refuse the others."""
    async with connect(url) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool["name"], sample_arguments(tool["inputSchema"]))
        for name in client.dropped_tools:
            try:
                await client.call_tool(name, {})
            except ProtocolError:
                continue
            raise SystemExit(f"the client called {name!r}, which it should have dropped")


@scenario("json-schema-ref-no-deref")
async def list_tools(url: str, context: dict[str, Any]) -> None:
    """A tool's schema `$ref`s a canary URL that must never be fetched. The mock serves only tools/list."""
    async with connect(url) as client:
        await client.list_tools()


@scenario("json-schema-2020-12-preservation")
async def echo_the_schema(url: str, context: dict[str, Any]) -> None:
    """Send the focal tool's `inputSchema` back, as received, through the echo tool."""
    async with connect(url) as client:
        tools = {tool["name"]: tool for tool in await client.list_tools()}
        schema = tools["json_schema_2020_12_tool"]["inputSchema"]
        await client.call_tool("json_schema_echo", {"schema": schema})


#: The client ID metadata document URL the suite's `auth/basic-cimd` expects as client ID.
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def follow_authorization(url: str) -> str:
    """The redirect step with no user: the mock authorization server approves at once, so the
    answer to the authorization URL is the redirect back, `Location` included."""
    async with httpx.AsyncClient(verify=default_ssl_context()) as http:
        response = await http.get(url)
    if not response.is_redirect:
        raise SystemExit(f"the authorization endpoint answered {response.status_code}, not a redirect")
    return response.headers["location"]


def oauth(context: dict[str, Any]) -> OAuth:
    """OAuth as an application would set it up; the context may name a pre-registered client."""
    clients = {}
    if "client_id" in context and "issuer" in context:
        clients[context["issuer"]] = ClientRegistration(context["client_id"], context.get("client_secret"))
    return OAuth(
        redirect=follow_authorization,
        redirect_uri="http://127.0.0.1:33418/callback",
        clients=clients,
        client_metadata_url=CLIENT_METADATA_URL,
        client_name="mcpref-conformance-client",
    )


async def use_the_tools(url: str, context: dict[str, Any], auth: httpx.Auth | None = None) -> None:
    async with Client(url, client_info=CLIENT_INFO, auth=auth or oauth(context)) as client:
        for tool in await client.list_tools():
            await client.call_tool(tool["name"], sample_arguments(tool["inputSchema"]))


@scenario(
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/dpop",
    "auth/dpop-nonce",
)
async def authorize_then_use_the_tools(url: str, context: dict[str, Any]) -> None:
    """The server answers 401 until the client has a token: discover, register, authorize, retry.
    `authorization-server-migration` moves the server to another authorization server midway;
    in `dpop*` the authorization server offers DPoP, so the token is bound to the client's key."""
    await use_the_tools(url, context)


@scenario(
    "auth/resource-mismatch",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
)
async def refuse_to_authorize(url: str, context: dict[str, Any]) -> None:
    """Something in the flow is forged (the resource, the issuer, `iss`): the client must stop
    before the code or its credentials reach anyone."""
    try:
        await use_the_tools(url, context)
    except AuthorizationError as exc:
        print(f"refused, as it should: {exc}")
        return
    raise SystemExit("the client went ahead with a forged authorization step")


@scenario("auth/scope-retry-limit")
async def give_up_on_scope(url: str, context: dict[str, Any]) -> None:
    """Every call is refused with 403 insufficient_scope, whatever the token: step up a bounded
    number of times, then give up with the 403."""
    try:
        await use_the_tools(url, context)
    except MCPClientError as exc:
        if exc.status_code != 403:
            raise
        print(f"gave up, as it should: {exc}")
        return
    raise SystemExit("the server never refused, so the retry limit was not exercised")


@scenario("auth/client-credentials-basic", "auth/client-credentials-jwt")
async def act_on_its_own_behalf(url: str, context: dict[str, Any]) -> None:
    """No user: the client credentials grant, with a secret or a `private_key_jwt` assertion."""
    registration = ClientRegistration(
        context["client_id"],
        context.get("client_secret"),
        private_key=context.get("private_key_pem"),
        signing_algorithm=context.get("signing_algorithm", "ES256"),
    )
    await use_the_tools(url, context, ClientCredentials(registration))


@scenario("auth/wif-jwt-bearer")
async def present_the_workload_identity(url: str, context: dict[str, Any]) -> None:
    """The platform gave this workload a JWT: it is the grant (RFC 7523)."""
    await use_the_tools(url, context, JWTBearer(context["valid_jwt"], context.get("client_id")))


@scenario("auth/enterprise-managed-authorization")
async def exchange_the_enterprise_id_token(url: str, context: dict[str, Any]) -> None:
    """The user's ID token from the enterprise IdP, exchanged there for an identity assertion
    grant, then taken by the MCP authorization server as a JWT bearer grant."""
    auth = EnterpriseManaged(
        ClientRegistration(context["client_id"], context["client_secret"]),
        id_token=context["idp_id_token"],
        idp_token_endpoint=context["idp_token_endpoint"],
        idp_client_id=context.get("idp_client_id"),
    )
    await use_the_tools(url, context, auth)


def refuse(params: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("this client has no model to sample from")


def decline(params: dict[str, Any]) -> dict[str, Any]:
    return {"action": "decline"}


async def run(name: str, url: str) -> None:
    """Run scenario `name` against the mock server at `url`, with `MCP_CONFORMANCE_CONTEXT`."""
    handler = SCENARIOS.get(name)
    if handler is None:
        raise SystemExit(f"no handler for scenario {name!r}; known: {', '.join(sorted(SCENARIOS))}")
    context = os.environ.get("MCP_CONFORMANCE_CONTEXT")
    await handler(url, json.loads(context) if context else {})
