"""orjson on the hot path reads and writes exactly what the standard library would."""

from __future__ import annotations

import json
import math
import uuid
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpref import _codec
from mcpref._codec import NotJSON, decode
from mcpref.jsonrpc import PARSE_ERROR, MCPError, decode_json, encode

numbers = (
    st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([1e16, 1e-4, 9.999999999999999e-05, 1e-05, 1e-07, 5e-324, -0.0, 1.7976931348623157e308])
)
values = st.recursive(
    st.none() | st.booleans() | numbers | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def monkeypatch_module() -> Any:
    """A MonkeyPatch hypothesis may reuse between examples (each use is a `context()`)."""
    return pytest.MonkeyPatch()


def stdlib_encode(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "backslashreplace")


@settings(max_examples=500, deadline=None)
@given(values)
def test_encode_writes_the_bytes_json_dumps_writes(value: Any) -> None:
    assert encode({"jsonrpc": "2.0", "id": 1, "result": {"v": value}}) == stdlib_encode(
        {"jsonrpc": "2.0", "id": 1, "result": {"v": value}}
    )


@settings(max_examples=500, deadline=None)
@given(values)
def test_decode_reads_the_values_json_loads_reads(value: Any) -> None:
    body = stdlib_encode({"v": value})
    try:
        expected = json.loads(body)
    except ValueError:
        expected = None
    if expected is None or _has_non_finite(value):
        with pytest.raises(MCPError):
            decode_json(body)
        return
    assert repr(decode_json(body)) == repr(expected)


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, list):
        return any(_has_non_finite(item) for item in value)
    if isinstance(value, dict):
        return any(_has_non_finite(item) for item in value.values())
    return False


@pytest.mark.parametrize(
    "body",
    [b'{"id":123456789012345678901234567890}', b'{"id":-9223372036854775809}', b'{"s":"\\ud83d\\ude00"}', b"[1e400]"],
)
def test_what_orjson_reads_differently_or_refuses_goes_the_stdlib_way(body: bytes) -> None:
    try:
        expected: Any = json.loads(body, parse_constant=lambda c: None)
    except ValueError:
        expected = None
    if expected is None or expected == [math.inf]:
        with pytest.raises(MCPError):
            decode_json(body)
    else:
        assert repr(decode_json(body)) == repr(expected)


@pytest.mark.parametrize(
    "body", [b'{"s":"\\ud800"}', b'["a\\uDFFFb"]', b'{"\\udbff":1}', b'{"n":12345678901234567890,"s":"\\ud800"}']
)
def test_a_lone_surrogate_is_refused(body: bytes) -> None:
    """Issue 25: accepted, it reached handlers as a string that failed the first time anything
    encoded it (a prompt's digest: a 500). UTF-8 has no form for it; I-JSON forbids it."""
    with pytest.raises(MCPError) as caught:
        decode_json(body)
    assert caught.value.code == PARSE_ERROR
    assert "lone surrogate" in caught.value.message


def test_a_surrogate_pair_and_an_escaped_backslash_are_read() -> None:
    assert decode_json(b'{"s":"\\ud83d\\ude00","t":"\\\\ud800"}') == {"s": "\U0001f600", "t": "\\ud800"}


@settings(max_examples=200, deadline=None)
@given(value=values)
def test_the_yielding_decoder_reads_what_the_fast_one_reads(value: Any, monkeypatch_module: Any) -> None:
    body = stdlib_encode({"v": value})
    try:
        expected = repr(decode_json(body))
    except MCPError as exc:
        expected = f"refused {exc.code}"
    with monkeypatch_module.context() as patch:
        patch.setattr(_codec, "YIELDING_CONTAINERS", -1)
        try:
            got = repr(decode_json(body, yielding=True))
        except MCPError as exc:
            got = f"refused {exc.code}"
    assert got == expected


def test_many_containers_read_yielding_never_reach_orjson(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25: orjson holds the GIL for a whole body, so in a worker thread it still held up the
    loop; past `YIELDING_CONTAINERS` objects and arrays the Python scanner reads instead."""
    body = b"[" + b",".join([b'[{"a":[1.5]}]'] * (_codec.YIELDING_CONTAINERS // 2)) + b"]"
    expected = json.loads(body)

    def refuse(_: bytes) -> None:
        raise AssertionError("orjson read a body with many containers")

    monkeypatch.setattr(_codec.orjson, "loads", refuse)
    assert decode(body, 64, yielding=True) == expected
    with pytest.raises(NotJSON, match="deeper than 3"):
        decode(body, 3, yielding=True)
    with pytest.raises(AssertionError, match="orjson read"):
        decode(body, 64)  # without yielding: the fast way


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_float_is_written_as_json_dumps_writes_it(value: float) -> None:
    """orjson writes these as `null`; the property above draws one only by chance, so each is pinned."""
    message = {"jsonrpc": "2.0", "id": 1, "result": {"v": value}}
    assert encode(message) == stdlib_encode(message)


def test_the_codec_says_why_and_framing_gives_the_code() -> None:
    """`_codec` knows JSON, not JSON-RPC: it says why bytes are refused; `decode_json` makes it -32700."""
    with pytest.raises(NotJSON, match="^JSON nests deeper than 2 levels$"):
        decode(b"[[[1]]]", 2)
    assert decode(b"[[1]]", 2) == [[1]]
    with pytest.raises(MCPError) as caught:
        decode_json(b'{"a":"\xff"}')
    assert caught.value.code == PARSE_ERROR
    assert caught.value.message.startswith("Parse error: body is not valid UTF-8")


@pytest.mark.parametrize(
    "inner",
    [pytest.param(b"1", id="orjson-refuses-the-depth"), pytest.param(b"1234567890123456789", id="long-number")],
)
def test_a_body_too_deep_for_the_standard_library_names_the_limit(inner: bytes) -> None:
    """Nesting deep enough to exhaust the standard library's recursion is refused with the same
    words as any other body nested too deep, on both ways to the standard library."""
    body = b"[" * 100_000 + inner + b"]" * 100_000
    with pytest.raises(NotJSON, match="^JSON nests deeper than 64 levels$"):
        decode(body, 64)


def test_orjson_writes_what_it_can_which_the_uuid_shows() -> None:
    """The fast path is taken: the one documented difference from the standard library (which
    refuses a UUID with a TypeError) shows orjson wrote the message."""
    message = {"jsonrpc": "2.0", "id": 1, "result": {"v": uuid.UUID(int=1)}}
    assert encode(message) == b'{"jsonrpc":"2.0","id":1,"result":{"v":"00000000-0000-0000-0000-000000000001"}}'
    with pytest.raises(TypeError):
        stdlib_encode(message)
