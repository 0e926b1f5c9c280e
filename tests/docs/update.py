"""Rendering what the server sent in the page's own form, for failure diffs and `--update-frames`.

A refreshed block keeps the page's choices: the same headers shown (in the same order and
spelling), placeholders wherever they still match, and the same layout for JSON and SSE.
Rewrites are collected while the suite runs and written when it ends, last block first.
"""

from __future__ import annotations

import contextlib
import json
from collections import defaultdict
from http import HTTPStatus
from pathlib import Path
from typing import Any

from . import placeholders, variance
from .compare import OPEN_STREAM, marker_in, stream_marker
from .messages import Event, Response, media_type, parse_sse

#: path → [(start, end, new text)] of block contents to replace when the session ends.
PENDING: dict[Path, list[tuple[int, int, str]]] = defaultdict(list)


def keep_placeholders(expected: Any, actual: Any) -> Any:
    """`actual`, except where the page's placeholder still fits the value it stands for."""
    kind = placeholders.kind_of(expected)
    if kind is not None and placeholders.check(kind, actual) is None:
        return expected
    if placeholders.embedded(expected) and isinstance(actual, str):
        with contextlib.suppress(ValueError):  # an unknown kind: the real value replaces it
            if placeholders.text_matcher(expected)(actual):
                return expected
    if isinstance(expected, dict) and isinstance(actual, dict):
        return {key: keep_placeholders(expected.get(key), value) for key, value in actual.items()}
    if isinstance(expected, list) and isinstance(actual, list):
        return [keep_placeholders(expected[i] if i < len(expected) else None, v) for i, v in enumerate(actual)]
    return actual


def in_page_order(expected: Any, written: Any) -> Any:
    """`written` with each object's keys in the order the page shows them, and the keys the page
    lacks after those, in the server's order. Key order means nothing to JSON or to the comparison,
    so a refresh keeps the order the page's author chose instead of rewriting a frame that matched."""
    if isinstance(expected, dict) and isinstance(written, dict):
        keys = [key for key in expected if key in written] + [key for key in written if key not in expected]
        return {key: in_page_order(expected.get(key), written[key]) for key in keys}
    if isinstance(expected, list) and isinstance(written, list):
        return [in_page_order(expected[i] if i < len(expected) else None, v) for i, v in enumerate(written)]
    return written


def dump(value: Any, indent: int = 0, used: int = 0, width: int = 96) -> str:
    """Pretty JSON that stays short: a container that fits on its line is written on one line."""
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if not isinstance(value, dict | list) or not value or indent + used + len(flat) <= width:
        return flat
    inner = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            name = json.dumps(key, ensure_ascii=False) + ": "
            items.append(inner + name + dump(item, indent + 2, len(name), width))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [inner + dump(item, indent + 2, 0, width) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def render_response(
    page: Response,
    status: int,
    headers: list[tuple[str, str]],
    body: str,
    left_open: bool = False,
    second: tuple[list[tuple[str, str]], str] | None = None,
    refused: list[str] | None = None,
) -> str:
    """The server's answer in the page's form. With `second` (the same request answered again,
    see `variance`), what differs between the two runs is written as a placeholder, or refused
    into `refused`; without it, the page's placeholders are kept wherever they still fit."""
    refused = [] if refused is None else refused
    sent = Response(headers, body)
    again = Response(*second) if second is not None else None
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
    shown = page.headers
    if body and not page.header("content-type") and sent.header("content-type"):
        # A body is compared as its Content-Type says, so a refreshed block always shows it.
        shown = [("Content-Type", sent.header("content-type") or ""), *shown]
    for name, value in shown:
        actual = sent.header(name)
        if actual is None:
            continue
        if again is not None:
            lines.append(f"{name}: {variance.header(value, actual, again.header(name), name, refused)}")
            continue
        kind = placeholders.kind_of(value)
        lines.append(f"{name}: {value if kind and placeholders.check(kind, actual) is None else actual}")
    text = "\n".join(lines) + "\n"
    if not body:
        return text
    kind = media_type(sent)
    if kind == "application/json":
        expected = json.loads(page.body) if media_type(page) == kind and page.body.strip() else None
        value = json.loads(body)
        if again is not None and media_type(again) == kind:
            written = variance.merge(expected, value, json.loads(again.body), "$", refused)
        else:
            written = keep_placeholders(expected, value)
        return text + "\n" + dump(in_page_order(expected, written)) + "\n"
    if kind == "text/event-stream":
        try:
            events = parse_sse(page.body) if media_type(page) == kind and page.body.strip() else []
        except ValueError:  # a skeleton or a broken page block: nothing of it is worth keeping
            events = []
        other = again.body if again is not None and media_type(again) == kind else None
        return text + "\n" + render_events(events, body, left_open, marker_in(page.body), other, refused)
    return text + "\n" + body + ("" if body.endswith("\n") else "\n")


def render_events(
    shown: list[Event],
    body: str,
    left_open: bool,
    marker: str | None = None,
    second: str | None = None,
    refused: list[str] | None = None,
) -> str:
    """SSE events as a page writes them, keeping the page's placeholders and its open-stream note."""
    events = []
    others = parse_sse(second) if second is not None else None
    for index, event in enumerate(parse_sse(body)):
        expected = shown[index].data if index < len(shown) else None
        if others is not None and len(others) == len(parse_sse(body)):
            where = f"SSE event {index + 1} $"
            data = variance.merge(expected, event.data, others[index].data, where, [] if refused is None else refused)
        else:
            data = keep_placeholders(expected, event.data)
        data = in_page_order(expected, data)
        lines = [f"event: {event.name}"] if event.name else []
        # One `data:` line per event, in the compact form the server writes on the wire.
        lines.append("data: " + json.dumps(data, ensure_ascii=False, separators=(",", ":")))
        events.append("\n".join(lines))
    if left_open:
        if not events:
            events.append("")
        events[-1] += f"\n: {marker or stream_marker(shown) or OPEN_STREAM}"
    return "\n\n".join(events).lstrip("\n") + "\n"


def schedule(path: Path, start: int, end: int, text: str) -> None:
    PENDING[Path(path)].append((start, end, text))


def apply_pending() -> dict[Path, int]:
    """Write every scheduled rewrite; returns how many blocks each rewritten file got."""
    done = {}
    for path, edits in PENDING.items():
        text = path.read_text(encoding="utf-8")
        for start, end, new in sorted(edits, reverse=True):
            text = text[:start] + new + text[end:]
        path.write_text(text, encoding="utf-8")
        done[path] = len(edits)
    PENDING.clear()
    return done


def summary(done: dict[Path, int]) -> list[str]:
    """One line per rewritten file, then the total."""
    lines = [f"{path}: {count} frame(s) refreshed from the reference server" for path, count in done.items()]
    return [*lines, f"{sum(done.values())} frame(s) refreshed in {len(done)} file(s); review them with git diff"]
