"""The legacy era over HTTP: a 2025-11-25 client served statelessly, checked against the 2025-11-25 schema."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from mcpref import MCPError, ResourceNotFound, Server, StreamableHTTP
from mcpref.jsonrpc import INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, Request
from mcpref.legacy import handle_legacy, is_legacy_request, legacy_capabilities, legacy_shape, negotiate
from mcpref.mrtr import InputRequired, elicit_form
from mcpref.validation import check_message
from tests.conftest import ACCEPT, error_answer, mcp_body, mcp_headers, running, sse_messages

server = Server("legacy-test", "2", instructions="Be kind.", page_size=1)


@server.tool(input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
async def echo(message: str, ctx) -> str:  # type: ignore[no-untyped-def]
    await ctx.report_progress(1, 1)
    return message


@server.tool()
def confirm() -> InputRequired:
    """Needs the user: impossible for a legacy client on a stateless server."""
    return InputRequired({"ok": elicit_form("Sure?", {"ok": {"type": "boolean"}})})


#: Calls of `together` in flight at once; each answers only when TOGETHER of them are.
TOGETHER = 3
in_flight: list[int] = []


@server.tool()
async def together(ctx) -> str:  # type: ignore[no-untyped-def]
    """Answers only once TOGETHER calls are open at the same time, each on its own stream."""
    in_flight.append(1)
    await ctx.report_progress(len(in_flight), TOGETHER)
    for _ in range(500):
        if len(in_flight) >= TOGETHER:
            return "together"
        await asyncio.sleep(0.01)
    return "alone"


@server.prompt()
def ask() -> InputRequired:
    return InputRequired({"ok": elicit_form("Sure?", {"ok": {"type": "boolean"}})})


@server.resource("memo://a", mime_type="text/plain")
def memo() -> str:
    return "a"


@server.resource_template("notes://{name}")
def note(name: str) -> str:
    """Finds no note; says so by type, or (`vague`) only by a `uri` in an error's data."""
    if name == "vague":
        raise MCPError(INVALID_PARAMS, "Invalid params: no note here", {"uri": f"notes://{name}"})
    raise ResourceNotFound(f"notes://{name}")


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with running(StreamableHTTP(server)) as url, httpx.Client(base_url=url, timeout=10) as client:
        yield client


def legacy_post(
    http: httpx.Client,
    method: str,
    params: dict[str, Any] | None = None,
    *,
    version: str | None = "2025-11-25",
    id: int = 1,
) -> httpx.Response:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if version:
        headers["MCP-Protocol-Version"] = version
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        body["params"] = params
    response = http.post("/mcp", json=body, headers=headers)
    messages = sse_messages(response.text) if "event-stream" in response.headers["content-type"] else [response.json()]
    for message in messages:
        check_message(message, method if "id" in message else None, revision="2025-11-25")
    response.messages = messages  # type: ignore[attr-defined]
    return response


def test_initialize_answers_without_minting_a_session(http: httpx.Client) -> None:
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
    response = legacy_post(http, "initialize", params, version=None)
    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers
    assert response.json()["result"] == {
        "protocolVersion": "2025-11-25",
        "capabilities": {"prompts": {}, "resources": {}, "tools": {}},
        "serverInfo": {"name": "legacy-test", "version": "2"},
        "instructions": "Be kind.",
    }


def test_initialized_notification_is_202(http: httpx.Client) -> None:
    response = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers={"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": "2025-11-25"},
    )
    assert response.status_code == 202


def test_an_older_version_is_echoed_and_an_unknown_one_gets_the_newest(http: httpx.Client) -> None:
    for asked, answered in [("2025-06-18", "2025-06-18"), ("2024-11-05", "2025-11-25")]:
        params = {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}
        assert legacy_post(http, "initialize", params, version=None).json()["result"]["protocolVersion"] == answered


def test_an_initialize_without_params_is_refused_naming_what_it_needs(http: httpx.Client) -> None:
    """InitializeRequest requires params with protocolVersion, capabilities and clientInfo
    (2025-11-25 schema): -32602 at 200, as every legacy error, and no result to build on."""
    error = error_answer(legacy_post(http, "initialize", None, version=None), 200)
    assert error == {
        "code": -32602,
        "message": "Invalid params: initialize needs params.protocolVersion (a string), params.capabilities "
        "(an object), params.clientInfo (an object with a string name and version)",
    }
    nameless = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"version": "1"}}
    error = error_answer(legacy_post(http, "initialize", nameless, version=None), 200)
    assert error["message"] == (
        "Invalid params: initialize needs params.clientInfo (an object with a string name and version)"
    )


