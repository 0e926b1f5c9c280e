"""A page's frame against what the server sent: every difference, with where it is.

JSON is compared structurally: object keys in any order, arrays in order, and types exactly
(`1`, `1.0` and `true` all differ), so no field can be missing, added or different unnoticed.
A `<<kind>>` placeholder matches one value of its kind (see `placeholders`).
"""

from __future__ import annotations

import difflib
import json
from http import HTTPStatus
from typing import Any

from . import placeholders
from .messages import Event, Response, media_type, parse_sse

#: The comment line a page ends an SSE block with when the stream stays open (a listen stream).
OPEN_STREAM = "(stream still open)"
#: The same, when a later ```sse block on the page reads what arrives on the stream next.
KEEP_OPEN = "(stream still open, continued below)"


def stream_marker(events: list[Event]) -> str | None:
    """How a page's SSE block says the stream goes on: OPEN_STREAM, KEEP_OPEN, or None (it ended)."""
    if not events:
        return None
    comments = events[-1].comments
    return KEEP_OPEN if KEEP_OPEN in comments else OPEN_STREAM if OPEN_STREAM in comments else None


def marker_in(block: str) -> str | None:
    """The same, read from a block's last line: a continued stream may show no new event at all."""
    lines = [line.strip() for line in block.splitlines() if line.strip()]
    last = lines[-1][1:].strip() if lines and lines[-1].startswith(":") else None
    return last if last in (OPEN_STREAM, KEEP_OPEN) else None


def json_differences(expected: Any, actual: Any, path: str = "$", captures: dict[str, Any] | None = None) -> list[str]:
    """Every difference by JSON path; `<<kind:name>>` placeholders store the value in `captures`."""
    kind = placeholders.kind_of(expected)
    if kind is not None:
        problem = placeholders.check(kind, actual)
        name = placeholders.capture_name(expected)
        if name and not problem and captures is not None:
            captures[name] = actual
        return [f"{path}: {problem}"] if problem else []
    if placeholders.embedded(expected):
        try:
            fits = isinstance(actual, str) and placeholders.text_matcher(expected)(actual)
        except ValueError as exc:
            return [f"{path}: {exc}"]
        return [] if fits else [f"{path}: the page says {short(expected)}, the server sent {short(actual)}"]
    if isinstance(expected, dict) and isinstance(actual, dict):
        found = [f"{path}.{key}: missing from the server's answer" for key in expected if key not in actual]
        found += [
            f"{path}.{key}: not on the page, but the server sent {short(actual[key])}"
            for key in actual
            if key not in expected
        ]
        for key in expected:
            if key in actual:
                found += json_differences(expected[key], actual[key], f"{path}.{key}", captures)
        return found
    if isinstance(expected, list) and isinstance(actual, list):
        found = []
        if len(expected) != len(actual):
            found.append(f"{path}: the page shows {len(expected)} items, the server sent {len(actual)}")
        for index, (e, a) in enumerate(zip(expected, actual, strict=False)):
            found += json_differences(e, a, f"{path}[{index}]", captures)
        return found
    if type(expected) is not type(actual) or expected != actual:
        return [f"{path}: the page says {short(expected)}, the server sent {short(actual)}"]
    return []


def short(value: Any) -> str:
    """A value as JSON, cut to fit in a line of a report."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def response_differences(
    expected: Response,
    status: int,
    headers: list[tuple[str, str]],
    body: str,
    captures: dict[str, Any] | None = None,
    left_open: bool = False,
) -> list[str]:
    """Status, every header the page shows, and the body, read as the page's Content-Type says."""
    found = []
    if expected.status != status:
        found.append(f"status: the page says {expected.status}, the server sent {status}")
    elif expected.reason != HTTPStatus(status).phrase:
        found.append(f"status line: the reason for {status} is {HTTPStatus(status).phrase!r}, not {expected.reason!r}")
    actual_headers = Response(headers, body)
    for name, value in expected.headers:
        sent = actual_headers.header(name)
        if sent is None:
            found.append(f"header {name}: on the page, but the server did not send it")
            continue
        kind = placeholders.kind_of(value)
        problem = (
            placeholders.check(kind, sent)
            if kind
            else (None if sent == value else f"the page says {value!r}, the server sent {sent!r}")
        )
        if problem:
            found.append(f"header {name}: {problem}")
    return found + body_differences(expected, actual_headers, captures, left_open)


def body_differences(
    expected: Response, actual: Response, captures: dict[str, Any] | None = None, left_open: bool = False
) -> list[str]:
    kind = media_type(expected)
    if not expected.body.strip():
        return [] if not actual.body else [f"body: the page shows none, the server sent {actual.body[:80]!r}"]
    if not expected.header("content-type"):
        return ["body: a response block with a body must show its Content-Type"]
    if kind != media_type(actual):
        return [f"body: the page shows {kind or 'no Content-Type'}, the server sent {media_type(actual) or 'none'}"]
    if kind == "application/json":
        try:
            sent = json.loads(actual.body)
        except ValueError:
            return [f"body: the server did not send JSON: {actual.body[:80]!r}"]
        try:
            shown = json.loads(expected.body)
        except ValueError as exc:
            return [f"body: the page's JSON is malformed: {exc}"]
        return json_differences(shown, sent, "$", captures)
    if kind == "text/event-stream":
        try:
            shown = parse_sse(expected.body)
        except ValueError as exc:
            return [f"body: the page's event stream is malformed: {exc}"]
        return stream_differences(shown, actual.body, captures, left_open)
    return [] if expected.body.rstrip("\n") == actual.body.rstrip("\n") else ["body: the text differs"]


def stream_differences(
    shown: list[Event],
    sent: str,
    captures: dict[str, Any] | None = None,
    left_open: bool = False,
    marker: str | None = None,
) -> list[str]:
    """Events one by one, then whether the stream was still open where the page says it was."""
    found = event_differences(shown, parse_sse(sent), captures)
    marker = marker or stream_marker(shown)
    if (marker is not None) != left_open:
        found.append(
            f"SSE: the server kept the stream open; end the block with the comment line ': {OPEN_STREAM}'"
            if left_open
            else f"SSE: the page says ': {marker}', but the stream ended"
        )
    return found


def event_differences(expected: list[Event], actual: list[Event], captures: dict[str, Any] | None = None) -> list[str]:
    found = []
    if len(expected) != len(actual):
        found.append(f"SSE: the page shows {len(expected)} events, the server sent {len(actual)}")
    for index, (e, a) in enumerate(zip(expected, actual, strict=False)):
        if e.name != a.name:
            found.append(f"SSE event {index + 1}: the page says event {e.name!r}, the server sent {a.name!r}")
        found += json_differences(e.data, a.data, f"SSE event {index + 1} $", captures)
    return found


def report(where: str, differences: list[str], expected_text: str, actual_text: str) -> str:
    """What a contributor reads when a frame fails: where, each difference, then a diff."""
    diff = difflib.unified_diff(
        expected_text.splitlines(), actual_text.splitlines(), "page", "server", lineterm="", n=2
    )
    lines = [f"{where}: the page does not match the reference server", ""]
    lines += [f"  - {difference}" for difference in differences]
    lines += ["", *diff, "", "Fix the page, or refresh it from the server: ./scripts/docs --update-frames"]
    return "\n".join(lines)
