"""What an SSE stream shows on the site: one event per block, its JSON pretty-printed.

Presentation only, like the folds (`tests.docs.folds`). The page's Markdown keeps the stream as it
goes over the wire (`event: message`, one compact `data:` line, a blank line), which the harness
compares event by event as before; the site (`frames_hook.py`) keeps those lines in the block's
`<code>`, hidden, so the try-it console reads and Copy copies the wire, and shows beside them each
event as a block of its own. `events` is the one place that decides where a stream starts and how
it splits, used by the hook and by the harness's test that a changed event still fails.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

#: The width an event's JSON is laid out in: an object or array that fits stays on one line.
WIDTH = 60

#: A line of a stream: a field (`data: ...`), a comment (`: ...`), or the blank line ending an event.
_STREAM_LINE = re.compile(r"^(?:(?P<name>data|event|id|retry):(?P<value>.*)|:.*|)$")
_REQUEST_OR_STATUS = re.compile(r"^(?:[A-Z]+ \S+ HTTP/1\.1|HTTP/1\.1 \d{3}\b.*)$")


@dataclass
class Event:
    """Lines `first` to `last` (0-based, inclusive) of a block: one event, or comments alone."""

    first: int
    last: int
    #: The `event:`, `id:` and `retry:` lines, as (name, value), in their order: the event's label.
    fields: list[tuple[str, str]] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    @property
    def json(self) -> str | None:
        """The data pretty-printed, if it is JSON (a page's placeholders sit in JSON strings)."""
        if not self.data:
            return None
        try:
            value = json.loads("\n".join(self.data))
        except ValueError:
            return None
        return pretty(value)


def pretty(value: Any, indent: int = 0, used: int = 0) -> str:
    """JSON indented by two, except that an object or array that fits in `WIDTH` (with the
    `used` characters before it on its line) stays on one line: an event's small objects
    (`{"type": "text", "text": "..."}`) read at a glance, and a stream is not ten lines an event.
    docs/assets/try-it.js lays out a live stream the same way (its `pretty`)."""
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if not isinstance(value, (dict, list)) or not value or indent + used + len(flat) <= WIDTH:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, list):
        items = [inner + pretty(item, indent + 2) for item in value]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    members = []
    for key, item in value.items():
        name = json.dumps(key, ensure_ascii=False) + ": "
        members.append(inner + name + pretty(item, indent + 2, len(name)))
    return "{\n" + ",\n".join(members) + "\n" + " " * indent + "}"


def stream_start(text: str) -> int | None:
    """The line where a block's stream begins: after the head of an HTTP frame whose Content-Type
    is text/event-stream, or 0 for a block that is a stream alone (a ```sse block); else None."""
    lines = text.split("\n")
    if _REQUEST_OR_STATUS.match(lines[0]):
        if "" not in lines:
            return None
        blank = lines.index("")
        media = [
            line.split(":", 1)[1].strip().lower() for line in lines[1:blank] if line.lower().startswith("content-type:")
        ]
        if not media or not media[0].startswith("text/event-stream"):
            return None
        start = blank + 1
    else:
        start = 0
    body = [line for line in lines[start:] if line.strip()]
    if not body or not all(_STREAM_LINE.match(line) for line in body):
        return None
    if not any(line.startswith(("data:", "event:")) for line in body):
        return None
    return start


def events(text: str) -> list[Event]:
    """The events of a block's stream, in order (none if the block holds no stream)."""
    start = stream_start(text)
    if start is None:
        return []
    lines = text.split("\n")
    found: list[Event] = []
    current: Event | None = None
    for index in range(start, len(lines)):
        line = lines[index]
        if not line.strip():
            current = None
            continue
        if current is None:
            current = Event(index, index)
            found.append(current)
        current.last = index
        matched = _STREAM_LINE.match(line)
        assert matched is not None  # stream_start checked every line
        if matched["name"] is None:
            current.comments.append(line)
        elif matched["name"] == "data":
            current.data.append(matched["value"].removeprefix(" "))
        else:
            current.fields.append((matched["name"], matched["value"].removeprefix(" ")))
    return found