def test_a_body_without_meta_under_an_unsupported_version_header_learns_the_supported_ones(
    http: httpx.Client,
) -> None:
    """streamable-http.mdx §Protocol Version Header: a version the server does not implement is
    400 and -32022 listing what it supports, whatever the body lacks besides."""
    error = error_answer(legacy_post(http, "tools/list", version="2024-01-01"), 400)
    assert error == {
        "code": -32022,
        "message": "Unsupported protocol version: 2024-01-01 (this server supports 2026-07-28)",
        "data": {"supported": ["2026-07-28"], "requested": "2024-01-01"},
    }


@pytest.mark.parametrize(("token", "named"), [(True, "a boolean"), ({"n": 1}, "an object"), (1.5, "the number 1.5")])
def test_a_legacy_progress_token_that_is_no_string_or_integer_is_refused(
    http: httpx.Client, token: Any, named: str
) -> None:
    params = {"name": "echo", "arguments": {"message": "x"}, "_meta": {"progressToken": token}}
    error = error_answer(legacy_post(http, "tools/call", params), 200)
    assert error == {
        "code": -32602,
        "message": f"Invalid params: params._meta.progressToken must be a string or an integer, not {named}",
    }


def test_ping_is_answered(http: httpx.Client) -> None:
    assert legacy_post(http, "ping").json()["result"] == {}


def test_results_have_the_legacy_shape(http: httpx.Client) -> None:
    page = legacy_post(http, "tools/list").json()["result"]
    assert set(page) == {"tools", "nextCursor"}
    second = legacy_post(http, "tools/list", {"cursor": page["nextCursor"]}).json()["result"]
    assert [tool["name"] for tool in second["tools"]] == ["confirm"]
    called = legacy_post(http, "tools/call", {"name": "echo", "arguments": {"message": "hi"}}).json()["result"]
    assert called == {"content": [{"type": "text", "text": "hi"}]}
    read = legacy_post(http, "resources/read", {"uri": "memo://a"}).json()["result"]
    assert read == {"contents": [{"uri": "memo://a", "mimeType": "text/plain", "text": "a"}]}


def test_progress_streams_in_the_legacy_era_too(http: httpx.Client) -> None:
    response = legacy_post(
        http, "tools/call", {"name": "echo", "arguments": {"message": "x"}, "_meta": {"progressToken": 3}}
    )
    assert [m.get("method") for m in response.messages] == ["notifications/progress", None]  # type: ignore[attr-defined]


def test_what_needs_a_session_is_refused_plainly(http: httpx.Client) -> None:
    tool = legacy_post(http, "tools/call", {"name": "confirm", "arguments": {}}).json()["result"]
    assert tool["isError"] is True
    assert "needs input from the client (elicitation)" in tool["content"][0]["text"]
    assert "2026-07-28" in tool["content"][0]["text"]
    prompt = legacy_post(http, "prompts/get", {"name": "ask"})
    assert error_answer(prompt, 200)["code"] == -32600
    for method in ("resources/subscribe", "resources/unsubscribe", "logging/setLevel", "server/discover"):
        error = error_answer(legacy_post(http, method, {}), 200)
        assert error["code"] == -32601
        assert ("needs a session" in error["message"]) is (method != "server/discover")


def test_a_missing_resource_has_the_legacy_code(http: httpx.Client) -> None:
    error = error_answer(legacy_post(http, "resources/read", {"uri": "memo://nowhere"}), 200)
    assert error["code"] == -32002 and error["data"] == {"uri": "memo://nowhere"}
    # Other invalid params keep -32602.
    assert error_answer(legacy_post(http, "resources/read", {"uri": 7}), 200)["code"] == -32602


def test_a_handler_that_finds_nothing_gets_the_legacy_code_too(http: httpx.Client) -> None:
    error = legacy_post(http, "resources/read", {"uri": "notes://gone"}).json()["error"]
    assert error == {"code": -32002, "message": "Resource not found: notes://gone", "data": {"uri": "notes://gone"}}


