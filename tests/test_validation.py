"""The schema check itself must catch broken messages, or every test built on it proves nothing."""

from __future__ import annotations

import pytest

from mcpref.validation import check_message, definition_for, result_definition_for, schema_errors


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


def error(code: object, data: object = None) -> dict:  # type: ignore[type-arg]
    body: dict = {"code": code, "message": "m"}  # type: ignore[type-arg]
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": 1, "error": body}


@pytest.mark.parametrize(
    ("code", "definition"),
    [
        (-32020, "HeaderMismatchError"),
        (-32021, "MissingRequiredClientCapabilityError"),
        (-32022, "UnsupportedProtocolVersionError"),
        (-32042, "JSONRPCErrorResponse"),  # typed in 2025-11-25 only
        (-32602, "JSONRPCErrorResponse"),
        ("-32022", "JSONRPCErrorResponse"),
        ([-32022], "JSONRPCErrorResponse"),  # unhashable: read, not looked up
        (None, "JSONRPCErrorResponse"),
    ],
)
def test_an_error_the_spec_types_is_held_to_its_type(code: object, definition: str) -> None:
    assert definition_for(error(code)) == definition


def test_a_typed_error_is_typed_by_its_revision() -> None:
    assert definition_for(error(-32042), revision="2025-11-25") == "URLElicitationRequiredError"
    assert definition_for(error(-32020), revision="2025-11-25") == "JSONRPCErrorResponse"
    assert definition_for({"jsonrpc": "2.0", "id": 1, "error": "broken"}) == "JSONRPCErrorResponse"


def test_a_typed_error_without_its_data_is_caught() -> None:
    with pytest.raises(ValueError, match="UnsupportedProtocolVersionError at /error"):
        check_message(error(-32022))
    check_message(error(-32022, {"supported": ["2026-07-28"], "requested": "2099-01-01"}))
    check_message(error(-32602))


def test_an_unknown_method_is_held_to_the_plain_envelope() -> None:
    assert definition_for({"jsonrpc": "2.0", "id": 1, "method": "com.example/x"}) == "JSONRPCRequest"
    assert definition_for({"jsonrpc": "2.0", "method": "com.example/x"}) == "JSONRPCNotification"


@pytest.mark.parametrize(
    ("method", "revision", "definition"),
    [
        (None, "2026-07-28", "JSONRPCResultResponse"),
        ("com.example/x", "2026-07-28", "JSONRPCResultResponse"),
        ("notifications/progress", "2026-07-28", "JSONRPCResultResponse"),
        ("sampling/createMessage", "2026-07-28", "JSONRPCResultResponse"),  # no CreateMessageResultResponse
        ("tools/call", "2026-07-28", "CallToolResultResponse"),
        ("tools/call", "2025-11-25", "JSONRPCResultResponse"),
    ],
)
def test_a_response_is_typed_by_the_request_it_answers(method: str | None, revision: str, definition: str) -> None:
    assert definition_for({"jsonrpc": "2.0", "id": 1, "result": {}}, method, revision) == definition


@pytest.mark.parametrize(
    ("result", "method", "definition"),
    [
        ({"resultType": "input_required", "inputRequests": {}}, "tools/call", "InputRequiredResult"),
        ({"resultType": "complete", "content": []}, "tools/call", "CallToolResult"),
        ({"content": []}, "tools/call", "CallToolResult"),  # no resultType means complete
        ({"resultType": "task"}, "tools/call", None),  # an extension's: not the core schema's to judge
        ({}, "com.example/x", None),
        ({}, "notifications/progress", None),
        ({}, None, None),
        ("complete", "tools/call", None),
    ],
)
def test_a_result_is_held_to_the_definition_its_result_type_names(
    result: object, method: str | None, definition: str | None
) -> None:
    assert result_definition_for(result, method) == definition


def test_a_result_the_revision_does_not_define_is_not_checked() -> None:
    assert result_definition_for({}, "ping", "2025-11-25") is None
    assert result_definition_for({}, "tools/list", "2025-11-25") == "ListToolsResult"


def test_each_violation_is_one_line_naming_definition_and_path_in_path_order() -> None:
    message = {
        "jsonrpc": "1.0",
        "id": 1,
        "result": {
            "resultType": "complete",
            "tools": [{"name": 1, "inputSchema": {"type": "object"}}],
            "ttlMs": 0,
            "cacheScope": "private",
        },
    }
    lines = [
        "ListToolsResultResponse at /jsonrpc: '2.0' was expected",
        "ListToolsResultResponse at /result/tools/0/name: 1 is not of type 'string'",
        "ListToolsResult at /result/tools/0/name: 1 is not of type 'string'",
    ]
    assert schema_errors(message, "tools/list") == lines
    with pytest.raises(ValueError) as caught:
        check_message(message, "tools/list")
    assert str(caught.value) == "message breaks the official schema:\n" + "\n".join(lines)


def test_the_result_check_catches_what_the_response_union_lets_through() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"resultType": "complete", "content": [{"type": "text"}, {"type": "text", "text": 1}]},
    }
    assert schema_errors(message, "tools/call") == [
        "CallToolResult at /result/content/0: {'type': 'text'} is not valid under any of the given schemas",
        "CallToolResult at /result/content/1: {'type': 'text', 'text': 1} is not valid under any of the given schemas",
    ]


def test_a_message_is_checked_against_the_revision_named() -> None:
    result = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    assert schema_errors(result, "tools/list", "2025-11-25") == []
    check_message(result, "tools/list", "2025-11-25")
    assert schema_errors(result, "tools/list") != []
    with pytest.raises(ValueError):
        check_message(result, "tools/list")


def test_a_result_is_held_to_its_own_revisions_definition() -> None:
    """tasks/get is a 2025-11-25 method: its result is checked there, and nowhere else."""
    broken = {"jsonrpc": "2.0", "id": 1, "result": {"taskId": 1}}
    assert "GetTaskResult at /result/taskId: 1 is not of type 'string'" in schema_errors(
        broken, "tasks/get", "2025-11-25"
    )
    assert schema_errors({"jsonrpc": "2.0", "id": 1, "result": {}}, "server/discover", "2025-11-25") == []
