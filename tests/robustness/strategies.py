"""Hypothesis strategies for what a stranger may POST: bodies, headers and encodings.

Most of what they draw is *almost* right, so that it gets past the first check and reaches the
deeper ones: valid requests for `mcpref.examples.robustness_server` (with the headers a correct client
would send, built by `mcpref.headers.request_headers`), then broken in one or a few places.
"""

from __future__ import annotations

import base64
import gzip
import json
import re
from typing import Any

from hypothesis import strategies as st

from mcpref.examples.robustness_server import GREETING_URI, server
from mcpref.headers import PROTOCOL_VERSION_HEADER, request_headers
from mcpref.legacy import LEGACY_VERSIONS
from mcpref.meta import PROTOCOL_VERSION_KEY
from tests.conftest import ACCEPT, META

Headers = list[tuple[bytes, bytes]]

# -- values ----------------------------------------------------------------------------------

#: Strings a parser can choke on: lone and reversed surrogates, NUL, a BOM, RTL and combining marks,
#: the base64 sentinel markers, header-hostile characters, very long text.
NASTY_STRINGS = [
    "",
    " ",
    "\ud800",
    "a\udfffb",
    "\udc00\ud800",
    "\x00",
    "\ufeff",
    "\u202e\u0301",
    "\U0001f600",
    "=?base64?",
    "=?base64??=",
    "=?base64?aGk=?=",
    "\r\nX-Injected: 1",
    "x" * 5000,
    "${jndi:ldap://x}",
    "../../../etc/passwd",
]

texts = st.one_of(st.text(max_size=30), st.sampled_from(NASTY_STRINGS), st.text(st.characters(exclude_categories=())))
#: Integers and floats at the edges: beyond 2**53, beyond int64, NaN and the infinities.
numbers = st.one_of(
    st.integers(),
    st.sampled_from([0, -1, 2**53, 2**53 + 1, 2**63, -(2**64), 10**100]),
    st.floats(allow_nan=True, allow_infinity=True),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(texts, children, max_size=4)),
    max_leaves=12,
)


# -- valid requests --------------------------------------------------------------------------


def _meta(**extra: Any) -> dict[str, Any]:
    return {**META, **extra}


ELICITING = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}


@st.composite
def valid_requests(draw: st.DrawFn) -> dict[str, Any]:
    """A request the robustness server answers with a result (or a method-level error)."""
    text = draw(texts)
    params = draw(
        st.sampled_from(
            [
                ("server/discover", {}),
                ("tools/list", {}),
                ("tools/list", {"cursor": text}),
                ("tools/call", {"name": "echo", "arguments": {"message": text}}),
                ("tools/call", {"name": "whoami", "arguments": {}}),
                ("tools/call", {"name": "fail"}),
                ("tools/call", {"name": "touch", "arguments": {"uri": text}}),
                ("tools/call", {"name": text, "arguments": {}}),
                ("tools/call", {"name": "route", "arguments": {"region": text}}),
                ("tools/call", {"name": "route", "arguments": {"region": "eu", "priority": draw(numbers)}}),
                ("tools/call", {"name": "route", "arguments": {"region": text, "dry_run": draw(st.booleans())}}),
                ("tools/call", {"name": "book", "arguments": {"seat": text}}),
                (
                    "tools/call",
                    {
                        "name": "book",
                        "arguments": {"seat": "1A"},
                        "inputResponses": {"confirm": {"action": "accept", "content": {"ok": True}}},
                        "requestState": text,
                    },
                ),
                ("tools/call", {"name": "survey", "arguments": {}}),
                ("resources/list", {}),
                ("resources/templates/list", {}),
                ("resources/read", {"uri": GREETING_URI}),
                ("resources/read", {"uri": f"robust://items/{text}"}),
                ("resources/read", {"uri": text}),
                ("prompts/list", {}),
                ("prompts/get", {"name": "greet", "arguments": {"name": text}}),
                (
                    "completion/complete",
                    {"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": text}},
                ),
                (
                    "completion/complete",
                    {
                        "ref": {"type": "ref/resource", "uri": "robust://items/{item_id}"},
                        "argument": {"name": "item_id", "value": text},
                        "context": {"arguments": {"name": text}},
                    },
                ),
                (
                    "subscriptions/listen",
                    {"notifications": {"toolsListChanged": True, "resourceSubscriptions": [text]}},
                ),
                (
                    "initialize",
                    {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "f", "version": "1"}},
                ),
                ("ping", {}),
            ]
        )
    )
    method, body_params = params
    meta = draw(
        st.sampled_from(
            [
                META,
                ELICITING,
                _meta(progressToken=draw(st.one_of(st.integers(), texts))),
                _meta(**{"io.modelcontextprotocol/logLevel": draw(st.sampled_from(["debug", "info", "nope"]))}),
            ]
        )
    )
    request_id = draw(st.one_of(st.integers(), texts))
    # A 2025-era client sends no per-request _meta (its version travels in the header only);
    # that is how `initialize` usually arrives.
    modern = draw(st.integers(1, 4)) == 1 if method == "initialize" else draw(st.integers(1, 10)) != 1
    if modern:
        body_params = {**body_params, "_meta": meta}
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body_params}


