"""Streamable HTTP's mirrored headers: built from the body by clients, checked against it by servers.

A 2026-07-28 request repeats parts of its JSON body in HTTP headers so that gateways can route
without parsing JSON (basic/transports/streamable-http.mdx §Standard Headers, §Custom Headers):

| header                 | mirrors                                                      |
|------------------------|--------------------------------------------------------------|
| `MCP-Protocol-Version` | `params._meta["io.modelcontextprotocol/protocolVersion"]`    |
| `Mcp-Method`           | `method`                                                     |
| `Mcp-Name`             | `params.name` (tools/call, prompts/get), `params.uri` (resources/read) |
| `Mcp-Param-{Name}`     | a tool argument whose schema says `"x-mcp-header": "{Name}"` |

The server trusts the body and refuses a request whose headers disagree with it (-32020).
Values that are not plain header-safe ASCII travel as `=?base64?...?=`.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from .jsonrpc import HEADER_MISMATCH, MCPError
from .meta import PROTOCOL_VERSION_KEY

PROTOCOL_VERSION_HEADER = "MCP-Protocol-Version"
METHOD_HEADER = "Mcp-Method"
NAME_HEADER = "Mcp-Name"
PARAM_HEADER_PREFIX = "Mcp-Param-"
#: What a client's POST accepts: a JSON response or an SSE stream (streamable-http.mdx §Sending Messages).
ACCEPT = "application/json, text/event-stream"

#: Where `Mcp-Name` comes from, for the methods that carry one.
NAME_SOURCES = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

_SENTINEL_START = "=?base64?"
_SENTINEL_END = "?="
_SAFE_VALUE = re.compile(r"[\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?")
_FIELD_VALUE = re.compile(r"[\x20-\x7e\t]*")
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_MAX_SAFE_INTEGER = 2**53 - 1
#: A decimal number in ASCII digits (JSON's grammar, leading zeros allowed): the only spelling
#: of a number a header is compared as.
_DECIMAL_NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?")


def encode_value(value: str | int | float | bool) -> str:
    """The header form of a body value (§Value Encoding), base64-wrapped when it must be.

    JSON has one number type, so an integer argument may be held as `42.0`; it is written `42`.
    """
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        text = str(int(value)) if value.is_integer() else repr(value)
    else:
        text = value
    if _SAFE_VALUE.fullmatch(text) and not _looks_encoded(text):
        return text
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"{_SENTINEL_START}{encoded}{_SENTINEL_END}"


def decode_value(raw: str) -> str:
    """The text a header value stands for; a malformed base64 sentinel is a mismatch."""
    if not _looks_encoded(raw):
        return raw
    inner = raw[len(_SENTINEL_START) : -len(_SENTINEL_END)]
    try:
        return base64.b64decode(inner, validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise mismatch(f"malformed base64 header value {raw!r}") from None


def _looks_encoded(text: str) -> bool:
    return text.startswith(_SENTINEL_START) and text.endswith(_SENTINEL_END) and len(text) >= 11


def mismatch(reason: str) -> MCPError:
    return MCPError(HEADER_MISMATCH, f"Header mismatch: {reason}", http_status=400)


# -- x-mcp-header annotations --------------------------------------------------------------


def header_params(input_schema: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    """Map each `x-mcp-header` name to the argument path it mirrors, e.g. `{"Region": ("region",)}`.

    Only properties reachable through plain `properties` chains count (§Schema Extension);
    call `annotation_problems` first to know whether the schema obeys the rules at all.
    """
    found: dict[str, tuple[str, ...]] = {}

    def walk(schema: Mapping[str, Any], path: tuple[str, ...]) -> None:
        for name, sub in (schema.get("properties") or {}).items():
            if not isinstance(sub, Mapping):
                continue
            header = sub.get("x-mcp-header")
            if isinstance(header, str):
                found[header] = (*path, name)
            walk(sub, (*path, name))

    walk(input_schema, ())
    return found


def annotation_problems(input_schema: Mapping[str, Any]) -> list[str]:
    """Every way this schema's `x-mcp-header` annotations break the rules, empty if none.

    Clients must drop tools that break them (§Schema Extension); the server refuses to
    register such a tool at all, so a mistake shows at start-up rather than on the wire.
    """
    problems: list[str] = []
    seen: set[str] = set()

    def check(schema: Any, path: str, reachable: bool) -> None:
        if isinstance(schema, list):
            for index, item in enumerate(schema):
                check(item, f"{path}[{index}]", False)
            return
        if not isinstance(schema, Mapping):
            return
        header = schema.get("x-mcp-header")
        if header is not None:
            problems.extend(_annotation_problems(header, schema, path, reachable, seen))
        for key, value in schema.items():
            if key == "properties" and isinstance(value, Mapping):
                for name, sub in value.items():
                    check(sub, f"{path}.{name}", reachable)
            elif key != "x-mcp-header" and isinstance(value, Mapping | list):
                check(value, f"{path}/{key}", False)

    check(input_schema, "$", True)
    return problems


def _annotation_problems(
    header: Any, schema: Mapping[str, Any], path: str, reachable: bool, seen: set[str]
) -> list[str]:
    if not isinstance(header, str) or not _TOKEN.fullmatch(header):
        return [f"{path}: x-mcp-header must be a non-empty HTTP token, got {header!r}"]
    problems = []
    if header.lower() in seen:
        problems.append(f"{path}: x-mcp-header {header!r} is used twice (names ignore case)")
    seen.add(header.lower())
    if not reachable:
        problems.append(f"{path}: x-mcp-header is only allowed on plain `properties` chains")
    kind = schema.get("type")
    if kind not in ("string", "integer", "boolean"):
        problems.append(f"{path}: x-mcp-header needs type string, integer or boolean, not {kind!r}")
    return problems


# -- building and checking -----------------------------------------------------------------


def request_headers(
    method: str,
    params: Mapping[str, Any],
    params_by_header: Mapping[str, tuple[str, ...]] | None = None,
    name_field: str | None = None,
) -> dict[str, str]:
    """The mirrored headers a client sends for this request body; `name_field` names what
    `Mcp-Name` mirrors for a method the core does not know (an extension's)."""
    headers = {METHOD_HEADER: method}
    version = (params.get("_meta") or {}).get(PROTOCOL_VERSION_KEY)
    if isinstance(version, str):
        headers[PROTOCOL_VERSION_HEADER] = version
    name_field = name_field or NAME_SOURCES.get(method)
    if name_field and isinstance(params.get(name_field), str):
        headers[NAME_HEADER] = encode_value(params[name_field])
    for header, path in (params_by_header or {}).items():
        value = _lookup(params.get("arguments"), path)
        if value is not None:
            headers[PARAM_HEADER_PREFIX + header] = encode_value(value)
    return headers


def check_request_headers(
    headers: Mapping[str, str],
    method: str,
    params: Mapping[str, Any],
    params_by_header: Mapping[str, tuple[str, ...]] | None = None,
    name_field: str | None = None,
) -> None:
    """Refuse with -32020 unless every mirrored header is present, well-formed and equal to the body.

    `headers` must be keyed by lower-case name (ASGI gives them so). `name_field` is what
    `Mcp-Name` mirrors for an extension's method (`Server.name_field_for`).
    """
    version = (params.get("_meta") or {}).get(PROTOCOL_VERSION_KEY)
    name_field = name_field or NAME_SOURCES.get(method)
    # The usual request: each header is its body value exactly, and a value already seen to be
    # one `_expect` takes as it is (`_PLAIN_VALUE`). Nothing is left to judge then; any other
    # request gets every check, in order. Written out rather than in a helper: it runs on every
    # request, and a set lookup costs far less than a regex match.
    raw_version, raw_method = headers.get("mcp-protocol-version"), headers.get("mcp-method")
    raw_name = headers.get("mcp-name") if name_field else None
    usual = (
        raw_version == version
        and raw_method == method
        and raw_version in _plain_values
        and raw_method in _plain_values
        and (not name_field or (raw_name == params.get(name_field) and raw_name in _plain_values))
    )
    if not usual:
        _expect(headers, PROTOCOL_VERSION_HEADER, version, decode=False)
        _expect(headers, METHOD_HEADER, method, decode=False)
        if name_field:
            _expect(headers, NAME_HEADER, params.get(name_field), decode=True)
        _remember_plain(raw_version, raw_method, raw_name)
    for header, path in (params_by_header or {}).items():
        value = _lookup(params.get("arguments"), path)
        name = PARAM_HEADER_PREFIX + header
        raw = headers.get(name.lower())
        if value is None:
            if raw is not None:
                raise mismatch(f"{name} is sent but the argument it mirrors is absent")
            continue
        _expect(headers, name, value, decode=True)


def check_legacy_request_headers(headers: Mapping[str, str], method: str, params: Mapping[str, Any]) -> None:
    """A 2025-11-25 request sends no `Mcp-Method`; one that sends it (or `Mcp-Name`) says what it
    is as a modern request does, and is held to it (-32020): whatever decided on those headers
    (`mcpref.auth.ProtectedResource`'s scopes, a proxy's routing) must see what really runs."""
    if "mcp-method" not in headers and "mcp-name" not in headers:
        return
    _expect(headers, METHOD_HEADER, method, decode=False)
    name_field = NAME_SOURCES.get(method)
    if name_field:
        _expect(headers, NAME_HEADER, params.get(name_field), decode=True)


#: A header value `_expect` takes as it is: printable ASCII, no space at either end (none to
#: strip), not starting with `=` (no base64 sentinel to decode). Equal to its body value, such a
#: header can only pass.
_PLAIN_VALUE = re.compile(r"[\x21-\x3c\x3e-\x7e]([\x20-\x7e]*[\x21-\x7e])?")
#: Values seen to match `_PLAIN_VALUE` (versions, methods, tool names repeat from request to
#: request). Bounded: past the bound nothing is added, and a new value only takes the long way.
_plain_values: set[str] = set()
_MAX_PLAIN_VALUES = 512


def _remember_plain(*values: str | None) -> None:
    for value in values:
        if value is not None and len(_plain_values) < _MAX_PLAIN_VALUES and _PLAIN_VALUE.fullmatch(value):
            _plain_values.add(value)


def _expect(headers: Mapping[str, str], name: str, body_value: Any, *, decode: bool) -> None:
    raw = headers.get(name.lower())
    if raw is None:
        raise mismatch(f"required header {name} is missing")
    # Spaces and tabs around a field value are HTTP framing, not part of it (RFC 9110 §5.5);
    # a value that really starts or ends with whitespace travels base64-encoded.
    raw = raw.strip(" \t")
    # Printable ASCII is always allowed; the regex judges the rest (tabs, and what it refuses).
    if not (raw.isascii() and raw.isprintable()) and not _FIELD_VALUE.fullmatch(raw):
        raise mismatch(f"{name} contains characters not allowed in a header value")
    text = decode_value(raw) if decode else raw
    if not _equal(text, body_value):
        raise mismatch(f"{name} is {raw!r} but the body says {body_value!r}")


def _equal(text: str, body_value: Any) -> bool:
    if isinstance(body_value, bool):
        return text == ("true" if body_value else "false")
    if isinstance(body_value, (int, float)):
        # Numerically, so `42.0` and `42` are equal (§Server Validation); only a decimal number
        # counts, never what Python's int() also reads (`4_2`, `+42`, other scripts' digits).
        if abs(body_value) > _MAX_SAFE_INTEGER or len(text) > 64 or not _DECIMAL_NUMBER.fullmatch(text):
            return False
        return Decimal(text) == Decimal(body_value)
    return isinstance(body_value, str) and text == body_value


def _lookup(arguments: Any, path: tuple[str, ...]) -> Any:
    value = arguments
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value