def test_not_found_is_known_by_its_type_not_by_a_uri_in_the_data(http: httpx.Client) -> None:
    error = legacy_post(http, "resources/read", {"uri": "notes://vague"}).json()["error"]
    assert (error["code"], error["data"]) == (-32602, {"uri": "notes://vague"})


def test_a_uri_too_long_to_echo_is_still_not_found(http: httpx.Client) -> None:
    error = legacy_post(http, "resources/read", {"uri": "memo://" + "x" * 3000}).json()["error"]
    assert error["code"] == -32002 and "data" not in error


def test_concurrent_requests_each_get_their_own_stream(http: httpx.Client) -> None:
    # What server-sse-multiple-streams would check if it did not stop for want of a session id.
    in_flight.clear()

    def call(token: int) -> httpx.Response:
        params = {"name": "together", "arguments": {}, "_meta": {"progressToken": token}}
        return legacy_post(http, "tools/call", params, id=token)

    with ThreadPoolExecutor(TOGETHER) as pool:
        responses = list(pool.map(call, range(1, TOGETHER + 1)))
    for token, response in enumerate(responses, start=1):
        progress, answer = response.messages  # type: ignore[attr-defined]
        assert response.headers["content-type"].startswith("text/event-stream")
        assert progress["params"]["progressToken"] == token
        assert answer["id"] == token and answer["result"]["content"][0]["text"] == "together"


def test_a_modern_request_on_the_same_endpoint_is_still_modern(http: httpx.Client) -> None:
    response = http.post("/mcp", json=mcp_body("tools/list"), headers=mcp_headers("tools/list"))
    assert response.json()["result"]["resultType"] == "complete"


def test_negotiate_and_shapes() -> None:
    assert negotiate("2025-06-18") == "2025-06-18" and negotiate(None) == "2025-11-25"
    assert negotiate("2025-03-26") == "2025-11-25"
    assert legacy_capabilities({"tools": {"listChanged": True}, "completions": {}}) == {"tools": {}, "completions": {}}
    # No `logging` (logging/setLevel is -32601, no log messages are sent) and nothing 2026-07-28 added.
    modern = {"resources": {"subscribe": True}, "logging": {}, "extensions": {"io.example/x": {}}}
    assert legacy_capabilities(modern) == {"resources": {}}
    shaped = legacy_shape(
        "tools/list",
        {
            "resultType": "complete",
            "tools": [],
            "ttlMs": 0,
            "cacheScope": "private",
            "_meta": {"io.modelcontextprotocol/serverInfo": {}, "x/y": 1},
        },
    )
    assert shaped == {"tools": [], "_meta": {"x/y": 1}}


# -- handle_legacy called directly: what it passes to the dispatcher, what it makes of the answer --

direct = Server("legacy-direct", "1")


@direct.tool()
def probe(ctx) -> str:  # type: ignore[no-untyped-def]
    """Says what the dispatcher was told about the request."""
    meta = ctx.meta
    return json.dumps([meta.protocol_version, meta.raw, meta.progress_token, ctx.principal, meta.client_capabilities])


@direct.tool()
def needs_two() -> str:
    raise MCPError(
        MISSING_REQUIRED_CLIENT_CAPABILITY, "m", {"requiredCapabilities": {"sampling": {}, "elicitation": {}}}
    )


@direct.tool()
def needs_something() -> str:
    raise MCPError(MISSING_REQUIRED_CLIENT_CAPABILITY, "m")


@direct.tool()
def again() -> InputRequired:
    """Asks for nothing but another round (state only): still input a legacy client cannot give."""
    return InputRequired({}, state="s")


def legacy_call(
    method: str, params: dict[str, Any], version: str | None = "2025-11-25", principal: str | None = None
) -> dict[str, Any]:
    return asyncio.run(handle_legacy(direct, Request(1, method, params), version, principal=principal))


def probed(params: dict[str, Any], version: str | None = "2025-11-25", principal: str | None = None) -> list[Any]:
    result = legacy_call("tools/call", {"name": "probe", "arguments": {}, **params}, version, principal)
    return json.loads(result["content"][0]["text"])  # type: ignore[no-any-return]


def test_a_legacy_request_is_served_as_its_version_with_no_client_capabilities() -> None:
    assert probed({}, "2025-06-18")[0] == "2025-06-18"
    assert probed({}, None)[0] == "2025-11-25"  # no header: the newest legacy revision
    assert probed({})[4] == {}


