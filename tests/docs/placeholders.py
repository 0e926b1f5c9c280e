"""Volatile values on a page: `<<kind>>`, and nothing else, stands for a value that changes per run.

A placeholder is a whole JSON string (`"issuedAt": "<<iso-datetime>>"`), a whole header value
(`Date: <<http-date>>`) or a token inside a line of plain-text output. The kind says what the
real value must look like; an unknown kind is an error, so nothing is ever silently ignored.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

PLACEHOLDER = re.compile(r"<<([a-z][a-z0-9-]*)(?::([a-z][a-z0-9_]*))?>>")
#: A value captured from an earlier response on the same page, used in a later request.
CAPTURED = re.compile(r"\{\{([a-z][a-z0-9_]*)\}\}")


@dataclass(frozen=True)
class Kind:
    description: str
    #: The text form, used in headers and plain-text output.
    pattern: str
    #: The JSON form: which Python type the decoded value must have.
    json_type: type | tuple[type, ...] = str

    def accepts(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.json_type):
            return False
        return re.fullmatch(self.pattern, str(value)) is not None


KINDS: dict[str, Kind] = {
    "iso-datetime": Kind(
        "an RFC 3339 UTC timestamp, e.g. 2026-07-28T09:30:00Z", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"
    ),
    "http-date": Kind(
        "an HTTP date (IMF-fixdate), e.g. Tue, 28 Jul 2026 09:30:00 GMT",
        r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
        r"\d{4} \d\d:\d\d:\d\d GMT",
    ),
    "int": Kind("a JSON integer", r"-?\d+", int),
    "base64url": Kind("an opaque base64url token (a cursor, a sealed requestState)", r"[A-Za-z0-9_-]+={0,2}"),
    "uuid": Kind("a lower-case UUID", r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
    "sealed-state": Kind(
        "a sealed requestState: base64url payload '.' base64url signature", r"[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{43}"
    ),
    "signed-handle": Kind(
        "a server-minted handle: base64url payload '.' base64url HMAC-SHA256", r"[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{43}"
    ),
}


def embedded(value: Any) -> bool:
    """True for a string that has `<<kind>>` tokens inside other text (a timestamp in a sentence)."""
    return isinstance(value, str) and PLACEHOLDER.search(value) is not None and kind_of(value) is None


def kind_of(value: Any) -> str | None:
    """The placeholder kind if `value` is a whole placeholder string, else None."""
    if isinstance(value, str):
        found = PLACEHOLDER.fullmatch(value)
        if found:
            return found.group(1)
    return None


def capture_name(value: Any) -> str | None:
    """`name` for a whole-value placeholder written `<<kind:name>>`, which captures the real value."""
    found = PLACEHOLDER.fullmatch(value) if isinstance(value, str) else None
    return found.group(2) if found else None


def fill(text: str, captured: dict[str, Any]) -> str:
    """Replace each `{{name}}` with the value captured under that name; unknown names fail."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in captured:
            raise KeyError(f"{{{{{name}}}}} is used before any response captured it (write <<kind:{name}>> there)")
        return str(captured[name])

    return CAPTURED.sub(value, text)


def check(kind: str, actual: Any) -> str | None:
    """None if `actual` fits the placeholder kind, else why not."""
    spec = KINDS.get(kind)
    if spec is None:
        return f"unknown placeholder <<{kind}>> (known: {', '.join(sorted(KINDS))})"
    if not spec.accepts(actual):
        return f"<<{kind}>> needs {spec.description}, got {actual!r}"
    return None


def text_pattern(expected: str) -> re.Pattern[str]:
    """`expected` as a regex: each `<<kind>>` token becomes a group matching its kind's pattern."""
    parts, position = [], 0
    for token in PLACEHOLDER.finditer(expected):
        kind = token.group(1)
        if kind not in KINDS:
            raise ValueError(check(kind, None))
        parts.append(re.escape(expected[position : token.start()]))
        parts.append(f"({KINDS[kind].pattern})")
        position = token.end()
    parts.append(re.escape(expected[position:]))
    return re.compile("".join(parts), re.DOTALL)


def text_matcher(expected: str) -> Callable[[str], bool]:
    """A matcher for plain text where `<<kind>>` tokens stand for their kind's pattern."""
    pattern = text_pattern(expected)
    return lambda actual: pattern.fullmatch(actual) is not None


def text_values(expected: str, actual: str) -> list[tuple[str, str]] | None:
    """(kind, value) for each `<<kind>>` token of `expected`, as `actual` fills it; None if it does not fit."""
    found = text_pattern(expected).fullmatch(actual)
    if found is None:
        return None
    # A kind's own pattern may hold groups: take the outer group of each token, in order.
    kinds = [token.group(1) for token in PLACEHOLDER.finditer(expected)]
    values, group = [], 1
    for kind in kinds:
        values.append((kind, found.group(group)))
        group += 1 + re.compile(KINDS[kind].pattern).groups
    return values


def contains_placeholder(value: Any) -> bool:
    if isinstance(value, dict):
        return any(contains_placeholder(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_placeholder(v) for v in value)
    return isinstance(value, str) and PLACEHOLDER.search(value) is not None
