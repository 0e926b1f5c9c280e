"""Mirrored headers: value encoding, `x-mcp-header` rules, building and checking."""

from __future__ import annotations

import pytest

from mcpref.headers import (
    annotation_problems,
    check_request_headers,
    decode_value,
    encode_value,
    header_params,
    request_headers,
)
from mcpref.jsonrpc import HEADER_MISMATCH, MCPError


@pytest.mark.parametrize(
    ("value", "header"),
    [
        ("us-west1", "us-west1"),
        ("two words", "two words"),
        (42, "42"),
        (-7, "-7"),
        (True, "true"),
        (False, "false"),
        # The spec's own example (streamable-http.mdx §Value Encoding).
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded", "=?base64?IHBhZGRlZA==?="),
        ("tab\t", "=?base64?dGFiCQ==?="),
        ("", "=?base64??="),
        ("line\nbreak", "=?base64?bGluZQpicmVhaw==?="),
        # A literal that already looks encoded must be wrapped too.
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ],
)
def test_encode_value(value: object, header: str) -> None:
    assert encode_value(value) == header  # type: ignore[arg-type]
    if isinstance(value, str):
        assert decode_value(header) == value


@pytest.mark.parametrize("raw", ["=?base64?###?=", "=?base64?SGVsbG8?=", "=?base64?/w==?="])
def test_malformed_base64_is_a_mismatch(raw: str) -> None:
    with pytest.raises(MCPError) as caught:
        decode_value(raw)
    assert caught.value.code == HEADER_MISMATCH


def test_header_params_follow_properties_chains() -> None:
    schema = {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "target": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
        },
    }
    assert header_params(schema) == {"Region": ("region",), "Zone": ("target", "zone")}
    assert annotation_problems(schema) == []


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}, "string, integer or boolean"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}, "HTTP token"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": "Bad Name"}}}, "HTTP token"),
        ({"properties": {"a": {"type": "string", "x-mcp-header": "X\r\nY"}}}, "HTTP token"),
        (
            {
                "properties": {
                    "a": {"type": "string", "x-mcp-header": "Dup"},
                    "b": {"type": "string", "x-mcp-header": "dup"},
                }
            },
            "used twice",
        ),
        (
            {"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}},
            "plain `properties`",
        ),
        ({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}, "plain `properties`"),
        ({"$defs": {"d": {"type": "string", "x-mcp-header": "A"}}}, "plain `properties`"),
    ],
)
def test_annotation_problems(schema: dict, problem: str) -> None:
    problems = annotation_problems({"type": "object", **schema})
    assert any(problem in line for line in problems), problems


def test_request_headers_mirror_the_body() -> None:
    params = {
        "name": "deploy",
        "arguments": {"region": "Zürich", "count": 3, "skip": None},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    }
    headers = request_headers("tools/call", params, {"Region": ("region",), "Count": ("count",), "Skip": ("skip",)})
    assert headers == {
        "Mcp-Method": "tools/call",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Name": "deploy",
        "Mcp-Param-Region": "=?base64?WsO8cmljaA==?=",
        "Mcp-Param-Count": "3",
    }


def test_built_headers_pass_the_check() -> None:
    params = {"uri": "file:///a b", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    built = request_headers("resources/read", params)
    check_request_headers({k.lower(): v for k, v in built.items()}, "resources/read", params)


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"mcp-method": "tools/list"}, "MCP-Protocol-Version is missing"),
        ({"mcp-protocol-version": "2026-07-28"}, "Mcp-Method is missing"),
        ({"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list\x01"}, "not allowed"),
    ],
)
def test_check_names_the_broken_header(headers: dict, reason: str) -> None:
    params = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    with pytest.raises(MCPError) as caught:
        check_request_headers(headers, "tools/list", params)
    assert caught.value.code == HEADER_MISMATCH and caught.value.http_status == 400
    assert reason in caught.value.message


def test_integers_compare_numerically_but_not_beyond_safe_range() -> None:
    base = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "t"}
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    check_request_headers(
        {**base, "mcp-param-n": "007"}, "tools/call", {"name": "t", "arguments": {"n": 7}, "_meta": meta}, {"N": ("n",)}
    )
    with pytest.raises(MCPError):
        big = 2**53
        check_request_headers(
            {**base, "mcp-param-n": str(big)},
            "tools/call",
            {"name": "t", "arguments": {"n": big}, "_meta": meta},
            {"N": ("n",)},
        )


def test_whitespace_around_a_header_value_is_framing() -> None:
    params = {"name": "echo", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "  echo\t"}
    check_request_headers(headers, "tools/call", params)


def _check_integer(header: str, body: object) -> None:
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "t", "mcp-param-n": header}
    check_request_headers(headers, "tools/call", {"name": "t", "arguments": {"n": body}, "_meta": meta}, {"N": ("n",)})


