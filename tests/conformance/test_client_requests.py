"""The everything server's `client_requests` tools, on both wires.

Four entries of `expected-failures-2025-11-25.yaml` say that these tools cannot ask a legacy
client for input. The suite only sees that no request reached it, which a crashing tool would
also cause; these tests pin the reason: a 2026-07-28 client is asked (MRTR) and gets its
answer, and a legacy client gets the `isError` result that says why it is not asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mcpref.examples.everything_server import create_app
from mcpref.validation import check_message
from tests.conftest import ACCEPT, META, MCPClient, running

ASKS_FOR_INPUT = ["elicitation/create", "sampling/createMessage"]
FORM = {"action": "accept", "content": {"username": "ada", "email": "ada@example.com"}}
#: name: (arguments, the input request's method, the client's answer to it)
CALLS: dict[str, tuple[dict[str, Any], str, dict[str, Any]]] = {
    "test_sampling": (
        {"prompt": "Say hello"},
        "sampling/createMessage",
        {"role": "assistant", "content": {"type": "text", "text": "Hello"}, "model": "test-model"},
    ),
    "test_elicitation": ({"message": "Who are you?"}, "elicitation/create", FORM),
    "test_elicitation_sep1034_defaults": ({}, "elicitation/create", {"action": "accept", "content": {"age": 31}}),
    "test_elicitation_sep1330_enums": ({}, "elicitation/create", {"action": "decline"}),
}
CAPABLE = {**META, "io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "elicitation": {}}}


@pytest.fixture(scope="module")
def http() -> Iterator[httpx.Client]:
    with running(create_app()) as url, httpx.Client(base_url=url, timeout=10) as client:
        yield client


@pytest.mark.parametrize("name", CALLS)
def test_a_modern_client_is_asked_and_answered(http: httpx.Client, name: str) -> None:
    client = MCPClient(http)
    arguments, method, answer = CALLS[name]
    asked = client.result("tools/call", {"name": name, "arguments": arguments}, meta=CAPABLE)
    assert asked["resultType"] == "input_required"
    [(key, request)] = asked["inputRequests"].items()
    assert request["method"] == method
    retry = {"name": name, "arguments": arguments, "inputResponses": {key: answer}}
    done = client.result("tools/call", retry, meta=CAPABLE)
    assert done["resultType"] == "complete" and not done.get("isError"), done


@pytest.mark.parametrize("name", CALLS)
def test_a_legacy_client_is_told_why_it_is_not_asked(http: httpx.Client, name: str) -> None:
    arguments, method, _ = CALLS[name]
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    headers = {"Content-Type": "application/json", "Accept": ACCEPT, "MCP-Protocol-Version": "2025-11-25"}
    message = http.post("/mcp", json=body, headers=headers).json()
    check_message(message, "tools/call", revision="2025-11-25")
    capability = method.split("/")[0]
    assert message["result"] == {
        "content": [
            {
                "type": "text",
                "text": f"Cannot complete: this request needs input from the client ({capability}), "
                "which only 2026-07-28 clients can give a stateless server.",
            }
        ],
        "isError": True,
    }
