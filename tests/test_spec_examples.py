"""The spec's own example exchanges (schema/2026-07-28/examples/ in the specification repository),
replayed against a server built to hold the same data, over a real uvicorn.

Each test sends the example's request and compares the whole answer with the example's
response. Where ours differs on purpose, the test says so and checks the difference:

- every result carries serverInfo in `_meta` (a SHOULD in basic/index.mdx; the examples omit it
  from all but discover);
- capabilities announce `listChanged`/`subscribe`, because this server does send those
  notifications on listen streams (the discover example's server does not);
- `isError: false` is left out (optional in the schema; absent means false);
- cursors are opaque and our own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpref import CacheHints, Server, StreamableHTTP
from mcpref.mrtr import InputRequired, create_message, elicit_form
from tests.conftest import MCPClient, running

INFO = {"io.modelcontextprotocol/serverInfo": {"name": "ExampleServer", "version": "1.0.0"}}
CLIENT_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "ExampleClient", "version": "1.0.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}

server = Server(
    "ExampleServer",
    "1.0.0",
    page_size=1,
    cache_for={
        "server/discover": CacheHints(3_600_000, "public"),
        "tools/list": CacheHints(3_600_000, "public"),
        "resources/read": CacheHints(60_000, "private"),
    },
    # book_flight takes ctx only to ask for input; it never logs, and the spec's example
    # declares no `logging`.
    emits_logs=False,
)


@server.tool(
    title="Weather Information Provider",
    description="Get current weather information for a location",
    input_schema={
        "type": "object",
        "properties": {"location": {"type": "string", "description": "City name or zip code"}},
        "required": ["location"],
    },
    icons=[{"src": "https://example.com/weather-icon.png", "mimeType": "image/png", "sizes": ["48x48"]}],
)
def get_weather(location: str) -> str:
    return f"Current weather in {location}:\nTemperature: 72°F\nConditions: Partly cloudy"


@server.tool(description="Book a flight after asking the user and the model")
def book_flight(ctx) -> Any:  # type: ignore[no-untyped-def]
    if ctx.state is None:
        return InputRequired(
            {
                "github_login": elicit_form(
                    "Please provide your GitHub username", {"name": {"type": "string"}}, ["name"]
                ),
                "capital_of_france": create_message("What is the capital of France?", 100),
            },
            state={"location": "New York"},
        )
    return "booked"


@server.resource("file:///project/src/main.rs", name="main.rs", mime_type="text/x-rust")
def main_rs() -> str:
    return 'fn main() {\n    println!("Hello world!");\n}'


@server.prompt(name="code_review", description="Code review prompt", complete={"language": lambda value: ["flask"]})
def code_review(code: str, language: str = "python") -> str:
    return f"Please review this Python code:\n{code}"


@pytest.fixture(scope="module")
def client() -> Iterator[MCPClient]:
    with running(StreamableHTTP(server)) as url, httpx.Client(base_url=url, timeout=10) as http:
        yield MCPClient(http)


def answer(client: MCPClient, request_id: Any, method: str, params: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    response = client.post(method, params, id=request_id, meta=CLIENT_META, **kwargs)
    return response.json()


def test_server_discover_request(client: MCPClient) -> None:
    assert answer(client, "discover-1", "server/discover", {}) == {
        "jsonrpc": "2.0",
        "id": "discover-1",
        "result": {
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": {
                "tools": {"listChanged": True},
                "resources": {"subscribe": True, "listChanged": True},
                "prompts": {"listChanged": True},
                "completions": {},
            },
            "ttlMs": 3_600_000,
            "cacheScope": "public",
            "_meta": INFO,
        },
    }


def test_call_tool_request(client: MCPClient) -> None:
    assert answer(
        client, "call-tool-example", "tools/call", {"name": "get_weather", "arguments": {"location": "New York"}}
    ) == {
        "jsonrpc": "2.0",
        "id": "call-tool-example",
        "result": {
            "resultType": "complete",
            "content": [
                {"type": "text", "text": "Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"}
            ],
            "_meta": INFO,
        },
    }


def test_list_tools_result_response(client: MCPClient) -> None:
    result = answer(client, "list-tools-example", "tools/list", {})["result"]
    cursor = result.pop("nextCursor")
    assert isinstance(cursor, str) and cursor
    assert result == {
        "resultType": "complete",
        "tools": [server.tools.get("get_weather").definition()],  # type: ignore[union-attr]
        "ttlMs": 3_600_000,
        "cacheScope": "public",
        "_meta": INFO,
    }
    assert result["tools"][0]["icons"][0]["sizes"] == ["48x48"]


def test_read_resource_result_response_with_ttl(client: MCPClient) -> None:
    assert answer(
        client, "read-resource-with-ttl-example", "resources/read", {"uri": "file:///project/src/main.rs"}
    ) == {
        "jsonrpc": "2.0",
        "id": "read-resource-with-ttl-example",
        "result": {
            "resultType": "complete",
            "contents": [
                {
                    "uri": "file:///project/src/main.rs",
                    "mimeType": "text/x-rust",
                    "text": 'fn main() {\n    println!("Hello world!");\n}',
                }
            ],
            "ttlMs": 60_000,
            "cacheScope": "private",
            "_meta": INFO,
        },
    }


def test_get_prompt_request(client: MCPClient) -> None:
    params = {"name": "code_review", "arguments": {"code": "def hello():\n    print('world')"}}
    assert answer(client, "get-prompt-example", "prompts/get", params) == {
        "jsonrpc": "2.0",
        "id": "get-prompt-example",
        "result": {
            "resultType": "complete",
            "description": "Code review prompt",
            "messages": [
                {
                    "role": "user",
                    "content": {
                        "type": "text",
                        "text": "Please review this Python code:\ndef hello():\n    print('world')",
                    },
                }
            ],
            "_meta": INFO,
        },
    }


def test_completion_request(client: MCPClient) -> None:
    params = {"ref": {"type": "ref/prompt", "name": "code_review"}, "argument": {"name": "language", "value": "py"}}
    assert answer(client, "completion-example", "completion/complete", params) == {
        "jsonrpc": "2.0",
        "id": "completion-example",
        "result": {
            "resultType": "complete",
            "completion": {"values": ["flask"], "total": 1, "hasMore": False},
            "_meta": INFO,
        },
    }


def test_input_required_result_with_elicitation_and_sampling_and_request_state(client: MCPClient) -> None:
    meta = {**CLIENT_META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "sampling": {}}}
    result = client.post("tools/call", {"name": "book_flight", "arguments": {}}, meta=meta).json()["result"]
    state = result.pop("requestState")
    assert isinstance(state, str) and state
    assert result == {
        "resultType": "input_required",
        "inputRequests": {
            "github_login": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Please provide your GitHub username",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                        "required": ["name"],
                    },
                },
            },
            "capital_of_france": {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [
                        {"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}
                    ],
                    "maxTokens": 100,
                },
            },
        },
        "_meta": INFO,
    }


@pytest.mark.parametrize(
    ("method", "params", "status", "code", "data"),
    [
        # InvalidParamsError/unknown-tool.json
        ("tools/call", {"name": "invalid_tool_name", "arguments": {}}, 200, -32602, None),
        # InvalidParamsError/invalid-cursor.json
        ("tools/list", {"cursor": "not-a-cursor"}, 200, -32602, None),
        # UnsupportedProtocolVersionError/unsupported-version.json
        (
            "tools/list",
            {"_meta": {**CLIENT_META, "io.modelcontextprotocol/protocolVersion": "1900-01-01"}},
            400,
            -32022,
            {"supported": ["2026-07-28"], "requested": "1900-01-01"},
        ),
        # MissingRequiredClientCapabilityError/missing-elicitation-capability.json
        (
            "tools/call",
            {
                "name": "book_flight",
                "arguments": {},
                "_meta": {**CLIENT_META, "io.modelcontextprotocol/clientCapabilities": {"sampling": {}}},
            },
            400,
            -32021,
            {"requiredCapabilities": {"elicitation": {}}},
        ),
    ],
)
def test_error_examples(client: MCPClient, method: str, params: dict, status: int, code: int, data: Any) -> None:
    meta = params.pop("_meta", CLIENT_META)
    headers = client.headers(
        method, params.get("name"), **{"MCP-Protocol-Version": meta["io.modelcontextprotocol/protocolVersion"]}
    )
    response = client.post(method, params, id=1, meta=meta, headers=headers)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code
    assert error.get("data") == data


def test_header_mismatch_example(client: MCPClient) -> None:
    """HeaderMismatchError/header-mismatch.json: Mcp-Name says foo, the body says bar."""
    response = client.post(
        "tools/call",
        {"name": "bar", "arguments": {}},
        id=1,
        meta=CLIENT_META,
        headers=client.headers("tools/call", "foo"),
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020