#: Fields each request may carry, by where they sit; `with_any_field` puts any JSON value there.
KNOWN_FIELDS = {
    (): ["jsonrpc", "id", "method", "params"],
    ("params",): [
        "_meta",
        "name",
        "arguments",
        "uri",
        "cursor",
        "inputResponses",
        "requestState",
        "notifications",
        "protocolVersion",
        "capabilities",
        "ref",
        "argument",
        "context",
    ],
    ("params", "_meta"): [
        PROTOCOL_VERSION_KEY,
        *(
            f"io.modelcontextprotocol/{key}"
            for key in ("clientCapabilities", "clientInfo", "logLevel", "subscriptionId")
        ),
        "progressToken",
    ],
    ("params", "arguments"): ["message", "region", "priority", "dry_run", "seat", "uri"],
    ("params", "notifications"): ["toolsListChanged", "resourcesListChanged", "resourceSubscriptions"],
}


@st.composite
def with_any_field(draw: st.DrawFn, request: dict[str, Any]) -> dict[str, Any]:
    """`request` with one known field, present or not, set to any JSON value: wrong types
    everywhere in the envelope, in params and in `_meta`, one field at a time."""
    places = [
        (*parent, name)
        for parent, names in KNOWN_FIELDS.items()
        if isinstance(_node_or_none(request, parent), dict)
        for name in names
    ]
    path = draw(st.sampled_from(places))
    parent = dict(_node_or_none(request, path[:-1]))
    parent[path[-1]] = draw(json_values)
    return _replace(request, path[:-1], parent)


