"""The schema check itself must catch broken messages, or every test built on it proves nothing."""

from __future__ import annotations

import pytest

from mcpref.validation import check_message, definition_for


def test_definitions_follow_the_method() -> None:
    assert definition_for({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}) == "CallToolRequest"
    assert definition_for({"jsonrpc": "2.0", "id": 1, "result": {}}, "tools/list") == "ListToolsResultResponse"
    assert definition_for({"jsonrpc": "2.0", "id": 1, "result": {}}, "server/discover") == "DiscoverResultResponse"
    assert definition_for({"jsonrpc": "2.0", "id": 1, "error": {}}) == "JSONRPCErrorResponse"
    assert definition_for({"jsonrpc": "2.0", "method": "notifications/progress"}) == "ProgressNotification"


@pytest.mark.parametrize(
    ("message", "method"),
    [
        ({"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "ttlMs": 0, "cacheScope": "private"}}, "tools/list"),
        (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"resultType": "complete", "tools": [], "ttlMs": 0, "cacheScope": "shared"},
            },
            "tools/list",
        ),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}, None),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": "x", "message": "m"}}, None),
        (
            {"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "content": [{"type": "text"}]}},
            "tools/call",
        ),
    ],
)
def test_broken_messages_are_caught(message: dict, method: str | None) -> None:
    with pytest.raises(ValueError, match="breaks the official schema"):
        check_message(message, method)
