"""Framing: what `parse_message` accepts, what it refuses, and with which code."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from mcpref.jsonrpc import (
    INVALID_REQUEST,
    MAX_MESSAGE_CHARS,
    MAX_NESTING_DEPTH,
    PARSE_ERROR,
    MCPError,
    Notification,
    Request,
    encode,
    error_response,
    is_request_id,
    notification,
    parse_message,
    result_response,
    same_id,
)


def test_a_request_keeps_its_id_type() -> None:
    message = parse_message(b'{"jsonrpc":"2.0","id":"a-1","method":"tools/list","params":{"x":1}}')
    assert message == Request(id="a-1", method="tools/list", params={"x": 1})
    assert parse_message(b'{"jsonrpc":"2.0","id":0,"method":"m"}').id == 0


def test_a_request_without_params_is_marked() -> None:
    message = parse_message(b'{"jsonrpc":"2.0","id":1,"method":"m"}')
    assert isinstance(message, Request) and message.params == {} and not message.has_params


def test_a_message_without_id_is_a_notification() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","method":"notifications/x"}') == Notification("notifications/x", {})


@pytest.mark.parametrize(
    ("body", "code", "fragment"),
    [
        (b"{", PARSE_ERROR, "Parse error"),
        (b"\xc3\x28", PARSE_ERROR, "UTF-8"),
        (b"[1]", INVALID_REQUEST, "batches"),
        (b"null", INVALID_REQUEST, "not an object"),
        (b'{"jsonrpc":"2.0","id":null,"method":"m"}', INVALID_REQUEST, "null"),
        (b'{"jsonrpc":"2.0","id":false,"method":"m"}', INVALID_REQUEST, "string or an integer"),
        (b'{"jsonrpc":"2.0","id":2.0,"method":"m"}', INVALID_REQUEST, "string or an integer"),
        (b'{"jsonrpc":"2.0","id":1,"method":"m","params":"x"}', INVALID_REQUEST, "params"),
        (b'{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}', INVALID_REQUEST, "responses"),
    ],
)
def test_refusals_name_the_problem(body: bytes, code: int, fragment: str) -> None:
    with pytest.raises(MCPError) as caught:
        parse_message(body)
    assert caught.value.code == code
    assert fragment in caught.value.message


def test_the_id_of_a_bad_envelope_is_kept_for_the_answer() -> None:
    with pytest.raises(MCPError) as caught:
        parse_message(b'{"jsonrpc":"1.0","id":7,"method":"m"}')
    assert caught.value.request_id == 7


def test_nesting_at_the_limit_parses_and_beyond_it_is_refused() -> None:
    ok = (
        b'{"jsonrpc":"2.0","method":"m","params":{"a":'
        + b"[" * (MAX_NESTING_DEPTH - 2)
        + b"]" * (MAX_NESTING_DEPTH - 2)
        + b"}}"
    )
    assert isinstance(parse_message(ok), Notification)
    with pytest.raises(MCPError) as caught:
        parse_message(b"[" * (MAX_NESTING_DEPTH + 1) + b"]" * (MAX_NESTING_DEPTH + 1))
    assert caught.value.code == PARSE_ERROR


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    body = b'{"jsonrpc":"2.0","method":"m","params":{"s":"' + b"[{" * 500 + b'\\"]"}}'
    assert isinstance(parse_message(body), Notification)


def test_error_response_leaves_out_an_unknown_id() -> None:
    error = MCPError(PARSE_ERROR, "Parse error")
    assert error_response(None, error) == {"jsonrpc": "2.0", "error": {"code": PARSE_ERROR, "message": "Parse error"}}
    assert error_response(3, MCPError(1, "m", {"k": 1}))["error"]["data"] == {"k": 1}


def test_encode_is_compact_utf8() -> None:
    assert encode({"a": "é", "b": [1, 2]}) == '{"a":"é","b":[1,2]}'.encode()


@pytest.mark.parametrize(
    ("received", "sent", "same"),
    [
        (1, 1, True),
        ("a", "a", True),
        (True, 1, False),
        (1.0, 1, False),
        ("1", 1, False),
        ([1], 1, False),
        (None, 1, False),
    ],
)
def test_ids_match_by_json_type_and_value(received: object, sent: int | str, same: bool) -> None:
    assert same_id(received, sent) is same
    assert is_request_id(received) is (type(received) in (str, int))


def test_an_error_message_is_cut_after_the_limit() -> None:
    """A message quoting what the client sent never echoes a large input back."""
    assert MCPError(1, "x" * MAX_MESSAGE_CHARS).message == "x" * MAX_MESSAGE_CHARS
    long = MCPError(1, "y" * (MAX_MESSAGE_CHARS + 1), http_status=400)
    assert long.message == "y" * MAX_MESSAGE_CHARS + "... (cut)" and str(long) == long.message
    assert (long.code, long.data, long.http_status, long.http_headers, long.request_id) == (1, None, 400, None, None)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"jsonrpc":"1.0","id":"r","method":"m"}', 'Invalid Request: "jsonrpc" must be "2.0"'),
        (b'{"id":"r","method":"m"}', 'Invalid Request: "jsonrpc" must be "2.0"'),
        (b'{"jsonrpc":"2.0","id":"r","method":5}', 'Invalid Request: "method" must be a string'),
        (b'{"jsonrpc":"2.0","id":"r","result":{}}', "Invalid Request: clients must not send JSON-RPC responses"),
        (b'{"jsonrpc":"2.0","id":"r","method":"m","params":[]}', 'Invalid Request: "params" must be an object'),
    ],
)
def test_an_envelope_refusal_is_worded_and_keeps_the_id(body: bytes, reason: str) -> None:
    with pytest.raises(MCPError) as caught:
        parse_message(body)
    assert (caught.value.code, caught.value.message, caught.value.request_id) == (INVALID_REQUEST, reason, "r")


@pytest.mark.parametrize(
    "body", [b'{"jsonrpc":"2.0","id":null,"method":"m"}', b'{"jsonrpc":"2.0","id":[1],"method":"m"}']
)
def test_an_unusable_id_is_not_echoed(body: bytes) -> None:
    with pytest.raises(MCPError) as caught:
        parse_message(body)
    assert caught.value.request_id is None


def test_a_notification_and_a_request_keep_their_params() -> None:
    assert parse_message(b'{"jsonrpc":"2.0","method":"n","params":{"a":1}}') == Notification("n", {"a": 1})
    request = parse_message(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{}}')
    assert isinstance(request, Request) and request.has_params


def test_the_messages_the_server_writes() -> None:
    assert result_response(0, {}) == {"jsonrpc": "2.0", "id": 0, "result": {}}
    assert notification("n", {"a": 1}) == {"jsonrpc": "2.0", "method": "n", "params": {"a": 1}}
    assert error_response(0, MCPError(-1, "m")) == {"jsonrpc": "2.0", "id": 0, "error": {"code": -1, "message": "m"}}


def test_objects_count_towards_nesting_too() -> None:
    deep = b'{"a":' * (MAX_NESTING_DEPTH + 1) + b"1" + b"}" * (MAX_NESTING_DEPTH + 1)
    with pytest.raises(MCPError) as caught:
        parse_message(deep)
    assert caught.value.message == f"Parse error: JSON nests deeper than {MAX_NESTING_DEPTH} levels"


def test_an_escaped_backslash_before_a_closing_quote_ends_the_string() -> None:
    """`"\\\\"` is a one-backslash string: what follows it is outside strings again."""
    body = b'{"jsonrpc":"2.0","method":"m","params":{"s":"\\\\","t":"' + b"[" * (MAX_NESTING_DEPTH + 1) + b'"}}'
    assert isinstance(parse_message(body), Notification)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"NaN", "Parse error: NaN is not a JSON value"),
        (b"-Infinity", "Parse error: -Infinity is not a JSON value"),
        (b"1e999", "Parse error: the number 1e999 is too large"),
        (b"-1e999", "Parse error: the number -1e999 is too large"),
        (b"-" + b"9" * 60 + b"e999", "Parse error: the number -" + b"9".decode() * 39 + " is too large"),
    ],
)
def test_what_is_not_json_is_refused_by_name(body: bytes, reason: str) -> None:
    with pytest.raises(MCPError) as caught:
        parse_message(body)
    assert caught.value.code == PARSE_ERROR and caught.value.message == reason


def test_a_lone_surrogate_is_written_as_its_escape() -> None:
    """A client may send `"\\ud800"`; echoed back, it must still be valid UTF-8."""
    assert encode({"a": "\ud800"}) == b'{"a":"\\ud800"}'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"[1]", "Invalid Request: the message is an array (batches are not part of MCP)"),
        (b'"x"', "Invalid Request: the message is not an object"),
        (b'{"jsonrpc":"2.0","id":null,"method":"m"}', 'Invalid Request: "id" must not be null'),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"m"}', 'Invalid Request: "id" must be a string or an integer'),
    ],
)
def test_a_message_that_is_no_request_is_refused_in_words(body: bytes, message: str) -> None:
    with pytest.raises(MCPError) as caught:
        parse_message(body)
    assert caught.value.message == message


def test_an_error_carries_its_http_headers() -> None:
    headers = [(b"retry-after", b"1")]
    assert MCPError(1, "m", http_headers=headers).http_headers == headers


@pytest.mark.parametrize("value", [Notification("m"), datetime(2026, 7, 28, tzinfo=UTC)])
def test_encode_refuses_what_is_not_json(value: object) -> None:
    """A dataclass or a datetime in a message is a bug to surface, not something to guess a JSON form for."""
    with pytest.raises(TypeError):
        encode({"a": value})


def test_the_nesting_limit_has_its_line_in_the_limits_table() -> None:
    """Every limit has a line in docs/patterns/production.md with the default the code has; the
    nesting depth, which a client meets as -32700, had none."""
    table = (Path(__file__).parents[1] / "docs/patterns/production.md").read_text("utf-8")
    rows = [line for line in table.splitlines() if "`jsonrpc.MAX_NESTING_DEPTH`" in line]
    assert len(rows) == 1, "no line (or several) for the nesting depth in the limits table"
    assert rows[0].split("|")[2].strip() == f"{MAX_NESTING_DEPTH} levels"
