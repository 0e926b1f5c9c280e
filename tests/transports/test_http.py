"""Streamable HTTP under a real uvicorn on loopback: every status and error the transport owns.

Each answer is checked against the official schema by the `MCPClient` in conftest.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import time
from typing import Any

import httpx
import pytest

from mcpref import OriginPolicy, Server, StreamableHTTP, ToolError
from mcpref.jsonrpc import MCPError
from mcpref.meta import SERVER_INFO_KEY
from mcpref.mrtr import InputRequired, elicit_form
from mcpref.transports import http
from mcpref.validation import check_message
from tests.conftest import (
    ACCEPT,
    META,
    VERSION,
    MCPClient,
    error_answer,
    mcp_body,
    mcp_headers,
    running,
    sse_messages,
)

server = Server("http-test-server", "0.1.0", page_size=2)


@server.tool(input_schema={"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
def echo(message: str) -> str:
    return message


@server.tool(
    input_schema={
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "dry_run": {"type": "boolean", "x-mcp-header": "Dry-Run"},
        },
        "required": ["region"],
    }
)
def deploy(region: str, priority: int = 0, dry_run: bool = False) -> str:
    return f"{region}:{priority}:{dry_run}"


@server.tool(requires={"elicitation": {}})
def confirm() -> str:
    return "confirmed"


@server.tool()
def broken() -> str:
    raise ToolError("the disk is full")


@server.tool()
def ask_first(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
    """Needs a form answer; it says so only when it runs (no `requires`)."""
    if ctx.input_response("ok") is None:
        return InputRequired({"ok": elicit_form("Go ahead?", {"go": {"type": "boolean"}})})
    return "went ahead"


@server.tool()
async def slow(ctx) -> str:  # type: ignore[no-untyped-def]
    await ctx.report_progress(1, 2, "halfway")
    await ctx.log("info", "still going")
    await ctx.log("debug", "too chatty to send at info")
    await ctx.report_progress(2, 2)
    return "done"


cancelled = asyncio.Event()


@server.tool()
async def forever(ctx) -> str:  # type: ignore[no-untyped-def]
    await ctx.report_progress(0)
    try:
        await asyncio.sleep(30)
    except asyncio.CancelledError:
        cancelled.set()
        raise
    return "never"


@server.resource("memo://greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello"


app = StreamableHTTP(server, max_body_bytes=4096)


def raw_post(client: MCPClient, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    sent = {"Content-Type": "application/json", "Accept": ACCEPT}
    sent.update(headers or {})
    return client.http.post("/mcp", content=body, headers=sent)


# -- the happy paths -------------------------------------------------------------------------


def test_discover_answers_with_json_and_no_session(client: MCPClient) -> None:
    response = client.post("server/discover")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    assert "mcp-session-id" not in response.headers
    result = response.json()["result"]
    assert result["supportedVersions"] == [VERSION]
    # Its tools log (ctx.log), so it declares `logging` (server/utilities/logging.mdx §Capabilities).
    assert result["capabilities"] == {
        "resources": {"subscribe": True, "listChanged": True},
        "tools": {"listChanged": True},
        "logging": {},
    }
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "http-test-server", "version": "0.1.0"}


def test_tools_list_pages_through_every_tool_in_order(client: MCPClient) -> None:
    names, cursor = [], None
    while True:
        result = client.result("tools/list", {} if cursor is None else {"cursor": cursor})
        names += [tool["name"] for tool in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    assert names == ["echo", "deploy", "confirm", "broken", "ask_first", "slow", "forever"]


def test_tools_call_returns_text_content(client: MCPClient) -> None:
    result = client.result("tools/call", {"name": "echo", "arguments": {"message": "hi"}})
    assert result["content"] == [{"type": "text", "text": "hi"}]
    assert result["resultType"] == "complete"
    assert "ttlMs" not in result


def test_session_id_sent_by_a_client_is_ignored(client: MCPClient) -> None:
    headers = client.headers("tools/list", **{"Mcp-Session-Id": "abc", "Last-Event-ID": "7"})
    response = client.post("tools/list", headers=headers)
    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers


def test_notification_is_accepted_with_202_and_empty_body(client: MCPClient) -> None:
    body = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    response = raw_post(client, body)
    assert response.status_code == 202
    assert response.content == b""


def test_progress_token_turns_the_answer_into_an_sse_stream(client: MCPClient) -> None:
    meta = {**META, "progressToken": "p1", "io.modelcontextprotocol/logLevel": "info"}
    response = client.post("tools/call", {"name": "slow", "arguments": {}}, meta=meta)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/event-stream"
    assert response.headers["x-accel-buffering"] == "no"
    methods = [m.get("method", "response") for m in response.messages]  # type: ignore[attr-defined]
    assert methods == ["notifications/progress", "notifications/message", "notifications/progress", "response"]
    assert response.messages[0]["params"] == {"progressToken": "p1", "progress": 1, "total": 2, "message": "halfway"}  # type: ignore[attr-defined]
    assert response.messages[-1]["result"]["content"][0]["text"] == "done"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("token", "named"), [(True, "a boolean"), ([7], "an array"), (7.5, "the number 7.5")])
def test_a_progress_token_that_is_no_string_or_integer_is_refused_before_anything_streams(
    client: MCPClient, token: Any, named: str
) -> None:
    """basic/patterns/progress.mdx: a token MUST be a string or an integer. Refused as a bad log
    level is (-32602, 200, one JSON object), not silently served without progress."""
    error = client.error(
        "tools/call", {"name": "slow", "arguments": {}}, meta={**META, "progressToken": token}, status=200
    )
    assert error == {
        "code": -32602,
        "message": f"Invalid params: params._meta.progressToken must be a string or an integer, not {named}",
    }


def test_no_log_messages_without_log_level(client: MCPClient) -> None:
    response = client.post("tools/call", {"name": "slow", "arguments": {}}, meta={**META, "progressToken": 7})
    methods = [m.get("method") for m in response.messages]  # type: ignore[attr-defined]
    assert "notifications/message" not in methods
    assert methods.count("notifications/progress") == 2


def test_closing_the_stream_cancels_the_tool(base_url: str) -> None:
    cancelled.clear()
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/call",
        "params": {"name": "forever", "arguments": {}, "_meta": {**META, "progressToken": "f"}},
    }
    headers = MCPClient(httpx.Client()).headers("tools/call", "forever")
    with (
        httpx.Client(base_url=base_url, timeout=10) as http,
        http.stream("POST", "/mcp", json=body, headers=headers) as response,
    ):
        first = next(response.iter_lines())
        assert first == "event: message"
    deadline = 50
    while not cancelled.is_set() and deadline:
        asyncio.run(asyncio.sleep(0.1))
        deadline -= 1
    assert cancelled.is_set(), "the tool kept running after the client closed the stream"


def test_a_tool_failure_is_a_result_with_is_error(client: MCPClient) -> None:
    result = client.result("tools/call", {"name": "broken", "arguments": {}})
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "the disk is full"}]


def test_resources_read(client: MCPClient) -> None:
    result = client.result("resources/read", {"uri": "memo://greeting"})
    assert result["contents"] == [{"uri": "memo://greeting", "mimeType": "text/plain", "text": "hello"}]
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


# -- HTTP-level refusals ---------------------------------------------------------------------


@pytest.mark.parametrize("verb", ["GET", "DELETE", "PUT"])
def test_only_post_is_allowed(client: MCPClient, verb: str) -> None:
    response = client.http.request(verb, "/mcp", headers={"Accept": ACCEPT})
    assert error_answer(response, 405)["code"] == -32600
    assert response.headers["allow"] == "POST"


def test_other_paths_are_404(client: MCPClient) -> None:
    assert client.http.post("/elsewhere", json={}).status_code == 404
    # even a well-formed request: the path alone decides, before any MCP handling
    body = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}}
    response = client.http.post("/elsewhere", json=body, headers=client.headers("server/discover"))
    assert (response.status_code, response.text) == (404, "Not Found")


@pytest.mark.parametrize(
    "origin", ["https://evil.example", "null", "http://localhost.evil.example", "http://127.0.0.1:bad"]
)
def test_foreign_origin_is_403(client: MCPClient, origin: str) -> None:
    response = client.post("tools/list", headers=client.headers("tools/list", Origin=origin))
    assert error_answer(response, 403)["code"] == -32600


@pytest.mark.parametrize("origin", ["http://localhost:5173", "http://127.0.0.1:8000", "http://[::1]:3000"])
def test_loopback_origin_is_allowed(client: MCPClient, origin: str) -> None:
    assert client.post("tools/list", headers=client.headers("tools/list", Origin=origin)).status_code == 200


def test_configured_origin_is_allowed(mcp_client_for) -> None:  # type: ignore[no-untyped-def]
    client = mcp_client_for(StreamableHTTP(server, origins=OriginPolicy(["https://app.example"], allow_loopback=False)))
    assert (
        client.post("tools/list", headers=client.headers("tools/list", Origin="https://app.example")).status_code == 200
    )
    assert client.post("tools/list", headers=client.headers("tools/list", Origin="http://localhost")).status_code == 403


def test_origin_allowlist_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_ALLOWED_ORIGINS", "https://a.example, https://b.example")
    policy = OriginPolicy.from_env()
    assert policy.allows("https://b.example") and not policy.allows("https://c.example")


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded"])
def test_wrong_content_type_is_415(client: MCPClient, content_type: str | None) -> None:
    headers = {"Accept": ACCEPT}
    if content_type:
        headers["Content-Type"] = content_type
    response = client.http.post("/mcp", content=b"{}", headers=headers)
    assert error_answer(response, 415)["code"] == -32600


def test_content_type_with_charset_is_fine(client: MCPClient) -> None:
    headers = client.headers("tools/list", **{"Content-Type": "application/json; charset=utf-8"})
    assert client.post("tools/list", headers=headers).status_code == 200


@pytest.mark.parametrize("accept", [None, "application/json", "text/event-stream", "text/html"])
def test_accept_without_both_types_is_406(client: MCPClient, accept: str | None) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": META}}
    request = client.http.build_request("POST", "/mcp", json=body, headers=client.headers("tools/list"))
    del request.headers["Accept"]  # httpx would otherwise send its default, */*
    if accept:
        request.headers["Accept"] = accept
    response = client.http.send(request)
    assert error_answer(response, 406)["code"] == -32600


def test_wildcard_accept_covers_both(client: MCPClient) -> None:
    assert client.post("tools/list", headers=client.headers("tools/list", Accept="*/*")).status_code == 200


def test_oversized_body_is_413(client: MCPClient) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"pad": "x" * 5000}}).encode()
    response = raw_post(client, body)
    assert error_answer(response, 413)["code"] == -32600
    assert response.headers["connection"] == "close"  # the rest of the body is never read


def test_oversized_body_without_content_length_is_413(client: MCPClient) -> None:
    def chunks():  # type: ignore[no-untyped-def]
        for _ in range(10):
            yield b" " * 1000

    response = client.http.post(
        "/mcp", content=chunks(), headers={"Content-Type": "application/json", "Accept": ACCEPT}
    )
    assert response.status_code == 413


# -- framing errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", -32700),
        (b"", -32700),
        (b"\xff\xfe{}", -32700),
        (b"[" * 1_000 + b"]" * 1_000, -32700),
        (b'{"a":' * 200 + b"1" + b"}" * 200, -32700),
        (b"[]", -32600),
        (b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', -32600),
        (b'"just a string"', -32600),
        (b"42", -32600),
        (b'{"jsonrpc":"1.0","id":1,"method":"tools/list"}', -32600),
        (b'{"id":1,"method":"tools/list"}', -32600),
        (b'{"jsonrpc":"2.0","id":1}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":7}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}', -32600),
        (b'{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{}}', -32600),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{}}', -32600),
        (b'{"jsonrpc":"2.0","id":true,"method":"tools/list","params":{}}', -32600),
        (b'{"jsonrpc":"2.0","id":{},"method":"tools/list","params":{}}', -32600),
        (b'{"jsonrpc":"2.0","id":1,"result":{}}', -32600),
    ],
)
def test_malformed_messages_get_400_and_a_jsonrpc_error(client: MCPClient, body: bytes, code: int) -> None:
    response = raw_post(client, body)
    assert error_answer(response, 400)["code"] == code
    assert response.json()["jsonrpc"] == "2.0"
    assert "Traceback" not in response.text


def test_framing_error_echoes_a_readable_id(client: MCPClient) -> None:
    response = raw_post(client, b'{"jsonrpc":"2.0","id":"abc","method":7}')
    assert response.json()["id"] == "abc"


# -- _meta, versions, capabilities ----------------------------------------------------------


def test_missing_meta_is_400_invalid_params(client: MCPClient) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}).encode()
    response = raw_post(client, body, client.headers("tools/list"))
    error = error_answer(response, 400)
    assert response.json() == {"jsonrpc": "2.0", "id": 3, "error": error}
    assert error["code"] == -32602


@pytest.mark.parametrize(
    "meta",
    [
        {"io.modelcontextprotocol/clientCapabilities": {}},
        {"io.modelcontextprotocol/protocolVersion": VERSION},
        {"io.modelcontextprotocol/protocolVersion": 20260728, "io.modelcontextprotocol/clientCapabilities": {}},
        {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientCapabilities": []},
    ],
)
def test_incomplete_meta_is_400_invalid_params(client: MCPClient, meta: dict) -> None:
    error = client.error("tools/list", meta=meta, status=400)
    assert error["code"] == -32602


def test_no_params_at_all_is_400_invalid_params(client: MCPClient) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}).encode()
    response = raw_post(client, body, client.headers("tools/list"))
    assert error_answer(response, 400)["code"] == -32602


def test_unsupported_version_is_400_with_supported_list(client: MCPClient) -> None:
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    headers = client.headers("tools/list", **{"MCP-Protocol-Version": "2099-01-01"})
    error = client.error("tools/list", meta=meta, headers=headers, status=400)
    assert error["code"] == -32022
    assert error["data"] == {"supported": [VERSION], "requested": "2099-01-01"}


def test_a_header_contradicting_an_unsupported_body_version_is_a_mismatch_first(client: MCPClient) -> None:
    # The official conformance suite (server-stateless) sends body v999.0.0 with header
    # 2026-07-28 and expects -32020: the header must agree with the body before the
    # version is judged.
    meta = {**META, "io.modelcontextprotocol/protocolVersion": "v999.0.0"}
    error = client.error("server/discover", meta=meta, headers=client.headers("server/discover"), status=400)
    assert error["code"] == -32020


def test_initialize_on_a_modern_only_server_lists_the_supported_versions(mcp_client_for) -> None:  # type: ignore[no-untyped-def]
    modern_only = Server("modern-only", "1", serve_legacy=False)
    client = mcp_client_for(StreamableHTTP(modern_only))
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}},
    }
    response = client.http.post("/mcp", json=body, headers={"Content-Type": "application/json", "Accept": ACCEPT})
    error = error_answer(response, 400)
    assert error["code"] == -32022
    assert error["data"] == {"supported": [VERSION], "requested": "2025-11-25"}


def test_missing_client_capability_is_400_with_required_capabilities(client: MCPClient) -> None:
    error = client.error("tools/call", {"name": "confirm", "arguments": {}}, status=400)
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}


@pytest.mark.parametrize("streamed", [{"progressToken": "p"}, {"io.modelcontextprotocol/logLevel": "info"}])
def test_a_capability_found_missing_while_running_is_still_400_on_a_would_be_stream(
    client: MCPClient, streamed: dict
) -> None:
    """basic/index.mdx: a missing client capability is -32021 with HTTP 400, also when the request
    asked for progress or logs. The stream opens on the first notification, so a handler that
    finds the capability missing before sending any is answered with the status, not in a 200 stream."""
    response = client.post("tools/call", {"name": "ask_first", "arguments": {}}, meta={**META, **streamed})
    assert (response.status_code, response.headers["content-type"]) == (400, "application/json")
    error = response.messages[-1]["error"]  # type: ignore[attr-defined]
    assert error["code"] == -32021
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_a_stream_that_sent_nothing_before_the_answer_is_still_a_stream(client: MCPClient) -> None:
    """A request that asked for progress gets an SSE answer even when the handler reported none."""
    response = client.post(
        "tools/call", {"name": "echo", "arguments": {"message": "hi"}}, meta={**META, "progressToken": 3}
    )
    assert (response.status_code, response.headers["content-type"]) == (200, "text/event-stream")
    assert response.messages[-1]["result"]["content"][0]["text"] == "hi"  # type: ignore[attr-defined]


def test_declared_client_capability_is_served(client: MCPClient) -> None:
    meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
    assert (
        client.result("tools/call", {"name": "confirm", "arguments": {}}, meta=meta)["content"][0]["text"]
        == "confirmed"
    )


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "nope/nothing", "prompts/list"])
def test_unknown_removed_or_unoffered_methods_are_404(client: MCPClient, method: str) -> None:
    error = client.error(method, status=404)
    assert error["code"] == -32601


def test_unknown_tool_is_invalid_params(client: MCPClient) -> None:
    error = client.error("tools/call", {"name": "nope", "arguments": {}}, status=200)
    assert error["code"] == -32602


def test_bad_arguments_are_a_tool_execution_error(client: MCPClient) -> None:
    """200 with `isError: true`, so the model reads what to fix (server/tools.mdx §Error Handling)."""
    response = client.post("tools/call", {"name": "echo", "arguments": {"message": 5}})
    assert response.status_code == 200
    result = response.messages[-1]["result"]  # type: ignore[attr-defined]
    assert result["isError"] is True
    assert "at message: 5 is not of type 'string'" in result["content"][0]["text"]


def test_bad_cursor_is_invalid_params(client: MCPClient) -> None:
    assert client.error("tools/list", {"cursor": "bm9wZQ"}, status=200)["code"] == -32602


def test_missing_resource_is_invalid_params_with_the_uri(client: MCPClient) -> None:
    error = client.error("resources/read", {"uri": "memo://missing"}, status=200)
    assert error["code"] == -32602
    assert error["data"] == {"uri": "memo://missing"}


# -- mirrored headers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "change",
    [
        {"MCP-Protocol-Version": None},
        {"MCP-Protocol-Version": "2025-11-25"},
        {"Mcp-Method": None},
        {"Mcp-Method": "tools/list"},
        {"Mcp-Method": "TOOLS/CALL"},
        {"Mcp-Name": None},
        {"Mcp-Name": "deploy2"},
        {"Mcp-Name": "=?base64?ZGVwbG95?"},
        {"Mcp-Name": "=?base64?!!!?="},
        {"Mcp-Param-Region": None},
        {"Mcp-Param-Region": "us-west"},
        {"Mcp-Param-Priority": "3"},
        {"Mcp-Param-Priority": "high"},
        {"Mcp-Param-Dry-Run": "True"},
    ],
)
def test_header_that_disagrees_with_the_body_is_400_header_mismatch(client: MCPClient, change: dict) -> None:
    headers = client.headers(
        "tools/call",
        "deploy",
        **{"Mcp-Param-Region": "eu-west", "Mcp-Param-Priority": "2", "Mcp-Param-Dry-Run": "true"},
    )
    for name, value in change.items():
        if value is None:
            del headers[name]
        else:
            headers[name] = value
    params = {"name": "deploy", "arguments": {"region": "eu-west", "priority": 2, "dry_run": True}}
    error = client.error("tools/call", params, headers=headers, status=400)
    assert error["code"] == -32020


def test_headers_that_match_are_served_and_names_are_case_insensitive(client: MCPClient) -> None:
    headers = {
        "content-type": "application/json",
        "accept": ACCEPT,
        "mcp-protocol-version": VERSION,
        "MCP-METHOD": "tools/call",
        "mcp-name": "deploy",
        "MCP-PARAM-REGION": "eu-west",
        "mcp-param-priority": "02",
    }
    result = client.result(
        "tools/call", {"name": "deploy", "arguments": {"region": "eu-west", "priority": 2}}, headers=headers
    )
    assert result["content"][0]["text"] == "eu-west:2:False"


def test_base64_header_values_are_decoded_before_comparing(client: MCPClient) -> None:
    region = "Zürich "
    headers = client.headers("tools/call", "deploy", **{"Mcp-Param-Region": "=?base64?WsO8cmljaCA=?="})
    assert client.result("tools/call", {"name": "deploy", "arguments": {"region": region}}, headers=headers)


def test_param_header_for_an_absent_argument_is_a_mismatch(client: MCPClient) -> None:
    headers = client.headers("tools/call", "deploy", **{"Mcp-Param-Region": "eu", "Mcp-Param-Priority": "1"})
    error = client.error("tools/call", {"name": "deploy", "arguments": {"region": "eu"}}, headers=headers, status=400)
    assert error["code"] == -32020


def test_resources_read_mirrors_the_uri_in_mcp_name(client: MCPClient) -> None:
    headers = client.headers("resources/read", "memo://other")
    assert client.error("resources/read", {"uri": "memo://greeting"}, headers=headers, status=400)["code"] == -32020


def test_sse_body_frames_are_well_formed(client: MCPClient) -> None:
    response = client.post(
        "tools/call", {"name": "echo", "arguments": {"message": "a\nb"}}, meta={**META, "progressToken": 1}
    )
    blocks = [block for block in response.text.split("\n\n") if block]
    assert all(block.startswith("event: message\ndata: ") for block in blocks)
    assert sse_messages(response.text)[-1]["result"]["content"][0]["text"] == "a\nb"


def test_initialize_with_modern_meta_is_a_removed_method(client: MCPClient) -> None:
    params = {"protocolVersion": "2026-07-28", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}
    assert client.error("initialize", params, status=404)["code"] == -32601


# -- the disconnect watch on its own ----------------------------------------------------------

from mcpref.transports.http import _ClientLeft, _unless_client_leaves  # noqa: E402


def _receiver(disconnect: asyncio.Event):  # type: ignore[no-untyped-def]
    async def receive() -> dict[str, str]:
        await disconnect.wait()
        return {"type": "http.disconnect"}

    return receive


def test_work_that_answers_at_once_needs_no_watcher() -> None:
    async def main() -> tuple[str, int]:
        tasks_before = len(asyncio.all_tasks())

        async def work() -> str:
            return "done"

        result = await _unless_client_leaves(work(), _receiver(asyncio.Event()))
        return result, len(asyncio.all_tasks()) - tasks_before

    assert asyncio.run(main()) == ("done", 0)


def test_work_that_waits_gets_its_result_and_the_watcher_stops() -> None:
    async def main() -> tuple[str, bool]:
        async def work() -> str:
            await asyncio.sleep(0.01)
            await asyncio.sleep(0)
            return "done"

        result = await _unless_client_leaves(work(), _receiver(asyncio.Event()))
        await asyncio.sleep(0)
        others = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        return result, all(task.done() for task in others)

    assert asyncio.run(main()) == ("done", True)


def test_a_client_that_leaves_cancels_the_waiting_work() -> None:
    async def main() -> list[str]:
        seen: list[str] = []
        disconnect = asyncio.Event()

        async def work() -> str:
            try:
                disconnect.set()
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                seen.append("cancelled")
                raise
            return "never"

        try:
            await _unless_client_leaves(work(), _receiver(disconnect))
        except _ClientLeft:
            seen.append("client left")
        return seen

    assert asyncio.run(main()) == ["cancelled", "client left"]


def test_cancelling_from_outside_is_not_taken_for_a_client_leaving() -> None:
    async def main() -> str:
        async def work() -> str:
            await asyncio.sleep(10)
            return "never"

        task = asyncio.ensure_future(_unless_client_leaves(work(), _receiver(asyncio.Event())))
        await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        except _ClientLeft:
            return "client left"
        return "finished"

    assert asyncio.run(main()) == "cancelled"


def test_an_error_after_waiting_reaches_the_caller() -> None:
    async def main() -> str:
        async def work() -> str:
            await asyncio.sleep(0)
            raise ValueError("boom")

        try:
            await _unless_client_leaves(work(), _receiver(asyncio.Event()))
        except ValueError as error:
            return str(error)
        return "no error"

    assert asyncio.run(main()) == "boom"


def test_lifespan_startup_is_acknowledged_and_shutdown_ends_subscriptions() -> None:
    """The ASGI lifespan exchange, as a server (uvicorn with lifespan on) drives it: startup is
    acknowledged at once; at shutdown the open listen streams end before it is acknowledged."""
    ended: list[str] = []
    lifespan_server = Server("lifespan", "1")
    lifespan_server.end_subscriptions = lambda: ended.append("ended")  # type: ignore[method-assign]
    app = StreamableHTTP(lifespan_server)

    async def exchange() -> list[dict[str, Any]]:
        incoming = [{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}]
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return incoming.pop(0)

        async def send(message: Any) -> None:
            sent.append({**message, "ended": list(ended)})

        await asyncio.wait_for(app({"type": "lifespan"}, receive, send), 5)
        return sent

    assert asyncio.run(exchange()) == [
        {"type": "lifespan.startup.complete", "ended": []},
        {"type": "lifespan.shutdown.complete", "ended": ["ended"]},
    ]


def test_a_scope_that_is_not_http_is_left_alone() -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        raise AssertionError("nothing to read")

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(StreamableHTTP(Server("ws", "1"))({"type": "websocket", "path": "/mcp"}, receive, send))
    assert sent == []


@pytest.mark.parametrize(
    "accept",
    [
        "application/json,text/event-stream",
        "text/event-stream, application/json",
        "Application/JSON;q=0.9 , TEXT/Event-Stream ; q=1",
        "*/*",
        "application/*, text/*",
        "text/event-stream, */*",
    ],
)
def test_accept_counts_both_forms_with_wildcards_parameters_and_any_case(accept: str) -> None:
    http._check_accept(accept)  # no error


@pytest.mark.parametrize(
    "accept",
    [
        None,
        "",
        "application/json",
        "text/event-stream",
        "text/*",
        "application/*",
        "image/*, text/event-stream",
        "application/json; text/event-stream",
        "application/jsonx, text/event-stream",
        "text/event-streams, */json",
    ],
)
def test_accept_without_both_forms_is_406(accept: str | None) -> None:
    with pytest.raises(MCPError) as refused:
        http._check_accept(accept)
    assert refused.value.code == -32600 and refused.value.http_status == 406
    assert refused.value.message == "Not Acceptable: Accept must include both application/json and text/event-stream"


@pytest.mark.parametrize("content_type", ["application/json", "APPLICATION/JSON", " application/json ; charset=utf-8"])
def test_content_type_is_json_in_any_case_with_parameters(content_type: str) -> None:
    http._check_content_type(content_type)  # no error


@pytest.mark.parametrize("content_type", [None, "", "text/plain", "application/json-seq", "text/json"])
def test_a_content_type_that_is_not_json_is_415_and_named(content_type: str | None) -> None:
    with pytest.raises(MCPError) as refused:
        http._check_content_type(content_type)
    assert refused.value.http_status == 415 and refused.value.code == -32600
    assert refused.value.message == (
        f"Unsupported Media Type: Content-Type must be application/json, got {content_type!r}"
    )


def test_a_value_quoted_in_an_error_is_cut_at_100_characters() -> None:
    assert http._shown("a" * 98) == repr("a" * 98)  # 100 characters with its quotes: whole
    assert http._shown("a" * 99) == "'" + "a" * 99 + "...'"
    assert http._shown(None) == "None"
    assert http._shown("abc", limit=4) == "'abc...'"


def test_stream_responses_answers_every_request_as_sse(serve) -> None:  # type: ignore[no-untyped-def]
    streaming = MCPClient(serve(StreamableHTTP(server, stream_responses=True)))
    response = streaming.post("tools/list")
    assert response.headers["content-type"].startswith("text/event-stream")
    assert sse_messages(response.text)[-1]["id"] == 1


def test_the_default_keepalive_is_fifteen_seconds() -> None:
    """How often an idle SSE stream gets a comment, unless configured."""
    assert StreamableHTTP(Server("k", "1")).keepalive_seconds == 15.0


# -- driven in-process, ASGI message by ASGI message ---------------------------------------------
# What a client cannot see from outside (whose share a listen stream counts against, how the task
# ends when the client leaves) or cannot provoke on cue (a keep-alive on an idle stream), read
# straight from the messages the app sends. The app is built in each test's body, so a mutation run
# (scripts/mutate) sees its construction too.


def _scope(headers: dict[str, str], client: tuple[str, int] | None = ("127.0.0.1", 50000)) -> dict[str, Any]:
    scope: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()],
        "server": ("127.0.0.1", 8000),
    }
    if client is not None:
        scope["client"] = client
    return scope


async def _exchange(
    app: StreamableHTTP,
    body: dict[str, Any],
    headers: dict[str, str],
    *,
    client: tuple[str, int] | None = ("127.0.0.1", 50000),
    leave: asyncio.Event | None = None,
    principal: str | None = None,
) -> list[dict[str, Any]]:
    """Every ASGI message `app` sends for one POST of `body`; the client disconnects once `leave`
    is set (never, without one). `principal`: as an authentication layer in front verified it."""
    sent: list[dict[str, Any]] = []
    requested = False

    async def receive() -> dict[str, Any]:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}
        await (leave or asyncio.Event()).wait()
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = _scope(headers, client)
    if principal is not None:
        scope[http.PRINCIPAL_SCOPE_KEY] = principal
    await app(scope, receive, send)
    return sent


def _listen_request(request_id: object, **headers: str) -> tuple[dict[str, Any], dict[str, str]]:
    body = mcp_body("subscriptions/listen", {"notifications": {}}, request_id)
    return body, mcp_headers("subscriptions/listen", **headers)


async def _until(condition: Any, seconds: float = 5.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():
            await asyncio.sleep(0.005)


def _status(sent: list[dict[str, Any]]) -> int:
    return int(next(message["status"] for message in sent if message["type"] == "http.response.start"))


def test_an_anonymous_caller_is_its_peer_address() -> None:
    """The fair share of listen slots an anonymous caller counts against is its address, and a
    name a principal digest (hex) can never take."""
    caller = http.fair_share_caller
    assert caller(None, http._peer({"client": ("10.0.0.7", 51234)})) == "peer:10.0.0.7"
    assert caller(None, http._peer({"client": None})) == "peer:unknown"
    assert caller(None, http._peer({})) == "peer:unknown"
    assert caller("https://as.example#alice", "10.0.0.7") == "principal:https://as.example#alice"


def test_listen_slots_are_shared_per_peer_address_or_per_principal() -> None:
    """`max_subscriptions_per_caller` counts a verified principal's streams together, and an
    anonymous caller's by its address (not its port: a second connection from the same host shares it)."""
    listen_server = Server("fair", "1", max_subscriptions_per_caller=1)
    app = StreamableHTTP(listen_server)

    async def main() -> list[int]:
        leave = asyncio.Event()
        streams = [
            asyncio.ensure_future(_exchange(app, *_listen_request(1), client=("10.0.0.1", 5000), leave=leave)),
            asyncio.ensure_future(_exchange(app, *_listen_request(2), client=("10.0.0.2", 5000), leave=leave)),
            asyncio.ensure_future(
                _exchange(app, *_listen_request(3), client=("10.0.0.1", 1), leave=leave, principal="alice")
            ),
        ]
        await _until(lambda: len(listen_server.subscriptions) == 3 or any(stream.done() for stream in streams))
        same_host = await _exchange(app, *_listen_request(4), client=("10.0.0.1", 5002))
        alice_again = await _exchange(app, *_listen_request(5), client=("10.0.0.3", 1), principal="alice")
        leave.set()
        opened = await asyncio.gather(*streams)
        return [_status(sent) for sent in [*opened, same_host, alice_again]]

    assert asyncio.run(main()) == [200, 200, 200, 503, 503]
    assert len(listen_server.subscriptions) == 0


