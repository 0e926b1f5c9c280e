"""JSON bytes to Python values and back: strict, and fast where it can be (under `mcpref.jsonrpc`).

`jsonrpc` says what a message is; this module only turns bytes into values and values into
bytes. orjson does most of the work, several times faster than the standard library; whatever
orjson refuses, or might read or write differently, goes to the standard library instead, so the
values and the bytes are exactly the standard library's. A body that is not JSON is `NotJSON`,
which `jsonrpc.decode_json` answers as a parse error (-32700).
"""

from __future__ import annotations

import json
import json.scanner
import math
import re
from collections.abc import Callable
from typing import Any

import orjson


class NotJSON(ValueError):
    """The bytes are not a JSON text this server reads; the message says why, for the client."""


def decode(body: bytes, max_depth: int, *, yielding: bool = False) -> Any:
    """Decode UTF-8 JSON bytes, refusing bad encodings, lone surrogates, non-JSON numbers and
    nesting deeper than `max_depth`.

    A lone surrogate (`"\\ud800"`) is refused: it is not a character, UTF-8 has no form for it,
    and I-JSON (RFC 7493 §2.1) forbids it; accepted, it reaches handlers as a string that fails
    the first time anything encodes it (a digest, a log line, a database).

    `yielding=True`, for a caller in a worker thread: a body with many objects and arrays (more
    than `YIELDING_CONTAINERS`) is read by the standard library's Python scanner, which lets other
    threads run while it works, instead of orjson, which holds the GIL for the whole body (a
    megabyte of `[]` pairs: about 0.1 s, in which the event loop could not run).

    `NaN`, `Infinity` and numbers too large for a double (`1e999`) are refused: Python would
    read them, but they are not JSON (RFC 8259 §6) and would be written back as invalid JSON.
    Nesting is checked after parsing, and only when the bracket count says the body could be too
    deep, so ordinary messages pay for two `bytes.count` calls and nothing else.

    orjson reads a message into the same values as the standard library, in a fraction of the
    time. What it refuses goes to the standard library, which refuses it too and words the error;
    so does a body with a run of 19 digits, since orjson reads an integer beyond 64 bits as a
    float where Python keeps it exact.
    """
    containers = body.count(b"[") + body.count(b"{")
    if yielding and containers > YIELDING_CONTAINERS:
        # It counts the depth as it goes: no `_deeper_than` passes (one per level) afterwards.
        return _decode_with_stdlib(body, max_depth, _yielding_decoder(max_depth))
    if _LONG_NUMBER in body.translate(_DIGITS_AS_ZERO):
        value = _decode_with_stdlib(body, max_depth)
    else:
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            value = _decode_with_stdlib(body, max_depth)
    if containers > max_depth and _deeper_than(body, max_depth):
        raise _too_deep(max_depth)
    return value


def _decode_with_stdlib(body: bytes, max_depth: int, decoder: json.JSONDecoder | None = None) -> Any:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotJSON(f"body is not valid UTF-8 ({exc.reason})") from None
    try:
        value = (decoder or _DECODER).decode(text)
    except RecursionError:
        raise _too_deep(max_depth) from None
    except ValueError as exc:
        raise NotJSON(str(exc)) from None
    # orjson refuses lone surrogates, so only a body read here can hold one.
    if _ESCAPED_SURROGATE.search(body):
        try:
            _ENCODER.encode(value).encode("utf-8")
        except UnicodeEncodeError as exc:
            escape = exc.object[exc.start].encode("unicode_escape").decode("ascii")
            raise NotJSON(f"a string holds a lone surrogate ({escape}), which UTF-8 cannot carry") from None
    return value


def _not_json(literal: str) -> Any:
    raise ValueError(f"{literal} is not a JSON value")


def _finite_float(text: str) -> float:
    number = float(text)
    if number in (math.inf, -math.inf):
        raise ValueError(f"the number {text[:40]} is too large")
    return number


