"""Whole HTTP messages as pages write them: a start line, headers, a blank line, the body.

A request block is what a client sends (`POST /mcp HTTP/1.1`); a response block is what the
server answered (`HTTP/1.1 200 OK`). A response body is read by its shown `Content-Type`: JSON
(`application/json`) or an SSE stream (`text/event-stream`), event by event.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

REQUEST_LINE = re.compile(r"(?P<method>[A-Z]+) (?P<target>/\S*) HTTP/1\.1")
STATUS_LINE = re.compile(r"HTTP/1\.1 (?P<status>\d{3}) (?P<reason>.+)")
HEADER_LINE = re.compile(r"(?P<name>[!#$%&'*+.^_`|~0-9A-Za-z-]+): ?(?P<value>.*)")


class FrameSyntaxError(ValueError):
    """A block that is not a well-formed HTTP message; `line` is its offset inside the block."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class Message:
    headers: list[tuple[str, str]]
    body: str

    def header(self, name: str) -> str | None:
        values = [value for key, value in self.headers if key.lower() == name.lower()]
        return ", ".join(values) if values else None


@dataclass
class Request(Message):
    method: str = "POST"
    target: str = "/mcp"

    def json(self) -> Any:
        return json.loads(self.body) if self.body.strip() else None


@dataclass
class Response(Message):
    status: int = 200
    reason: str = "OK"


@dataclass
class Event:
    """One SSE event: its name (None when the block has no `event:` line) and its JSON data."""

    name: str | None
    data: Any
    comments: list[str] = field(default_factory=list)


def parse(block: str) -> Request | Response:
    lines = block.rstrip("\n").split("\n")
    if not lines or not lines[0].strip():
        raise FrameSyntaxError("an http block starts with a request line or a status line")
    start = lines[0].rstrip()
    headers: list[tuple[str, str]] = []
    index = 1
    while index < len(lines) and lines[index].strip():
        found = HEADER_LINE.fullmatch(lines[index].rstrip())
        if found is None:
            raise FrameSyntaxError(f"not a header line: {lines[index]!r}", index)
        headers.append((found["name"], found["value"]))
        index += 1
    body = "\n".join(lines[index + 1 :])
    if request := REQUEST_LINE.fullmatch(start):
        return Request(headers, body, method=request["method"], target=request["target"])
    if status := STATUS_LINE.fullmatch(start):
        return Response(headers, body, status=int(status["status"]), reason=status["reason"])
    raise FrameSyntaxError(f"neither a request line nor a status line: {start!r}")


def parse_sse(text: str) -> list[Event]:
    """Events separated by blank lines; several `data:` lines of one event join with newlines."""
    events = []
    for chunk in re.split(r"\r?\n\r?\n", text.strip()):
        if not chunk.strip():
            continue
        name, data, comments = None, [], []
        for line in chunk.splitlines():
            if line.startswith(":"):
                comments.append(line[1:].strip())
            elif line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
            else:
                raise FrameSyntaxError(f"not an SSE line: {line!r}")
        if not data and name is None:
            if events:  # a comment-only block: keep-alives, or a page's note about the stream
                events[-1].comments.extend(comments)
            continue
        events.append(Event(name, json.loads("\n".join(data)) if data else None, comments))
    return events


def media_type(message: Message) -> str:
    return (message.header("content-type") or "").split(";")[0].strip().lower()