def test_an_idle_listen_stream_gets_a_keep_alive_comment_every_keepalive_seconds() -> None:
    listen_server = Server("idle", "1")
    app = StreamableHTTP(listen_server, keepalive_seconds=0.01)

    async def main() -> list[dict[str, Any]]:
        leave = asyncio.Event()
        stream = asyncio.ensure_future(_exchange(app, *_listen_request("idle"), leave=leave))
        await _until(lambda: len(listen_server.subscriptions) == 1)
        await asyncio.sleep(0.1)
        leave.set()
        return await stream

    sent = asyncio.run(main())
    bodies = [message["body"] for message in sent if message["type"] == "http.response.body"]
    assert bodies[0].startswith(b"event: message\n")  # the acknowledgement
    assert len(bodies) >= 3 and set(bodies[1:]) == {b": keep-alive\n\n"}


def test_a_listen_stream_keeps_the_response_open_after_each_notification_and_ends_with_its_result() -> None:
    listen_server = Server("open", "1")
    listen_server.tool(name="one")(lambda: "")
    app = StreamableHTTP(listen_server, keepalive_seconds=60)

    async def main() -> list[dict[str, Any]]:
        body = mcp_body("subscriptions/listen", {"notifications": {"toolsListChanged": True}}, "tools")
        stream = asyncio.ensure_future(_exchange(app, body, mcp_headers("subscriptions/listen")))
        await _until(lambda: len(listen_server.subscriptions) == 1)
        listen_server.tool(name="two")(lambda: "")
        listen_server.tool(name="three")(lambda: "")
        listen_server.end_subscriptions()
        return await stream

    sent = asyncio.run(main())
    assert [message["type"] for message in sent] == ["http.response.start"] + ["http.response.body"] * 4
    bodies = sent[1:]
    assert [message["more_body"] for message in bodies] == [True, True, True, False]
    events = [sse_messages(message["body"].decode())[0] for message in bodies]
    assert [event.get("method") for event in events[:3]] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
        "notifications/tools/list_changed",
    ]
    assert events[3]["id"] == "tools" and "result" in events[3]
    assert len(listen_server.subscriptions) == 0


