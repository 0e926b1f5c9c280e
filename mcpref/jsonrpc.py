"""JSON-RPC 2.0 framing: turning bytes into one checked message, and errors into bytes.

MCP speaks JSON-RPC 2.0 over UTF-8 (spec: basic/index.mdx). Every transport feeds raw bytes
to `parse_message` and gets back a `Request` or a `Notification`, or an `MCPError` whose code
is the one JSON-RPC prescribes. Nothing else in the package looks at raw bytes.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import orjson

JSONRPC_VERSION = "2.0"

# Standard JSON-RPC codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Codes the 2026-07-28 revision adds in the spec-reserved block (basic/index.mdx §Error Codes).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
#: The pre-2026 resource-not-found code: old servers still send it, and mcpref answers it to
#: legacy clients (server/resources.mdx §Error Handling). -32602 replaces it.
LEGACY_RESOURCE_NOT_FOUND = -32002

RequestId = str | int

#: How deep a message may nest before it is refused. Real MCP traffic stays well under 20.
MAX_NESTING_DEPTH = 64


#: An error message is cut after this many characters: messages often quote what the client sent
#: (a tool name, a URI, a header), and an error must never echo a large input back.
MAX_MESSAGE_CHARS = 500


class MCPError(Exception):
    """An error that becomes a JSON-RPC error object on the wire.

    `http_status` is the status Streamable HTTP answers with; `None` lets the transport
    pick its default for the code (see `transports.http.status_for`). `http_headers` go with it.
    """

    def __init__(
        self,
        code: int,
        message: str,
        data: Any = None,
        *,
        http_status: int | None = None,
        http_headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        if len(message) > MAX_MESSAGE_CHARS:  # a message quoting what the client sent stays short
            message = message[:MAX_MESSAGE_CHARS] + "... (cut)"
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data
        self.http_status = http_status
        #: Headers the HTTP answer carries besides the usual ones (`Retry-After`, `Connection: close`).
        self.http_headers = http_headers
        #: The id of the request that failed, when it could be read; echoed in the response.
        self.request_id: RequestId | None = None

    def to_error_object(self) -> dict[str, Any]:
        """The JSON-RPC `error` member: `code`, `message`, and `data` when there is any."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


@dataclass
class Request:
    """A JSON-RPC request: it has an id and expects exactly one response."""

    id: RequestId
    method: str
    params: dict[str, Any] = field(default_factory=dict)
    has_params: bool = True


@dataclass
class Notification:
    """A JSON-RPC notification: no id, no response."""

    method: str
    params: dict[str, Any] = field(default_factory=dict)


Message = Request | Notification


def decode_json(body: bytes) -> Any:
    """Decode UTF-8 JSON bytes, refusing bad encodings, non-JSON numbers and pathological nesting.

    `NaN`, `Infinity` and numbers too large for a double (`1e999`) are refused: Python would
    read them, but they are not JSON (RFC 8259 §6) and would be written back as invalid JSON.
    Nesting is checked after parsing, and only when the bracket count says the body could be too
    deep, so ordinary messages pay for two `bytes.count` calls and nothing else.

    orjson reads a message into the same values as the standard library, in a fraction of the
    time. What it refuses goes to the standard library, which refuses it too and words the error;
    so does a body with a run of 19 digits, since orjson reads an integer beyond 64 bits as a
    float where Python keeps it exact.
    """
    if _LONG_NUMBER in body.translate(_DIGITS_AS_ZERO):
        value = _decode_with_stdlib(body)
    else:
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            value = _decode_with_stdlib(body)
    if body.count(b"[") + body.count(b"{") > MAX_NESTING_DEPTH and _deeper_than(body, MAX_NESTING_DEPTH):
        raise _too_deep()
    return value


