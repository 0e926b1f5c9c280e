"""JSON-RPC 2.0 framing: turning bytes into one checked message, and errors into bytes.

MCP speaks JSON-RPC 2.0 over UTF-8 (spec: basic/index.mdx). Every transport feeds raw bytes
to `parse_message` and gets back a `Request` or a `Notification`, or an `MCPError` whose code
is the one JSON-RPC prescribes. Every error code MCP uses is named here. Nothing else in the
package looks at raw bytes; how bytes become values and back is the codec's job (`_codec`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._codec import NotJSON, decode
from ._codec import encode as encode  # every transport writes with it: part of this module's surface

JSONRPC_VERSION = "2.0"

# Standard JSON-RPC codes.
PARSE_ERROR = -32700
"""JSON-RPC: the body is not JSON."""
INVALID_REQUEST = -32600
"""JSON-RPC: JSON, but not a valid request."""
METHOD_NOT_FOUND = -32601
"""JSON-RPC: no such method (or not one this server offers)."""
INVALID_PARAMS = -32602
"""JSON-RPC: the params are wrong; in MCP also an unknown tool, prompt or resource."""
INTERNAL_ERROR = -32603
"""JSON-RPC: the server failed; raise it from a handler when the fault is yours, not the caller's."""
# Codes the 2026-07-28 revision adds in the spec-reserved block (basic/index.mdx §Error Codes).
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
# Codes of earlier revisions, reserved still (basic/index.mdx §Error Codes).
#: The pre-2026 resource-not-found code: old servers still send it, and mcpref answers it to
#: legacy clients (server/resources.mdx §Error Handling). -32602 replaces it.
LEGACY_RESOURCE_NOT_FOUND = -32002
#: "URL elicitation required", 2025-11-25 only.
URL_ELICITATION_REQUIRED = -32042

RequestId = str | int

#: How deep a message may nest before it is refused. Real MCP traffic stays well under 20.
MAX_NESTING_DEPTH = 64


#: An error message is cut after this many characters: messages often quote what the client sent
#: (a tool name, a URI, a header), and an error must never echo a large input back.
MAX_MESSAGE_CHARS = 500


class MCPError(Exception):
    """An error that becomes a JSON-RPC error object on the wire.

    Raise it from a handler to answer with a protocol error rather than a result.

    Args:
        code: The JSON-RPC error code (`INVALID_PARAMS`, ... or one of MCP's own).
        message: A short sentence for the developer; cut after 500 characters, since messages
            often quote what the client sent.
        data: Anything more the client can act on, as the `error.data` member; None leaves it out.
        http_status: The status Streamable HTTP answers with; None lets the transport pick its
            default for the code (see `transports.http.status_for`).
        http_headers: Headers the HTTP answer carries besides the usual ones (`Retry-After`, ...).
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
        """The JSON-RPC `error` member.

        Returns:
            `code`, `message`, and `data` when there is any.
        """
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


def decode_json(body: bytes, *, yielding: bool = False) -> Any:
    """Decode one JSON text; bytes that are not JSON, or nest deeper than `MAX_NESTING_DEPTH`,
    are a parse error (-32700) saying why. How it decodes, fast and strictly: `mcpref._codec`
    (`yielding=True` in a worker thread: see `_codec.decode`)."""
    try:
        return decode(body, MAX_NESTING_DEPTH, yielding=yielding)
    except NotJSON as exc:
        raise MCPError(PARSE_ERROR, f"Parse error: {exc}") from None


def parse_message(body: bytes, *, yielding: bool = False) -> Message:
    """Parse one client-to-server JSON-RPC message (`yielding=True` from a worker thread, so a
    body of many small objects does not hold the GIL, and with it the event loop, for long).

    Checks run in this order, so the first failure names the most basic problem:
    encoding and JSON syntax (-32700), then the envelope (-32600): a single object (MCP has no
    batches), `jsonrpc: "2.0"`, a string `method`, an `id` that is a string or an integer
    (never null, a float or a boolean), and `params` that is an object when present.
    Responses are refused too: clients never send them.
    """
    payload = decode_json(body, yielding=yielding)
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