def test_a_client_leaving_a_listen_stream_ends_it_quietly_but_a_server_stop_propagates() -> None:
    """The client closing the connection is the normal end of a listen stream: the app returns and
    frees the slot. A cancellation from outside (the server stopping) is not swallowed."""
    listen_server = Server("leave", "1")
    app = StreamableHTTP(listen_server)

    async def client_leaves() -> int:
        leave = asyncio.Event()
        stream = asyncio.ensure_future(_exchange(app, *_listen_request("gone"), leave=leave))
        await _until(lambda: len(listen_server.subscriptions) == 1)
        leave.set()
        sent = await stream  # returns: no CancelledError out of the app
        await _until(lambda: len(listen_server.subscriptions) == 0)
        return _status(sent)

    async def server_stops() -> bool:
        stream = asyncio.ensure_future(_exchange(app, *_listen_request("stopped")))
        await _until(lambda: len(listen_server.subscriptions) == 1)
        stream.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await stream
        await _until(lambda: len(listen_server.subscriptions) == 0)
        return stream.cancelled()

    assert asyncio.run(client_leaves()) == 200
    assert asyncio.run(server_stops()) is True


def test_an_error_after_the_stream_opened_is_its_last_event_with_the_request_id() -> None:
    """Once a notification has gone out the status line (200) is sent, so an error the handler finds
    afterwards (here -32021: an input request the client did not declare) can only travel as the
    stream's last event, answering the request by its id."""
    stream_server = Server("late", "1")

    @stream_server.tool()
    async def progress_then_ask(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
        await ctx.report_progress(1, 2)
        return InputRequired({"ok": elicit_form("Go ahead?", {"go": {"type": "boolean"}})})

    app = StreamableHTTP(stream_server)
    body = mcp_body(
        "tools/call", {"name": "progress_then_ask", "arguments": {}}, 41, meta={**META, "progressToken": "late"}
    )
    sent = asyncio.run(_exchange(app, body, mcp_headers("tools/call", "progress_then_ask")))
    assert _status(sent) == 200
    bodies = [message for message in sent if message["type"] == "http.response.body"]
    assert [message["more_body"] for message in bodies] == [True, False]
    progress, final = (sse_messages(message["body"].decode())[0] for message in bodies)
    assert progress["method"] == "notifications/progress"
    check_message(final, "tools/call")
    assert final == {
        "jsonrpc": "2.0",
        "id": 41,
        "error": {
            "code": -32021,
            "message": "Missing required client capability: elicitation",
            "data": {"requiredCapabilities": {"elicitation": {}}},
        },
    }


def test_cors_headers_are_added_to_the_answers_start_and_nothing_else() -> None:
    """A page from an allowed origin may read the answer: `Access-Control-Allow-Origin` names it,
    `Vary: Origin` keeps caches from serving it to another, and the answer's own headers stay."""
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    async def answer() -> None:
        with_cors = http._with_cors(send, "http://localhost:3000")
        await with_cors({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
        await with_cors({"type": "http.response.body", "body": b"hi"})
        await with_cors({"type": "http.response.start", "status": 204})  # ASGI: headers may be left out

    asyncio.run(answer())
    cors = [(b"access-control-allow-origin", b"http://localhost:3000"), (b"vary", b"Origin")]
    assert sent == [
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain"), *cors]},
        {"type": "http.response.body", "body": b"hi"},
        {"type": "http.response.start", "status": 204, "headers": cors},
    ]


def test_request_headers_are_read_as_latin_1_and_a_repeated_name_joins_its_values() -> None:
    scope = {
        "headers": [
            (b"accept", b"application/json"),
            (b"x-city", "Zürich".encode("latin-1")),
            (b"accept", b"text/event-stream"),
            (b"accept", b"*/*"),
        ]
    }
    assert http._headers(scope) == {"accept": "application/json, text/event-stream, */*", "x-city": "Zürich"}
    assert http._headers({"headers": [(b"mcp-method", b"tools/list")]}) == {"mcp-method": "tools/list"}


def test_the_principal_is_the_verified_caller_else_a_digest_of_the_credentials() -> None:
    """`requestState` and listen slots are bound to it; the credentials themselves are never kept."""
    digest = hashlib.sha256(b"Bearer alice").hexdigest()[:32]
    assert http._principal({}, {"authorization": "Bearer alice"}) == digest
    assert http._principal({}, {}) is None
    verified = {http.PRINCIPAL_SCOPE_KEY: "https://issuer.example sub-1"}
    assert http._principal(verified, {"authorization": "Bearer alice"}) == "https://issuer.example sub-1"
    assert http._principal({http.PRINCIPAL_SCOPE_KEY: 42}, {}) == "42"


def test_a_body_of_exactly_the_limit_is_read_and_one_byte_more_is_413() -> None:
    app = StreamableHTTP(Server("limit", "1"), max_body_bytes=200)
    body = mcp_body("server/discover")
    raw = json.dumps(body).encode()
    padded = raw[:-1] + b" " * (200 - len(raw)) + b"}"  # whitespace JSON allows, to the byte

    async def exchange(content: bytes, *, declare: bool, split: bool) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        pieces = [content[:50], content[50:]] if split else [content]
        messages = [
            {"type": "http.request", "body": piece, "more_body": index < len(pieces) - 1}
            for index, piece in enumerate(pieces)
        ]

        async def receive() -> dict[str, Any]:
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message: Any) -> None:
            sent.append(message)

        headers = mcp_headers("server/discover")
        if declare:
            headers["Content-Length"] = str(len(content))
        await app(_scope(headers), receive, send)
        return sent

    for declare in (True, False):
        for split in (True, False):
            assert _status(asyncio.run(exchange(padded, declare=declare, split=split))) == 200
            too_large = asyncio.run(exchange(padded + b" ", declare=declare, split=split))
            assert _status(too_large) == 413, (declare, split)
            assert json.loads(too_large[1]["body"])["error"]["message"] == "Payload Too Large: the limit is 200 bytes"


def test_a_client_that_leaves_mid_body_is_answered_400_without_an_id() -> None:
    app = StreamableHTTP(Server("mid-body", "1"))
    sent: list[dict[str, Any]] = []
    messages = [{"type": "http.request", "body": b'{"jsonrpc": "2.0",', "more_body": True}, {"type": "http.disconnect"}]

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(app(_scope(mcp_headers("server/discover")), receive, send))
    assert _status(sent) == 400
    assert json.loads(sent[1]["body"]) == {  # no id: the body that held it never came
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": "Client disconnected before sending the whole body"},
    }


async def _answer_to(
    app: StreamableHTTP, method: str, headers: dict[str, str], *, path: str = "/mcp", body: bytes = b""
) -> list[dict[str, Any]]:
    """The ASGI messages `app` sends for one request with the whole `body` (none by default)."""
    sent: list[dict[str, Any]] = []
    requests = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if requests:
            return requests.pop()
        await asyncio.Event().wait()  # the client stays until answered
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        sent.append(message)

    await app({**_scope(headers), "method": method, "path": path}, receive, send)
    return sent


def test_a_preflight_answer_names_what_the_page_may_send_in_lower_case_header_names() -> None:
    """ASGI wants response header names in lower case; the values are the CORS contract: the
    origin, POST (and a 2025 client's GET and DELETE), the MCP request headers asked for (and no
    others; no header when none of them was asked for, rather than an empty one), ten minutes,
    Vary: Origin."""
    app = StreamableHTTP(Server("cors", "1"))
    asked = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST"}
    with_headers = {**asked, "Access-Control-Request-Headers": "Content-Type, MCP-Param-City , X-Evil,authorization"}
    only_foreign = {**asked, "Access-Control-Request-Headers": "X-Evil"}
    allowed = [(b"access-control-allow-headers", b"content-type, mcp-param-city, authorization")]
    for headers, allow_headers in ((with_headers, allowed), (asked, []), (only_foreign, [])):
        start, body = asyncio.run(_answer_to(app, "OPTIONS", headers))
        assert (start["status"], body["body"]) == (204, b"")
        cors = [(name, value) for name, value in start["headers"] if name.startswith((b"access-control-", b"vary"))]
        assert cors == [
            (b"access-control-allow-origin", b"http://localhost:3000"),
            (b"access-control-allow-methods", b"GET, POST, DELETE"),
            *allow_headers,
            (b"access-control-max-age", b"600"),
            (b"vary", b"Origin"),
        ]


@pytest.mark.parametrize(
    "headers",
    [
        {"Access-Control-Request-Method": "POST"},  # no Origin: not a browser's preflight
        {"Origin": "http://localhost:3000"},  # no method asked for: not a preflight
        {},
    ],
)
def test_an_options_that_is_no_preflight_is_405_allowing_post_and_options(headers: dict[str, str]) -> None:
    start, body = asyncio.run(_answer_to(StreamableHTTP(Server("cors", "1")), "OPTIONS", headers))
    assert start["status"] == 405
    assert (b"allow", b"POST, OPTIONS") in start["headers"]
    assert json.loads(body["body"]) == {
        "jsonrpc": "2.0",
        "error": {"code": -32600, "message": "Method Not Allowed: OPTIONS is for CORS preflights"},
    }


def test_a_get_is_405_with_a_lower_case_allow_header() -> None:
    start, body = asyncio.run(_answer_to(StreamableHTTP(Server("get", "1")), "GET", {"Accept": ACCEPT}))
    assert start["status"] == 405
    assert start["headers"][-1] == (b"allow", b"POST")
    assert json.loads(body["body"])["error"]["message"] == "Method Not Allowed: the MCP endpoint takes POST only"


def test_the_endpoint_answers_on_its_path_only_and_on_any_path_when_path_is_none() -> None:
    """`path="/mcp"` by default: another path is a plain 404 before any MCP handling. `path=None`
    (to mount the app under a router that already chose the path) answers wherever it is called."""
    body = json.dumps(mcp_body("server/discover")).encode()
    headers = mcp_headers("server/discover")
    default, mounted = StreamableHTTP(Server("p", "1")), StreamableHTTP(Server("p", "1"), path=None)
    start, answer = asyncio.run(_answer_to(default, "POST", headers, path="/elsewhere", body=body))
    assert (start["status"], answer["body"]) == (404, b"Not Found")
    assert _status(asyncio.run(_answer_to(default, "POST", headers, body=body))) == 200
    assert _status(asyncio.run(_answer_to(mounted, "POST", headers, path="/anywhere/else", body=body))) == 200


def test_a_foreign_host_and_a_foreign_origin_are_refused_in_words() -> None:
    """421 for a Host that is no loopback name on a loopback bind, 403 for an Origin not allowed,
    each saying why (and quoting the Origin cut short, as every echoed value is)."""
    body = json.dumps(mcp_body("tools/list")).encode()
    app = StreamableHTTP(Server("rebinding", "1"))
    _, misdirected = asyncio.run(_answer_to(app, "POST", mcp_headers("tools/list", Host="evil.example"), body=body))
    assert json.loads(misdirected["body"])["error"] == {
        "code": -32600,
        "message": "Misdirected Request: this server is bound to loopback and answers only loopback host names",
    }
    origin = "https://evil.example/" + "x" * 200
    _, forbidden = asyncio.run(_answer_to(app, "POST", mcp_headers("tools/list", Origin=origin), body=body))
    assert json.loads(forbidden["body"])["error"] == {
        "code": -32600,
        "message": f"Forbidden: Origin {repr(origin)[:100]}...' is not allowed",
    }


def test_a_json_answer_states_its_type_and_length_and_nosniff_on_all_but_a_result() -> None:
    """Lower-case names (ASGI), the exact length (no chunked framing), `nosniff` on errors; a 200
    result goes without it (reached only by fetch, which never renders: see `http._json`)."""
    app = StreamableHTTP(Server("json", "1"))
    body = json.dumps(mcp_body("server/discover")).encode()
    for method, nosniff in (("server/discover", []), ("tools/list", [(b"x-content-type-options", b"nosniff")])):
        start, answer = asyncio.run(_answer_to(app, "POST", mcp_headers(method), body=body))
        assert start["headers"] == [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(answer["body"])).encode()),
            *nosniff,
        ]