@pytest.mark.parametrize(
    ("header", "body"), [("42", 42), ("42.0", 42), ("42", 42.0), ("42.0", 42.0), ("4.2e1", 42), ("-7", -7.0)]
)
def test_integer_headers_compare_numerically(header: str, body: object) -> None:
    """`42.0` and `42` are equal (streamable-http.mdx §Server Validation), whichever side has which."""
    _check_integer(header, body)


@pytest.mark.parametrize(
    ("header", "body"),
    [("4_2", 42), ("+42", 42), ("٤٢", 42), ("42.5", 42), ("0x2a", 42), ("4 2", 42), ("Infinity", 42), ("nan", 42)],
)
def test_integer_headers_that_are_no_decimal_number_are_a_mismatch(header: str, body: object) -> None:
    """Python's int() reads `4_2`, `+42` and Arabic-Indic digits as 42; a header is no Python literal."""
    with pytest.raises(MCPError) as caught:
        _check_integer(header, body)
    assert caught.value.code == HEADER_MISMATCH


@pytest.mark.parametrize(("value", "header"), [(42.0, "42"), (-7.0, "-7"), (1.5, "1.5")])
def test_encode_value_takes_a_float(value: float, header: str) -> None:
    """JSON has one number type: a client may hold an integer argument as `42.0`."""
    assert encode_value(value) == header
    _check_integer(header, value)


@pytest.mark.parametrize("value", [2**53, -(2**53), 10**20])
def test_header_integers_stay_within_the_safe_range(value: int) -> None:
    base = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "t"}
    params = {
        "name": "t",
        "arguments": {"n": value},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"},
    }
    with pytest.raises(MCPError) as caught:
        check_request_headers({**base, "mcp-param-n": str(value)}, "tools/call", params, {"N": ("n",)})
    assert caught.value.code == HEADER_MISMATCH
    safe = {**params, "arguments": {"n": 2**53 - 1}}
    check_request_headers({**base, "mcp-param-n": str(2**53 - 1)}, "tools/call", safe, {"N": ("n",)})


_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
_BASE = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "t"}


def _mismatch(headers: dict, method: str, params: dict, by_header: dict | None = None, **kw: str) -> str:
    with pytest.raises(MCPError) as caught:
        check_request_headers(headers, method, params, by_header, **kw)
    assert caught.value.code == HEADER_MISMATCH and caught.value.http_status == 400
    return caught.value.message


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        ("mcp-protocol-version", "MCP-Protocol-Version is '2025-11-25' but the body says '2026-07-28'"),
        ("mcp-method", "Mcp-Method is 'tools/list' but the body says 'tools/call'"),
        ("mcp-name", "Mcp-Name is 'other' but the body says 't'"),
    ],
)
def test_a_header_that_disagrees_with_the_body_is_named(header: str, reason: str) -> None:
    wrong = {"mcp-protocol-version": "2025-11-25", "mcp-method": "tools/list", "mcp-name": "other"}
    assert reason in _mismatch({**_BASE, header: wrong[header]}, "tools/call", {"name": "t", "_meta": _META})


def test_only_mcp_name_and_params_are_base64_decoded() -> None:
    """The version and method headers are compared as sent; a name travels encoded when it must."""
    encoded_name = encode_value("a b ")
    check_request_headers({**_BASE, "mcp-name": encoded_name}, "tools/call", {"name": "a b ", "_meta": _META})
    encoded_method = "=?" + "base64?" + "dG9vbHMvY2FsbA==?="  # "tools/call"
    _mismatch({**_BASE, "mcp-method": encoded_method}, "tools/call", {"name": "t", "_meta": _META})
    region = {"mcp-param-region": encode_value("Zürich")}
    params = {"name": "t", "arguments": {"region": "Zürich"}, "_meta": _META}
    check_request_headers({**_BASE, **region}, "tools/call", params, {"Region": ("region",)})
    # Sent literally, the sentinel form is not what the body says.
    _mismatch(
        {**_BASE, "mcp-param-region": region["mcp-param-region"]},
        "tools/call",
        {**params, "arguments": {"region": region["mcp-param-region"]}},
        {"Region": ("region",)},
    )


def test_an_extension_method_mirrors_its_named_field() -> None:
    params = {"target": "x", "_meta": _META}
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "ext/run"}
    assert "Mcp-Name is missing" in _mismatch(headers, "ext/run", params, name_field="target")
    check_request_headers({**headers, "mcp-name": "x"}, "ext/run", params, name_field="target")
    assert request_headers("ext/run", params, name_field="target")["Mcp-Name"] == "x"


def test_a_name_that_is_not_a_string_is_not_mirrored() -> None:
    assert "Mcp-Name" not in request_headers("tools/call", {"name": 5})