def _decode_with_stdlib(body: bytes) -> Any:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MCPError(PARSE_ERROR, f"Parse error: body is not valid UTF-8 ({exc.reason})") from None
    try:
        return _DECODER.decode(text)
    except RecursionError:
        raise _too_deep() from None
    except ValueError as exc:
        raise MCPError(PARSE_ERROR, f"Parse error: {exc}") from None


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
#: Digit runs are found by mapping every digit to 0 and searching bytes, much faster than a regex.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
#: Dataclasses, datetimes and subclasses of str, int, dict and list go to `_ENCODER`, which
#: refuses the first two and writes subclasses as before.
_ORJSON_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def _too_deep() -> MCPError:
    return MCPError(PARSE_ERROR, f"Parse error: JSON nests deeper than {MAX_NESTING_DEPTH} levels")


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


def parse_message(body: bytes) -> Message:
    """Parse one client-to-server JSON-RPC message.

    Checks run in this order, so the first failure names the most basic problem:
    encoding and JSON syntax (-32700), then the envelope (-32600): a single object (MCP has no
    batches), `jsonrpc: "2.0"`, a string `method`, an `id` that is a string or an integer
    (never null, a float or a boolean), and `params` that is an object when present.
    Responses are refused too: clients never send them.
    """
    payload = decode_json(body)
    if not isinstance(payload, dict):
        kind = "an array (batches are not part of MCP)" if isinstance(payload, list) else "not an object"
        raise MCPError(INVALID_REQUEST, f"Invalid Request: the message is {kind}")
    request_id = payload.get("id")
    if payload.get("jsonrpc") != JSONRPC_VERSION:
        raise _invalid('"jsonrpc" must be "2.0"', request_id)
    method = payload.get("method")
    if not isinstance(method, str):
        if "result" in payload or "error" in payload:
            raise _invalid("clients must not send JSON-RPC responses", request_id)
        raise _invalid('"method" must be a string', request_id)
    params = payload.get("params", {})
    if not isinstance(params, dict):
        raise _invalid('"params" must be an object', request_id)
    if "id" not in payload:
        return Notification(method=method, params=params)
    if request_id is None:
        raise _invalid('"id" must not be null', None)
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        raise _invalid('"id" must be a string or an integer', None)
    return Request(id=request_id, method=method, params=params, has_params="params" in payload)


def _invalid(reason: str, request_id: Any) -> MCPError:
    error = MCPError(INVALID_REQUEST, f"Invalid Request: {reason}")
    if is_request_id(request_id):
        error.request_id = request_id
    return error


def is_request_id(value: Any) -> bool:
    """Is `value` an id MCP allows: a string or an integer (never a boolean or `1.0`)?

    Ids match by JSON type and value; Python alone would take `true` and `1.0` for 1, and a
    list or object as a dict key raises. Check with this before comparing or looking one up.
    """
    return type(value) in (str, int)


def same_id(received: Any, sent: RequestId) -> bool:
    """Does a response's `received` id name the request sent with `sent`? By type and value."""
    return type(received) is type(sent) and received == sent


def result_response(request_id: RequestId, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC_VERSION, "id": request_id, "result": result}


def error_response(request_id: RequestId | None, error: MCPError) -> dict[str, Any]:
    """An error response; the id is left out when it could not be read (the schema allows it)."""
    response: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION}
    if request_id is not None:
        response["id"] = request_id
    response["error"] = error.to_error_object()
    return response


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": JSONRPC_VERSION, "method": method, "params": params}


def encode(message: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON, the one encoding every transport writes.

    A lone surrogate (a client may send `"\\ud800"`, and it can come back in an id or an error
    message) has no UTF-8 form; it is written as the same `\\ud800` escape, so the output is
    still valid UTF-8 and JSON instead of an exception.

    orjson writes most messages several times faster, byte for byte as the standard library
    does; a message it cannot write (a lone surrogate, an integer beyond 64 bits, a key that is
    not a string) or might write differently (see `_MAY_DIFFER`) is written by `_ENCODER`.
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
