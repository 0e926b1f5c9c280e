"""SSE framing (`mcpref.transports.sse`): one event per message, on one data line, that every
line reader splits the same way."""

from __future__ import annotations

import json

from mcpref.jsonrpc import notification
from mcpref.transports.sse import HEADERS, KEEP_ALIVE, event


def test_a_message_is_one_event_on_one_data_line() -> None:
    message = notification("notifications/progress", {"progressToken": "t", "progress": 1})
    framed = event(message)
    assert framed == b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress",' + (
        b'"params":{"progressToken":"t","progress":1}}\n\n'
    )


def test_line_breaks_only_splitlines_sees_are_escaped() -> None:
    text = "a\x85b\u2028c\u2029d é\n"
    framed = event(notification("notifications/message", {"level": "info", "data": text}))
    assert framed.decode().splitlines() == framed.decode().split("\n")[:-1]
    lines = framed.decode().split("\n")
    assert lines[0] == "event: message" and lines[2:] == ["", ""]
    assert lines[1].startswith("data: ")
    assert "\\u0085" in lines[1] and "\\u2028" in lines[1] and "\\u2029" in lines[1]
    assert "é" in lines[1], "other non-ASCII text is written as it is"
    assert json.loads(lines[1].removeprefix("data: "))["params"]["data"] == text


def test_a_keep_alive_is_a_comment_line() -> None:
    assert KEEP_ALIVE == b": keep-alive\n\n"


def test_a_stream_says_its_type_and_asks_not_to_be_cached_buffered_or_sniffed() -> None:
    assert HEADERS == [
        (b"content-type", b"text/event-stream"),
        (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"),
        (b"x-content-type-options", b"nosniff"),
    ]
