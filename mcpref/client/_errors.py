"""Typed errors: one class per JSON-RPC error code, so callers catch what they can handle.

A JSON-RPC error from the server becomes the subclass for its code (basic/index.mdx §Error
Codes), keeping `code`, `message` and `data` as sent. Two more kinds cover answers that are not
a JSON-RPC error at all: `TransportError` (the HTTP or stdio layer failed, or the answer is not
an MCP message) and `ProtocolError` (a well-formed answer that breaks a rule the client relies
on). A tool that fails reports `isError: true` in its result; that is a result, never an error.
"""

from __future__ import annotations

from typing import Any

from .. import jsonrpc


class MCPClientError(Exception):
    """Base of every error the client raises; catch a subclass for the errors you can handle.

    Args:
        message: The error's message, as the server sent it (or the client's own words).
        code: The JSON-RPC code; by default the subclass's, None when there is none.
        data: The error's `data`, as sent.
        status_code: The HTTP status it came with; None off HTTP or when the answer was a 2xx.
    """

    code: int | None = None

    def __init_subclass__(cls, *, code: int | None = None, **kwargs: Any) -> None:
        """`class ParseError(MCPClientError, code=jsonrpc.PARSE_ERROR)` gives a class its code."""
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

    def __init__(
        self, message: str, *, code: int | None = None, data: Any = None, status_code: int | None = None
    ) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.data = data
        self.status_code = status_code

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, data={self.data!r})"


class ParseError(MCPClientError, code=jsonrpc.PARSE_ERROR):
    """The server could not parse what was sent as JSON (-32700)."""


class InvalidRequest(MCPClientError, code=jsonrpc.INVALID_REQUEST):
    """The message was JSON but not a valid request, or a request the server cannot serve (-32600)."""


class MethodNotFound(MCPClientError, code=jsonrpc.METHOD_NOT_FOUND):
    """The method is unknown, removed, or its server capability is not advertised."""


class InvalidParams(MCPClientError, code=jsonrpc.INVALID_PARAMS):
    """Unknown tool or prompt, bad cursor, bad arguments, or a resource that does not exist."""


class InternalError(MCPClientError, code=jsonrpc.INTERNAL_ERROR):
    """The server failed while handling the request (-32603); it says no more, by design."""


class HeaderMismatch(MCPClientError, code=jsonrpc.HEADER_MISMATCH):
    """The HTTP headers did not mirror the body (a client bug, or a proxy rewriting headers)."""


class MissingRequiredClientCapability(MCPClientError, code=jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY):
    """The request needs a client capability this client did not declare (plug in its handler)."""

    @property
    def required_capabilities(self) -> dict[str, Any]:
        """The capabilities the server needed, from the error's `data`."""
        data = self.data if isinstance(self.data, dict) else {}
        required = data.get("requiredCapabilities")
        return required if isinstance(required, dict) else {}


class UnsupportedProtocolVersion(MCPClientError, code=jsonrpc.UNSUPPORTED_PROTOCOL_VERSION):
    """The server does not speak the requested version; `supported` lists what it does speak."""

    @property
    def supported(self) -> list[str]:
        """The versions the server speaks, from the error's `data`."""
        data = self.data if isinstance(self.data, dict) else {}
        supported = data.get("supported")
        return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []

    @property
    def requested(self) -> Any:
        """The version the request asked for, as the server read it."""
        return self.data.get("requested") if isinstance(self.data, dict) else None


class TransportError(MCPClientError):
    """No usable answer: the connection or process failed, nothing came in time, the HTTP status or
    content type was unexpected, the body was not JSON-RPC, or the stream ended before the response.

    Args:
        message: What failed.
        status_code: The HTTP status, if one came.
        body: An excerpt of the unexpected body, if any.
        timed_out: No answer came in time. On stdio that is the legacy signal of era detection.
    """

    def __init__(
        self, message: str, *, status_code: int | None = None, body: str | None = None, timed_out: bool = False
    ) -> None:
        super().__init__(message, status_code=status_code)
        self.body = body
        self.timed_out = timed_out


class SessionExpired(TransportError):
    """A legacy (2025-11-25) server answered 404 to a request carrying its `Mcp-Session-Id`: the
    session is gone, and the client must start a new one with `initialize`."""


class ProtocolError(MCPClientError):
    """A well-formed answer that breaks the protocol: an unknown `resultType`, a response to another
    id, an input request the client never declared, or more MRTR rounds than the client allows."""


#: Classes by code; `MCPClientError` itself covers codes the spec does not define.
ERRORS_BY_CODE: dict[int, type[MCPClientError]] = {
    cls.code: cls
    for cls in (
        ParseError,
        InvalidRequest,
        MethodNotFound,
        InvalidParams,
        InternalError,
        HeaderMismatch,
        MissingRequiredClientCapability,
        UnsupportedProtocolVersion,
    )
    if cls.code is not None
}
#: Old servers still send the pre-2026 resource-not-found code; it means what -32602 means now.
ERRORS_BY_CODE[jsonrpc.LEGACY_RESOURCE_NOT_FOUND] = InvalidParams

#: Codes that only a 2026-07-28 (or later) server sends: seeing one proves the server is modern.
MODERN_ERROR_CODES = frozenset(
    {jsonrpc.HEADER_MISMATCH, jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY, jsonrpc.UNSUPPORTED_PROTOCOL_VERSION}
)


def error_from(error: Any, status_code: int | None = None) -> MCPClientError:
    """The typed exception for a JSON-RPC error object (the `error` member of a response).

    Args:
        error: The `error` member, as received.
        status_code: The HTTP status it came with, if any.

    Returns:
        The subclass for its code (`MCPClientError` for a code the spec does not define), or a
            `ProtocolError` for a malformed error object.
    """
    if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
        return ProtocolError(f"malformed JSON-RPC error object: {error!r}", status_code=status_code)
    code = error["code"]
    message = error.get("message")
    cls = ERRORS_BY_CODE.get(code, MCPClientError)
    text = message if isinstance(message, str) else f"error {code}"
    return cls(text, code=code, data=error.get("data"), status_code=status_code)