@pytest.mark.parametrize(("header", "body"), [("true", True), ("false", False)])
def test_boolean_headers_are_lowercase_words(header: str, body: bool) -> None:
    params = {"name": "t", "arguments": {"flag": body}, "_meta": _META}
    check_request_headers({**_BASE, "mcp-param-flag": header}, "tools/call", params, {"Flag": ("flag",)})
    other = "false" if body else "true"
    _mismatch({**_BASE, "mcp-param-flag": other}, "tools/call", params, {"Flag": ("flag",)})
    _mismatch({**_BASE, "mcp-param-flag": header.upper()}, "tools/call", params, {"Flag": ("flag",)})


def test_a_param_header_for_an_absent_argument_is_a_mismatch() -> None:
    params = {"name": "t", "arguments": {"count": 2}, "_meta": _META}
    by_header = {"Region": ("region",), "Count": ("count",)}
    reason = _mismatch({**_BASE, "mcp-param-region": "eu", "mcp-param-count": "2"}, "tools/call", params, by_header)
    assert "Mcp-Param-Region is sent but the argument it mirrors is absent" in reason
    # An absent argument with no header is fine, and the params after it are still checked.
    check_request_headers({**_BASE, "mcp-param-count": "2"}, "tools/call", params, by_header)
    _mismatch({**_BASE, "mcp-param-count": "3"}, "tools/call", params, by_header)


@pytest.mark.parametrize("value", ["Xbox\x0c", "Xbox\r", "Xbox\n"])
def test_only_spaces_and_tabs_are_trimmed(value: str) -> None:
    """Other control characters are not framing (RFC 9110 §5.5): they make the value invalid."""
    _mismatch({**_BASE, "mcp-name": value}, "tools/call", {"name": "Xbox", "_meta": _META})
    check_request_headers({**_BASE, "mcp-name": " Xbox X\t"}, "tools/call", {"name": "Xbox X", "_meta": _META})


def test_a_malformed_base64_value_is_named() -> None:
    with pytest.raises(MCPError) as caught:
        decode_value("=?base64?!!!?=")
    assert "malformed base64 header value" in caught.value.message
    # Only a value both opening and closing with the sentinel is encoded.
    assert decode_value("=?base64?abc") == "=?base64?abc"
    assert decode_value("abc?=") == "abc?="


def test_header_params_reads_every_property() -> None:
    schema = {"properties": {"a": "not a schema", "b": {"type": "string", "x-mcp-header": "B"}}}
    assert header_params(schema) == {"B": ("b",)}


def test_annotation_problems_say_where() -> None:
    schema = {
        "properties": {
            "ok_int": {"type": "integer", "x-mcp-header": "Count"},
            "ok_bool": {"type": "boolean", "x-mcp-header": "Flag"},
            "nested": {"properties": {"deep": {"type": "array", "x-mcp-header": "Deep"}}},
        },
        "anyOf": [{"properties": {"x": {"type": "string", "x-mcp-header": "InAnyOf"}}}],
        "$defs": {"d": {"type": "string", "x-mcp-header": "InDefs"}},
    }
    assert annotation_problems(schema) == [
        "$.nested.deep: x-mcp-header needs type string, integer or boolean, not 'array'",
        "$/anyOf[0].x: x-mcp-header is only allowed on plain `properties` chains",
        "$/$defs/d: x-mcp-header is only allowed on plain `properties` chains",
    ]


def test_the_protocol_version_header_is_compared_as_sent() -> None:
    encoded = "=?base64?MjAyNi0wNy0yOA==?="  # "2026-07-28" in the sentinel form; a version is never decoded
    assert decode_value(encoded) == "2026-07-28"
    reason = _mismatch({**_BASE, "mcp-protocol-version": encoded}, "tools/call", {"name": "t", "_meta": _META})
    assert "MCP-Protocol-Version is" in reason


def test_an_annotation_that_is_no_name_is_reported_once() -> None:
    schema = {"properties": {"a": {"type": "string", "x-mcp-header": {"x-mcp-header": "Inner"}}}}
    assert annotation_problems(schema) == [
        "$.a: x-mcp-header must be a non-empty HTTP token, got {'x-mcp-header': 'Inner'}"
    ]


def test_a_numeric_header_is_at_most_64_characters() -> None:
    """Decimal parses arbitrarily long input; the cap keeps a hostile header from costing CPU."""
    _check_integer("4".rjust(64, "0"), 4)
    with pytest.raises(MCPError):
        _check_integer("4".rjust(65, "0"), 4)


