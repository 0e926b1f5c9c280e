"""A placeholder must stand for a value that varies: proved by asking the server twice.

The shape check alone (`placeholders.check`) would let `<<int>>` stand for an error code, a
value every run answers the same, and the page would teach that it changes. So a frame that
shows a placeholder is sent once more, to another fresh app, while every clock the server reads
says a day and seven seconds earlier (time-machine moves `time.time`, `datetime.now` and the
rest; asyncio's monotonic clock is left alone) and the randomness is new. A placeholder whose
value is the same in both answers stands for a constant, and the frame fails, naming it.

The same pair of answers drives `--update-frames`: a value that differs between the two runs is
written as the placeholder whose kind fits it (`merge`), and one that no kind fits is refused by
name, so a refreshed page never holds a literal that only matched the run that wrote it.

Where a block cannot be sent again on its own (a python block's Output, a console command, an
```` ```sse ```` continuation of a stream on a shared server), placeholders are refused.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import time_machine

from . import placeholders
from .compare import short
from .messages import Response, media_type, parse_sse

#: Where the second run's clocks stand, relative to the first: every date and second differs.
SHIFT = timedelta(days=-1, seconds=-7)
#: The kinds `merge` tries for a value that varies, most specific first. `requestState` fields
#: try `sealed-state` first (the same shape as `signed-handle`).
ORDER = ("iso-datetime", "http-date", "uuid", "signed-handle", "sealed-state", "base64url", "int")

#: The least length at which a changed run of base64url letters is taken for an opaque token.
OPAQUE = 16

Answer = tuple[list[tuple[str, str]], str]  # headers, body


@contextmanager
def shifted_clock() -> Iterator[None]:
    """Every wall clock in the process reads `SHIFT` earlier and keeps ticking."""
    with time_machine.travel(datetime.now(UTC) + SHIFT, tick=True):
        yield


# -- checking: every placeholder's value differs between the two runs --------------------------


def slots(page: Response, answer: Answer) -> list[tuple[str, str, Any]]:
    """(where, kind, the value sent) for every placeholder the page's response block shows."""
    headers, body = answer
    sent = Response(headers, body)
    found = []
    for name, value in page.headers:
        kind = placeholders.kind_of(value)
        if kind is not None:
            found.append((f"header {name}", kind, sent.header(name)))
    kind = media_type(page)
    if not page.body.strip() or kind != media_type(sent):
        return found
    try:
        if kind == "application/json":
            found += _json_slots(json.loads(page.body), json.loads(body), "$")
        elif kind == "text/event-stream":
            for index, (shown, event) in enumerate(zip(parse_sse(page.body), parse_sse(body), strict=False)):
                found += _json_slots(shown.data, event.data, f"SSE event {index + 1} $")
    except ValueError:  # the comparison itself reports a body that does not parse
        return found
    return found


def _json_slots(expected: Any, actual: Any, path: str) -> list[tuple[str, str, Any]]:
    kind = placeholders.kind_of(expected)
    if kind is not None:
        return [(path, kind, actual)]
    if placeholders.embedded(expected):
        values = placeholders.text_values(expected, actual) if isinstance(actual, str) else None
        return [(path, kind, value) for kind, value in values or []]
    if isinstance(expected, dict) and isinstance(actual, dict):
        return [
            s for key in expected if key in actual for s in _json_slots(expected[key], actual[key], f"{path}.{key}")
        ]
    if isinstance(expected, list) and isinstance(actual, list):
        return [
            s for i, (e, a) in enumerate(zip(expected, actual, strict=False)) for s in _json_slots(e, a, f"{path}[{i}]")
        ]
    return []


def shows_placeholders(page: Response) -> bool:
    return placeholders.contains_placeholder(page.body) or any(placeholders.kind_of(value) for _, value in page.headers)


def constants(page: Response, first: Answer, second: Answer) -> list[str]:
    """Every placeholder of `page` that stood for the same value in both runs."""
    one, two = slots(page, first), slots(page, second)
    if [(where, kind) for where, kind, _ in one] != [(where, kind) for where, kind, _ in two]:
        return [
            "placeholders: the answer to the same request, sent again to a fresh app a day earlier, does not fit "
            "the frame, so no placeholder on it can be shown to vary (a frame whose answer depends on an earlier "
            "block's state cannot hold one)"
        ]
    return [
        f"{where}: <<{kind}>> stood for {short(a)} in both runs (the second a day earlier, on a fresh app); "
        "a value that does not vary is written as it is, not as a placeholder"
        for (where, kind, a), (_, _, b) in zip(one, two, strict=True)
        if a == b and type(a) is type(b)
    ]