def _node_or_none(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def correct_headers(request: Any) -> Headers:
    """The headers a correct client sends with `request` (whatever it is, if it can be read)."""
    headers: Headers = [(b"content-type", b"application/json"), (b"accept", ACCEPT.encode())]
    if not isinstance(request, dict) or not isinstance(request.get("params"), dict):
        return headers
    method, params = request.get("method"), request["params"]
    if not isinstance(method, str):
        return headers
    try:
        mirrored = request_headers(method, params, server.header_params_for(method, params))
    except (TypeError, AttributeError, ValueError):
        return headers
    meta = params.get("_meta")
    if not (isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta):
        mirrored[PROTOCOL_VERSION_HEADER] = LEGACY_VERSIONS[0]
    # A value no HTTP library would send (a body version with a newline, say) is left out; the
    # server must then notice the header is missing.
    headers += [
        (name.lower().encode(), value.encode()) for name, value in mirrored.items() if _SENDABLE.fullmatch(value)
    ]
    return headers


_SENDABLE = re.compile(r"([\x21-\x7e]([\x20-\x7e\t]*[\x21-\x7e])?)?")


@st.composite
def garbled_token(draw: st.DrawFn, token: str) -> str:
    """A server-issued token (cursor, requestState) with one character changed, cut or added."""
    position = draw(st.integers(0, len(token)))
    change = draw(st.sampled_from(["flip", "cut", "insert", "swap_halves"]))
    if change == "flip" and position < len(token):
        return token[:position] + draw(st.sampled_from("A_-.=/+\ud800é0")) + token[position + 1 :]
    if change == "cut":
        return token[:position]
    if change == "insert":
        return token[:position] + draw(texts) + token[position:]
    left, _, right = token.partition(".")
    return f"{right}.{left}"


# -- rendering to bytes ----------------------------------------------------------------------


def to_json(value: Any, *, ascii_only: bool = True) -> bytes:
    """JSON text as Python writes it: NaN and Infinity literals included; lone surrogates come
    out as `\\ud800` escapes, or as invalid UTF-8 bytes when `ascii_only` is off."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


@st.composite
def rendered(draw: st.DrawFn, value: Any) -> bytes:
    return to_json(value, ascii_only=draw(st.booleans()))


# -- mutations -------------------------------------------------------------------------------


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, sub in value.items():
            found += _paths(sub, (*prefix, key))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            found += _paths(sub, (*prefix, index))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any, *, delete: bool = False) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        if delete and not rest:
            copy.pop(head, None)
        else:
            copy[head] = _replace(value[head], rest, new, delete=delete)
        return copy
    copy_list = list(value)
    if delete and not rest:
        del copy_list[head]
    else:
        copy_list[head] = _replace(value[head], rest, new, delete=delete)
    return copy_list


@st.composite
def mutated(draw: st.DrawFn, value: Any, max_mutations: int = 3) -> Any:
    """`value` with one to a few nodes replaced by any JSON value, deleted, wrapped or renamed."""
    for _ in range(draw(st.integers(1, max_mutations))):
        path = draw(st.sampled_from(_paths(value)))
        operation = draw(st.sampled_from(["replace", "delete", "wrap", "rename", "add"]))
        if operation == "replace" or not path:
            value = _replace(value, path, draw(json_values))
        elif operation == "delete":
            value = _replace(value, path, None, delete=True)
        elif operation == "wrap":
            node = _node(value, path)
            value = _replace(value, path, draw(st.sampled_from([[node], {"value": node}, [node, node]])))
        else:
            parent_path = path[:-1]
            parent = _node(value, parent_path)
            if not isinstance(parent, dict):
                continue
            changed = dict(parent)
            if operation == "rename":
                changed[draw(texts)] = changed.pop(path[-1])
            else:
                changed[draw(texts)] = draw(json_values)
            value = _replace(value, parent_path, changed)
    return value


def _node(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


@st.composite
def textual_attacks(draw: st.DrawFn, request: dict[str, Any]) -> bytes:
    """Damage only JSON text can carry: duplicate keys, deep nesting, literals and numbers
    Python would not write, truncation, stray bytes around the object, invalid UTF-8."""
    body = to_json(request)
    attack = draw(
        st.sampled_from(
            ["duplicate", "nest", "literal", "huge_number", "truncate", "pad", "bom", "concat", "bad_utf8", "empty"]
        )
    )
    if attack == "duplicate":
        key = draw(st.sampled_from(["id", "method", "jsonrpc", "params", "_meta", draw(texts)]))
        extra = json.dumps(key).encode() + b":" + to_json(draw(json_values))
        if key == "_meta" or draw(st.booleans()):
            # Inside params, where `_meta`, `name` and `arguments` live.
            return body.replace(b'"params": {', b'"params": {' + extra + b",", 1)
        return body[:-1] + b"," + extra + b"}"
    if attack == "nest":
        depth = draw(st.integers(20, 5000))
        opener, closer = draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]))
        nested = opener * depth + b"1" + closer * depth
        return body.replace(b'"params": {', b'"params": {"deep": ' + nested + b",", 1)
    if attack == "literal":
        literal = draw(
            st.sampled_from([b"NaN", b"Infinity", b"-Infinity", b"undefined", b"1e999", b"-1e999", b"1e-999"])
        )
        target = draw(
            st.sampled_from(
                [b'"id": ', b'"message": ', b'"progressToken": ', b'"cursor": ', b'"protocolVersion": ', b'"seat": ']
            )
        )
        if target not in body:
            target = b'"id": '
        start = body.index(target) + len(target)
        end = start
        while end < len(body) and body[end : end + 1] not in (b",", b"}"):
            if body[end : end + 1] == b'"':
                end = body.index(b'"', end + 1) + 1 if b'"' in body[end + 1 :] else len(body)
                continue
            end += 1
        return body[:start] + literal + body[end:]
    if attack == "huge_number":
        digits = draw(st.integers(16, 6000))
        number = draw(st.sampled_from([b"1" + b"0" * digits, b"-" + b"9" * digits, b"0." + b"0" * digits + b"1"]))
        return body.replace(b'"id": ', b'"id": ' + number + b', "x": ', 1)
    if attack == "truncate":
        return body[: draw(st.integers(0, max(len(body) - 1, 0)))]
    if attack == "pad":
        return (
            draw(st.sampled_from([b" \t\r\n", b""]))
            + body
            + draw(st.sampled_from([b"\n", b" x", b"\x00", b"}", b"garbage"]))
        )
    if attack == "bom":
        return b"\xef\xbb\xbf" + body
    if attack == "concat":
        return body + draw(st.sampled_from([b"", b"\n", b","])) + body
    if attack == "bad_utf8":
        junk = draw(st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80"]))
        at = draw(st.integers(0, len(body)))
        return body[:at] + junk + body[at:]
    return b""


# -- headers ---------------------------------------------------------------------------------

#: Values h11 lets through on the wire: visible latin-1 and inner spaces/tabs, no CR/LF/NUL.
header_text = st.text(
    st.characters(codec="latin-1", exclude_categories=("Cc",), exclude_characters="\x7f"), max_size=40
).map(lambda text: text.strip(" \t"))

SENTINEL_EDGES = [
    "=?base64??=",
    "=?base64?=?=",
    "=?base64?====?=",
    "=?base64?ZXU?=",  # "eu" without padding
    "=?base64?ZXU=?=",  # "eu"
    "=?base64?ZX U=?=",
    "=?base64?ZXU=?=\t=?base64?ZXU=?=",
    "=?BASE64?ZXU=?=",
    "=?base64?_-_-?=",
    "=?base64?/w==?=",  # a lone 0xff byte: not UTF-8
    "=?base64?7aCA?=",  # an encoded surrogate: not UTF-8 either
    "=?base64?" + base64.b64encode(b"=?base64?ZXU=?=").decode() + "?=",
    "=?base64?ZXU=",
    "ZXU=?=",
]
CONTENT_TYPES = [
    "application/json",
    "application/json; charset=utf-8",
    "Application/JSON",
    "application/json;charset=latin-1",
    "application/json; charset=utf-16",
    "application/json-seq",
    "application/jsonx",
    "text/json",
    "text/plain",
    "multipart/form-data; boundary=x",
    "application/json;;;",
    ";",
    "",
]
ACCEPTS = [
    ACCEPT,
    "*/*",
    "application/*, text/*",
    "application/json",
    "text/event-stream",
    "application/json;q=0, text/event-stream;q=0",
    "text/event-stream, application/json",
    ",,,",
    "",
]


@st.composite
def mutated_headers(draw: st.DrawFn, headers: Headers) -> Headers:
    """`headers` dropped, duplicated, garbled, re-cased or extended in one to a few places."""
    headers = list(headers)
    for _ in range(draw(st.integers(1, 3))):
        operation = draw(
            st.sampled_from(["drop", "duplicate", "garble", "recase", "sentinel", "content-type", "accept", "extra"])
        )
        index = draw(st.integers(0, len(headers) - 1)) if headers else None
        if operation == "drop" and index is not None:
            del headers[index]
        elif operation == "duplicate" and index is not None:
            name, value = headers[index]
            headers.append((name, draw(st.sampled_from([value, draw(header_text).encode("latin-1")]))))
        elif operation == "garble" and index is not None:
            headers[index] = (headers[index][0], draw(header_text).encode("latin-1"))
        elif operation == "recase" and index is not None:
            headers[index] = (headers[index][0].upper(), headers[index][1])
        elif operation == "sentinel":
            name = draw(st.sampled_from([b"mcp-name", b"mcp-param-region", b"mcp-param-priority", b"mcp-method"]))
            headers = [(n, v) for n, v in headers if n != name] + [
                (name, draw(st.sampled_from(SENTINEL_EDGES)).encode())
            ]
        elif operation == "content-type":
            headers = [(n, v) for n, v in headers if n != b"content-type"]
            headers.append((b"content-type", draw(st.sampled_from(CONTENT_TYPES)).encode()))
        elif operation == "accept":
            headers = [(n, v) for n, v in headers if n != b"accept"]
            headers.append((b"accept", draw(st.sampled_from(ACCEPTS)).encode()))
        else:
            name = draw(
                st.sampled_from(
                    [
                        b"origin",
                        b"mcp-param-unknown",
                        b"mcp-session-id",
                        b"last-event-id",
                        b"authorization",
                        b"mcp-protocol-version",
                        b"mcp-name",
                    ]
                )
            )
            value = draw(
                st.one_of(header_text, st.sampled_from(["http://localhost:1", "null", "2025-11-25", "2026-07-28"]))
            )
            headers.append((name, value.encode("latin-1")))
    return headers


# -- encodings -------------------------------------------------------------------------------


@st.composite
def encoded(draw: st.DrawFn, body: bytes, headers: Headers) -> tuple[list[bytes], Headers]:
    """The same body in another encoding or framing: UTF-16/32 or latin-1 with or without a
    charset that says so, a BOM, gzip with Content-Encoding, or in pieces (sent chunked)."""
    form = draw(st.sampled_from(["utf-16", "utf-16-le", "utf-32", "latin-1", "gzip", "chunked", "bom"]))
    if form == "gzip":
        return [gzip.compress(body)], [*headers, (b"content-encoding", b"gzip")]
    if form == "chunked":
        cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=6)))
        return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)], headers
    if form == "bom":
        return [b"\xef\xbb\xbf" + body], headers
    data = body.decode("utf-8", "surrogatepass").encode(form, "replace")
    if draw(st.booleans()):
        headers = [(n, v) for n, v in headers if n != b"content-type"]
        headers.append((b"content-type", f"application/json; charset={form}".encode()))
    return [data], headers


# -- raw HTTP/1.1 bytes ----------------------------------------------------------------------

RAW_MUTATIONS = {
    "request line": [
        b"post /mcp HTTP/1.1",
        b"POST /mcp HTTP/1.0",
        b"POST /mcp HTTP/2.0",
        b"POST http://x/mcp HTTP/1.1",
        b"POST /mcp?x=1 HTTP/1.1",
        b"POST /%6dcp HTTP/1.1",
        b"POST //mcp HTTP/1.1",
        b"POST  /mcp HTTP/1.1",
        b"POST /mcp",
        b"\x00POST /mcp HTTP/1.1",
    ],
    "content-length": [b"abc", b"-1", b"1e3", b"+5", b" 5 ", b"\xb2", b"99999999999999999999", b"0", b"5, 6"],
    "header line": [
        b"Mcp-Method:",
        b"Mcp-Method tools/list",
        b" folded: continuation",
        b"Mcp-Name: a\x00b",
        b"Mcp-Name: \xff\xfe",
        b"Mcp-Name: a\x7fb",
        b"X: " + b"x" * 70000,
        b"Transfer-Encoding: chunked",
        b"Transfer-Encoding: gzip, chunked",
        b"Content-Length: 3",
        b"Expect: 100-continue",
        b": empty-name",
    ],
}


@st.composite
def raw_http(draw: st.DrawFn, body: bytes, headers: Headers) -> bytes:
    """A request as bytes on the socket, damaged where HTTP libraries would refuse to send it."""
    request_line = b"POST /mcp HTTP/1.1"
    lines = [b"Host: 127.0.0.1", *(name + b": " + value for name, value in headers), b"Connection: close"]
    length = str(len(body)).encode()
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(sorted(RAW_MUTATIONS)))
        choice = draw(st.sampled_from(RAW_MUTATIONS[kind]))
        if kind == "request line":
            request_line = choice
        elif kind == "content-length":
            length = choice
        else:
            lines.insert(draw(st.integers(0, len(lines))), choice)
    if draw(st.booleans()):
        body = body[: draw(st.integers(0, len(body)))]  # shorter than it says
    return b"\r\n".join([request_line, *lines, b"Content-Length: " + length, b"", body])