@pytest.mark.parametrize(
    "raw",
    [
        "echo",
        "two words",
        " echo",
        "echo ",
        "\techo",
        "=?base64?ZWNobw==?=",
        "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=",
        "=?base64?literal?=",
        "=plain",
        "",
        "caf\u00e9",
        "a\x7fb",
        "tab\tinside",
    ],
)
def test_the_verbatim_shortcut_decides_as_the_full_check(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A header equal to its body value takes a shortcut; it must accept and refuse exactly what
    the full check does, whatever the name is (padded, encoded-looking, empty, non-ASCII)."""
    import mcpref.headers

    params = {"name": raw, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": raw}

    def outcome() -> int | None:
        try:
            check_request_headers(headers, "tools/call", params)
        except MCPError as error:
            return error.code
        return None

    monkeypatch.setattr(mcpref.headers, "_plain_values", set())
    without_shortcut = outcome()  # the first time a value is seen, it is judged in full
    with_shortcut = outcome()  # then, if it is plain, it is remembered and takes the shortcut
    assert with_shortcut == without_shortcut
    assert (raw in mcpref.headers._plain_values) == (mcpref.headers._PLAIN_VALUE.fullmatch(raw) is not None)


def _remembered(monkeypatch: pytest.MonkeyPatch, *values: str) -> None:
    """Start from a shortcut that knows exactly `values` (as if requests had carried them)."""
    import mcpref.headers

    monkeypatch.setattr(mcpref.headers, "_plain_values", set(values))


def _code(headers: dict[str, str], method: str, params: dict[str, object]) -> int | None:
    try:
        check_request_headers(headers, method, params)
    except MCPError as error:
        return error.code
    return None


CALL = {"name": "a", "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
CALL_HEADERS = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "a"}


@pytest.mark.parametrize(
    ("header", "sent"),
    [("mcp-protocol-version", "2025-06-18"), ("mcp-method", "tools/list"), ("mcp-name", "b")],
)
def test_a_remembered_value_that_disagrees_with_the_body_is_still_a_mismatch(
    header: str, sent: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shortcut takes a header only when it *equals* its body value: one that is a value
    seen before (and plain) but not this request's is refused, whichever header it is."""
    _remembered(monkeypatch, "2026-07-28", "tools/call", "a", "2025-06-18", "tools/list", "b")
    assert _code(CALL_HEADERS, "tools/call", CALL) is None
    assert _code({**CALL_HEADERS, header: sent}, "tools/call", CALL) == HEADER_MISMATCH


@pytest.mark.parametrize("header", ["mcp-protocol-version", "mcp-method", "mcp-name"])
def test_a_missing_header_is_a_mismatch_even_with_everything_remembered(
    header: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _remembered(monkeypatch, "2026-07-28", "tools/call", "a")
    headers = {key: value for key, value in CALL_HEADERS.items() if key != header}
    assert _code(headers, "tools/call", CALL) == HEADER_MISMATCH


@pytest.mark.parametrize(
    ("field", "value"),
    [("version", " 2026-07-28"), ("method", "tools/call "), ("name", "caf\u00e9"), ("name", "=?base64?YQ==?=")],
)
def test_a_value_equal_to_its_body_but_not_plain_gets_the_full_check(
    field: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Equal is not enough: a value that is not plain (padded, non-ASCII, a base64 sentinel) is
    judged in full, never waved through, and is not remembered."""
    import mcpref.headers

    _remembered(monkeypatch, "2026-07-28", "tools/call", "a")
    params: dict[str, object] = dict(CALL)
    headers = dict(CALL_HEADERS)
    method = "tools/call"
    if field == "version":
        params["_meta"] = {"io.modelcontextprotocol/protocolVersion": value}
        headers["mcp-protocol-version"] = value
    elif field == "method":
        method = value
        headers["mcp-method"] = value
    else:
        params["name"] = value
        headers["mcp-name"] = value
    assert _code(headers, method, params) == HEADER_MISMATCH
    assert value not in mcpref.headers._plain_values


def test_a_method_without_a_name_ignores_mcp_name_and_one_with_a_name_checks_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _remembered(monkeypatch, "2026-07-28", "tools/list", "tools/call", "a", "b")
    listing = {"_meta": CALL["_meta"]}
    assert _code({"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}, "tools/list", listing) is None
    assert _code({**CALL_HEADERS, "mcp-name": "b"}, "tools/call", CALL) == HEADER_MISMATCH


def test_plain_values_judged_in_full_are_remembered_up_to_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    import mcpref.headers

    _remembered(monkeypatch)
    assert _code(CALL_HEADERS, "tools/call", CALL) is None
    assert {"2026-07-28", "tools/call", "a"} <= mcpref.headers._plain_values
    monkeypatch.setattr(mcpref.headers, "_plain_values", {str(n) for n in range(mcpref.headers._MAX_PLAIN_VALUES)})
    assert _code(CALL_HEADERS, "tools/call", CALL) is None
    assert len(mcpref.headers._plain_values) == mcpref.headers._MAX_PLAIN_VALUES
    assert mcpref.headers._MAX_PLAIN_VALUES == 512
