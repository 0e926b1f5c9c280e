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
]

KEEP_ALIVE = b": keep-alive\n\n"


def event(message: dict[str, Any]) -> bytes:
    return b"event: message\ndata: " + encode(message) + b"\n\n"