# -- refreshing: a value that differs between the two runs becomes a placeholder -------------


def merge(expected: Any, first: Any, second: Any, path: str, refused: list[str], key: str | None = None) -> Any:
    """What `--update-frames` writes: `first`, with a placeholder wherever the two runs differ.

    The page's own placeholder is kept where it fits both values (so a capture name survives);
    a placeholder over a value that did not vary is dropped for the value itself."""
    if type(first) is type(second) and first == second:
        return first
    kind = placeholders.kind_of(expected)
    if kind and placeholders.check(kind, first) is None and placeholders.check(kind, second) is None:
        return expected
    if placeholders.embedded(expected) and isinstance(first, str) and isinstance(second, str):
        try:
            if placeholders.text_matcher(expected)(first) and placeholders.text_matcher(expected)(second):
                return expected
        except ValueError:  # an unknown kind on the page: the value replaces it
            pass
    if isinstance(first, dict) and isinstance(second, dict) and first.keys() == second.keys():
        shown = expected if isinstance(expected, dict) else {}
        return {k: merge(shown.get(k), v, second[k], f"{path}.{k}", refused, k) for k, v in first.items()}
    if isinstance(first, list) and isinstance(second, list) and len(first) == len(second):
        shown = expected if isinstance(expected, list) else []
        return [
            merge(shown[i] if i < len(shown) else None, v, second[i], f"{path}[{i}]", refused)
            for i, v in enumerate(first)
        ]
    if isinstance(first, int) and isinstance(second, int) and not isinstance(first | second, bool):
        return "<<int>>"
    if isinstance(first, str) and isinstance(second, str):
        written = tokenized(first, second, key)
        if written is not None:
            return written
    refused.append(
        f"{path}: {short(first)} in one run, {short(second)} in the next, and no placeholder kind fits "
        f"(known: {', '.join(placeholders.KINDS)}); add one in tests/docs/placeholders.py or make the server stable"
    )
    return first


def header(expected: str, first: str, second: str | None, name: str, refused: list[str]) -> str:
    """The same for one header value."""
    if second is None or first == second:
        return first
    return str(merge(expected, first, second, f"header {name}", refused))


def tokenized(first: str, second: str, key: str | None = None) -> str | None:
    """`first` with every stretch that differs from `second` written as `<<kind>>`, or None
    when some difference is not a whole value of any kind."""
    order = ("sealed-state", *ORDER) if key == "requestState" else ORDER
    matcher = difflib.SequenceMatcher(None, first, second, autojunk=False)
    tokens: dict[tuple[int, int], str] = {}
    for tag, start, end, _, _ in matcher.get_opcodes():
        if tag == "equal":
            continue
        token = _covering(first, start, end, order)
        if token is None:
            return None
        tokens[token[:2]] = token[2]
    spans = sorted(tokens.items())
    if any(a[0][1] > b[0][0] for a, b in zip(spans, spans[1:], strict=False)):
        return None
    written, position = [], 0
    for (start, end), kind in spans:
        written += [first[position:start], f"<<{kind}>>"]
        position = end
    written.append(first[position:])
    result = "".join(written)
    fits = placeholders.text_matcher(result)
    return result if fits(first) and fits(second) else None


def _covering(text: str, start: int, end: int, order: tuple[str, ...]) -> tuple[int, int, str] | None:
    """The first whole value of a kind in `text` that contains the stretch [start, end)."""
    for kind in order:
        spec = placeholders.KINDS[kind]
        if spec.json_type is not str and kind != "int":
            continue
        for found in re.finditer(spec.pattern, text):
            if kind == "base64url" and found.end() - found.start() < OPAQUE:
                continue  # a short word that changed is a changed word, not a token
            if found.start() <= start and end <= found.end() and found.end() > found.start():
                return found.start(), found.end(), kind
    return None