def test_a_body_over_64_kib_is_parsed_off_the_event_loop_and_served_alike() -> None:
    """Past `PARSE_IN_THREAD_BYTES` the body is parsed in a worker thread; the answer is the same."""
    big_server = Server("big", "1")
    big_server.tool(input_schema={"type": "object", "properties": {"message": {"type": "string"}}})(echo)
    app = StreamableHTTP(big_server)
    message = "x" * (http.PARSE_IN_THREAD_BYTES + 1)
    body = json.dumps(mcp_body("tools/call", {"name": "echo", "arguments": {"message": message}})).encode()
    start, answer = asyncio.run(_answer_to(app, "POST", mcp_headers("tools/call", "echo"), body=body))
    assert start["status"] == 200
    assert json.loads(answer["body"])["result"]["content"] == [{"type": "text", "text": message}]


def test_while_a_body_of_many_small_objects_is_parsed_the_loop_keeps_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 25: a legal megabyte of small arrays and objects held the event loop for its whole
    parse although the parse ran in a worker thread: orjson keeps the GIL from start to end. Now
    such a body is read by a parser that gives the GIL up, so the loop keeps running meanwhile.

    Measured as a ratio within the run, so a fast or a loaded machine reads the same: a task on
    the server's loop wakes every 2 ms, and its longest gap during the parse must stay well under
    the parse's own time (before the fix the gap was nearly the whole parse)."""
    wakes: list[float] = []
    parses: list[tuple[float, float]] = []
    busy_server = Server("busy", "1")

    async def watch() -> None:
        while True:
            wakes.append(time.perf_counter())
            await asyncio.sleep(0.002)

    watcher: list[asyncio.Task[None]] = []

    @busy_server.tool()
    async def count() -> str:
        if not watcher:
            watcher.append(asyncio.get_running_loop().create_task(watch()))
        return "counted"

    real_parse = http.jsonrpc.parse_message

    def parse(body: bytes, **options: Any) -> Any:
        started = time.perf_counter()
        try:
            return real_parse(body, **options)
        finally:
            if len(body) > http.PARSE_IN_THREAD_BYTES:
                parses.append((started, time.perf_counter()))

    monkeypatch.setattr(http.jsonrpc, "parse_message", parse)
    rows = ",".join(['[{"a":[1]}]'] * 75_000)  # 225,000 containers, nested 8 deep at most
    big = json.dumps(mcp_body("tools/call", {"name": "count", "arguments": {}, "rows": "ROWS"})).encode()
    big = big.replace(b'"ROWS"', b"[" + rows.encode() + b"]")
    assert len(big) < http.DEFAULT_MAX_BODY_BYTES
    small = json.dumps(mcp_body("tools/call", {"name": "count"})).encode()
    with running(StreamableHTTP(busy_server)) as url, httpx.Client(base_url=url, timeout=30) as client:
        headers = mcp_headers("tools/call", "count")
        assert client.post("/mcp", content=small, headers=headers).status_code == 200  # the watcher runs
        answer = client.post("/mcp", content=big, headers=headers)
        assert answer.status_code == 200, answer.text[:300]
    [(started, ended)] = parses
    during = [wake for wake in wakes if started <= wake <= ended]
    edges = [started, *during, ended]
    longest = max(later - earlier for earlier, later in zip(edges, edges[1:], strict=False))
    # Held the whole way, the stall is the parse (0.92 of it, measured); given up, it is a garbage
    # collection of the parse's objects at worst (0.39 once, on a loaded machine).
    assert longest < 0.6 * (ended - started), f"the loop stood still {longest:.3f} s of a {ended - started:.3f} s parse"


