"""What a frame shows folded: the boilerplate every request or result repeats verbatim.

Presentation only. The page's Markdown keeps the whole frame, which the harness sends and compares
byte for byte as before; the site (`frames_hook.py`) wraps the lines of each fold in the built page
so that a reader sees a one-line sign of what is folded ("… _meta as in every request"), opens it
in place, and copies the whole frame. `folds` is the one place that decides what folds, used both by
the hook and by the harness's test that a folded frame which differs from the server still fails.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"
#: The request `_meta` of a client that declares no capabilities: most frames on the site.
PLAIN_REQUEST_META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}
#: The three headers every Streamable HTTP request on the site carries, in this order.
REQUEST_HEADERS = (
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
    "MCP-Protocol-Version: 2026-07-28",
)

HEADERS_LABEL = "… Content-Type, Accept, MCP-Protocol-Version as in every request"

_OPENS = re.compile(r'^(?P<indent>\s*)"_meta": \{\s*$')


@dataclass(frozen=True)
class Fold:
    """Lines `first` to `last` (0-based, inclusive) of a block, shown as `label` until opened."""

    first: int
    last: int
    label: str


def folds(text: str) -> list[Fold]:
    """The folds of one code block's text (a request or response frame, or JSON)."""
    lines = text.split("\n")
    found = _header_fold(lines)
    index = 0
    while index < len(lines):
        opens = _OPENS.match(lines[index])
        close = _closing(lines, index, opens["indent"]) if opens else None
        if opens is None or close is None:
            index += 1
            continue
        label = _meta_label("\n".join(lines[index : close + 1]).rstrip().rstrip(","))
        if label:
            found.append(Fold(index, close, label))
        index = close + 1
    return found


def _header_fold(lines: list[str]) -> list[Fold]:
    """A request whose head carries the three usual headers, one after the other."""
    if not re.match(r"^[A-Z]+ \S+ HTTP/1\.1$", lines[0]):
        return []
    for start in range(1, len(lines) - len(REQUEST_HEADERS) + 1):
        if not lines[start].strip():
            break
        if tuple(lines[start : start + len(REQUEST_HEADERS)]) == REQUEST_HEADERS:
            return [Fold(start, start + len(REQUEST_HEADERS) - 1, HEADERS_LABEL)]
    return []


def _closing(lines: list[str], start: int, indent: str) -> int | None:
    """The line that closes the object opened at `start`: the next one at the same indent."""
    for index in range(start + 1, len(lines)):
        line = lines[index]
        if line.startswith(indent + "}") and not line.startswith(indent + " "):
            return index
        if line.strip() and not line.startswith(indent + " "):
            return None
    return None


def _meta_label(member: str) -> str | None:
    try:
        meta = json.loads("{" + member + "}")["_meta"]
    except (ValueError, KeyError):
        return None
    if meta == PLAIN_REQUEST_META:
        return "… _meta as in every request"
    if isinstance(meta, dict) and list(meta) == [SERVER_INFO] and isinstance(meta[SERVER_INFO], dict):
        info = meta[SERVER_INFO]
        return f"… _meta: serverInfo ({info.get('name')} {info.get('version')}) as in every result"
    return None
