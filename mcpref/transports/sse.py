"""Server-Sent Events framing for Streamable HTTP response streams.

Each JSON-RPC message is one event: `event: message`, one `data:` line (our JSON never holds a
newline), and a blank line. A line starting with `:` is a comment, used as a keep-alive that
clients ignore (basic/transports/streamable-http.mdx §Streaming).
"""

from __future__ import annotations

from typing import Any

from ..jsonrpc import encode

HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    # Asks proxies such as nginx not to hold events back (streamable-http.mdx SHOULD).
    (b"x-accel-buffering", b"no"),
    (b"x-content-type-options", b"nosniff"),
]

KEEP_ALIVE = b": keep-alive\n\n"

#: Characters SSE keeps inside a line but `str.splitlines` breaks at (NEL, LINE and PARAGRAPH
#: SEPARATOR). They can only occur inside JSON strings, so writing them as JSON escapes changes
#: nothing a JSON parser sees, and keeps clients that read lines with splitlines (httpx's
#: `iter_lines`, for one) from cutting an event in two.
_SPLITLINES_ONLY = [(char.encode(), f"\\u{ord(char):04x}".encode()) for char in "\x85\u2028\u2029"]


def event(message: dict[str, Any]) -> bytes:
    data = encode(message)
    if not data.isascii():  # the three characters are not ASCII; most messages are
        for raw, escaped in _SPLITLINES_ONLY:
            data = data.replace(raw, escaped)
    return b"event: message\ndata: " + data + b"\n\n"