async def _post_messages(
    app: StreamableHTTP, messages: list[dict[str, Any]], headers: dict[str, str]
) -> tuple[list[dict[str, Any]], int]:
    """What `app` sends for a POST whose body arrives as `messages` (then a disconnect), and how
    many of them it read."""
    sent: list[dict[str, Any]] = []
    pending = list(messages)

    async def receive() -> dict[str, Any]:
        return pending.pop(0) if pending else {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    await app(_scope(headers), receive, send)
    return sent, len(messages) - len(pending)


def test_a_declared_length_over_the_limit_is_refused_before_a_byte_is_read() -> None:
    """A Content-Length over `max_body_bytes` is 413 at once: the body is never read, however
    small it turns out to be (a greedy client does not get to send the megabytes it announced)."""
    app = StreamableHTTP(Server("k", "1"), max_body_bytes=1000)
    body = json.dumps(mcp_body("server/discover", {})).encode()
    headers = {**mcp_headers("server/discover"), "Content-Length": "1001"}
    sent, read = asyncio.run(_post_messages(app, [{"type": "http.request", "body": body}], headers))
    assert (_status(sent), read) == (413, 0)


def test_asgi_body_and_more_body_keys_may_be_left_out() -> None:
    """ASGI makes both keys of `http.request` optional: a missing `body` is no bytes, a missing
    `more_body` means the body is complete (uvicorn always sends both; other servers need not)."""
    app = StreamableHTTP(Server("k", "1"))
    body = json.dumps(mcp_body("server/discover", {})).encode()
    messages = [{"type": "http.request", "more_body": True}, {"type": "http.request", "body": body}]
    sent, read = asyncio.run(_post_messages(app, messages, mcp_headers("server/discover")))
    assert (_status(sent), read) == (200, 2)
    bodies = [message.get("body", b"") for message in sent if message["type"] == "http.response.body"]
    answer = json.loads(b"".join(bodies))
    assert answer["result"]["_meta"][SERVER_INFO_KEY]["name"] == "k"