def test_a_legacy_requests_meta_and_principal_reach_the_handler() -> None:
    assert probed({"_meta": {"progressToken": "t", "x/y": 1}}, principal="alice")[1:4] == [
        {"progressToken": "t", "x/y": 1},
        "t",
        "alice",
    ]
    assert probed({})[1:4] == [{}, None, None]


@pytest.mark.parametrize("meta", ["no object", None, [1]])
def test_a_legacy_meta_that_is_no_object_is_invalid_params(meta: Any) -> None:
    """2025-11-25's schema types `params._meta` as an object, as 2026-07-28's does."""
    with pytest.raises(MCPError) as caught:
        probed({"_meta": meta})
    assert (caught.value.code, caught.value.message) == (
        INVALID_PARAMS,
        "Invalid params: params._meta must be an object",
    )


@pytest.mark.parametrize("token", ["t", 3])
def test_a_string_or_integer_progress_token_is_kept(token: Any) -> None:
    assert probed({"_meta": {"progressToken": token}})[2] == token


@pytest.mark.parametrize(("token", "named"), [(True, "a boolean"), (1.5, "the number 1.5"), ([1], "an array")])
def test_any_other_progress_token_is_invalid_params_in_the_legacy_era_too(token: Any, named: str) -> None:
    """2025-11-25's schema says `["string", "integer"]` too: refused, not ignored."""
    with pytest.raises(MCPError) as caught:
        probed({"_meta": {"progressToken": token}})
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message.endswith(f"progressToken must be a string or an integer, not {named}")


def test_a_tool_that_needs_a_capability_says_which_in_its_result() -> None:
    result = legacy_call("tools/call", {"name": "needs_two", "arguments": {}})
    assert result == {
        "content": [
            {
                "type": "text",
                "text": "Cannot complete: this request needs input from the client (elicitation, sampling), "
                "which only 2026-07-28 clients can give a stateless server.",
            }
        ],
        "isError": True,
    }
    unnamed = legacy_call("tools/call", {"name": "needs_something", "arguments": {}})
    assert "needs input from the client (a capability)," in unnamed["content"][0]["text"]


def test_what_needs_a_session_says_why() -> None:
    with pytest.raises(MCPError) as caught:
        legacy_call("logging/setLevel", {"level": "info"})
    assert (caught.value.code, caught.value.message) == (
        -32601,
        "Method not found: logging/setLevel needs a session (the level would have to be kept for later requests)",
    )


def test_a_modern_request_is_never_legacy_whatever_its_header() -> None:
    modern = Request(1, "tools/list", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})
    assert not is_legacy_request(modern, "2025-11-25")
    assert not is_legacy_request(Request(1, "initialize", dict(modern.params)), None)
    assert is_legacy_request(Request(1, "tools/list", {"_meta": {}}), "2025-11-25")
    assert is_legacy_request(Request(1, "initialize", {}), None)
    assert not is_legacy_request(Request(1, "tools/list", {}), "2026-07-28")


def test_an_input_required_result_becomes_a_tool_error_or_a_refusal() -> None:
    asking = {
        "resultType": "input_required",
        "inputRequests": {"b": {"method": "sampling/createMessage"}, "a": {"method": "elicitation/create"}},
    }
    assert legacy_shape("tools/call", asking) == {
        "content": [
            {
                "type": "text",
                "text": "Cannot complete: this request needs input from the client (elicitation/create, "
                "sampling/createMessage), which only 2026-07-28 clients can give a stateless server.",
            }
        ],
        "isError": True,
    }
    with pytest.raises(MCPError) as caught:
        legacy_shape("prompts/get", {"resultType": "input_required", "requestState": "s"})
    assert (caught.value.code, caught.value.message) == (
        -32600,
        "Invalid Request: this request needs input from the client (another round), "
        "which only 2026-07-28 clients can give a stateless server",
    )


def test_a_result_without_meta_gets_none() -> None:
    assert legacy_shape("tools/list", {"resultType": "complete", "tools": []}) == {"tools": []}
    assert legacy_shape("tools/list", {"tools": [], "_meta": {"io.modelcontextprotocol/serverInfo": {}}}) == {
        "tools": []
    }


def test_a_tool_that_asks_for_another_round_gets_a_tool_error() -> None:
    result = legacy_call("tools/call", {"name": "again", "arguments": {}})
    assert result["isError"] is True
    assert "needs input from the client (another round)" in result["content"][0]["text"]