#: Built once: `json.loads` and `json.dumps` with options build a new decoder or encoder on
#: every call, which costs more than parsing or writing a small message.
_DECODER = json.JSONDecoder(parse_constant=_not_json, parse_float=_finite_float)
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _yielding_decoder(max_depth: int) -> json.JSONDecoder:
    """`_DECODER` with the pure-Python scanner, which gives the GIL up as any Python code does, and
    refuses nesting past `max_depth` the moment it gets there. One per body: it counts."""
    decoder = json.JSONDecoder(parse_constant=_not_json, parse_float=_finite_float)
    depth = 0

    def counted(parse: Callable[..., Any]) -> Callable[..., Any]:
        def parse_nested(*args: Any) -> Any:
            nonlocal depth
            depth += 1
            if depth > max_depth:
                raise _too_deep(max_depth)
            try:
                return parse(*args)
            finally:
                depth -= 1

        return parse_nested

    decoder.parse_array = counted(decoder.parse_array)  # type: ignore[attr-defined]
    decoder.parse_object = counted(decoder.parse_object)  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    return decoder

#: Digit runs are found by mapping every digit to 0 and searching bytes, much faster than a regex.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
#: The start of an escaped surrogate, `\\ud800` to `\\udfff` in either case (paired ones included).
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
#: Objects and arrays past which a body read in a worker thread (`yielding=True`) is read by the
#: standard library's Python scanner: orjson builds 20,000 of them in a few milliseconds, while the
#: GIL it holds keeps the event loop from running.
YIELDING_CONTAINERS = 20_000
#: Dataclasses, datetimes and subclasses of str, int, dict and list go to `_ENCODER`, which
#: refuses the first two and writes subclasses as before.
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def _too_deep(max_depth: int) -> NotJSON:
    return NotJSON(f"JSON nests deeper than {max_depth} levels")


def _deeper_than(body: bytes, limit: int) -> bool:
    """Does this *valid* JSON nest deeper than `limit`? Bytes operations only, no Python loop over
    characters, so a 4 MB body of brackets costs milliseconds rather than seconds.

    In valid JSON a backslash appears only inside strings, so dropping escaped backslashes and
    then escaped quotes leaves only the quotes that delimit strings; every other piece between
    them is outside strings. Of that, keep the brackets and remove innermost pairs level by level.
    """
    unescaped = body.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside = b"".join(unescaped.split(b'"')[::2])
    brackets = outside.translate(_AS_SQUARE, _NOT_BRACKETS)
    for _ in range(limit):
        innermost_gone = brackets.replace(b"[]", b"")
        if innermost_gone == brackets:
            break
        brackets = innermost_gone
    return bool(brackets)


_AS_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


def encode(message: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON, the one encoding every transport writes.

    A lone surrogate (a client may send `"\\ud800"`, and it can come back in an id or an error
    message) has no UTF-8 form; it is written as the same `\\ud800` escape, so the output is
    still valid UTF-8 and JSON instead of an exception.

    orjson writes most messages several times faster, byte for byte as the standard library
    does; a message it cannot write (a lone surrogate, an integer beyond 64 bits, a key that is
    not a string) or might write differently (see `_may_differ`) is written by `_ENCODER`.
    One difference remains: orjson also writes a plain `Enum` member or a `UUID`, which the
    standard library refuses with a TypeError.
    """
    try:
        data = orjson.dumps(message, option=_ORJSON_OPTIONS)
    except TypeError:
        data = None
    if data is None or _may_differ(data):
        return _ENCODER.encode(message).encode("utf-8", "backslashreplace")
    return data


def _may_differ(data: bytes) -> bool:
    """Could orjson have written this differently from `_ENCODER`? Only a float below 1e-4 or from
    1e16 up (`1e-7` and `0.00001` where Python writes `1e-07` and `1e-05`) and NaN or an infinity
    (which orjson writes as `null`) can be; such text inside a string is a false alarm that costs
    only speed."""
    return b"null" in data or b"0.0000" in data or b"0e" in data.translate(_DIGITS_AS_ZERO)
