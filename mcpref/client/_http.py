"""Streamable HTTP from the client's side: one POST per message, headers mirrored from the body.

The answer to a request is one JSON object or an SSE stream of request-scoped notifications
ending with the response (basic/transports/streamable-http.mdx); `exchange` yields every message
either way, so the client has one loop for both. Closing the stream early is cancellation: the
spec defines no other way to cancel on HTTP. SSE framing is parsed by `httpx-sse`.

Modern bodies (with `_meta` protocolVersion) get their headers from `mcpref.headers.request_headers`.
Legacy bodies (2025-11-25, after `initialize`) get `MCP-Protocol-Version` with the negotiated
version and echo `Mcp-Session-Id` if the server minted one.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncGenerator, Mapping
from contextlib import suppress
from functools import cache
from typing import Any

import httpx
from httpx_sse import EventSource, SSEError

from .. import telemetry
from ..headers import ACCEPT, PROTOCOL_VERSION_HEADER, request_headers
from ..jsonrpc import MCPError, decode_json, encode
from ..meta import PROTOCOL_VERSION_KEY
from ..tasks.record import NAME_FIELDS as EXTENSION_NAME_FIELDS
from ._errors import SessionExpired, TransportError, error_from
from ._transport import HeaderParams, StrayHandler

SESSION_HEADER = "Mcp-Session-Id"
#: How much of an unexpected body an error message quotes.
_EXCERPT = 200


@cache
def default_ssl_context() -> ssl.SSLContext:
    """httpx's default TLS settings, built once: loading the CA bundle costs ~0.1 s per client.

    Returns:
        The one context every client that makes its own `httpx.AsyncClient` shares.
    """
    return httpx.create_ssl_context()


class _EventStream(EventSource):
    """httpx-sse's reader, without its own media type check: it compares case-sensitively, while
    media types are case-insensitive (RFC 9110 §8.3.1), and `exchange` has checked already."""

    def _check_content_type(self) -> None:
        pass


class HTTPTransport:
    """Posts JSON-RPC messages to one MCP endpoint with an `httpx.AsyncClient` the caller owns
    ([`basic/transports/streamable-http.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)).

    Args:
        url: The endpoint's URL, such as `http://127.0.0.1:8000/mcp`.
        http: The client that sends every request; its headers, auth and timeouts apply, and it
            stays open when the transport closes.
    """

    #: Streamable HTTP mirrors parts of the body in headers, so the client must know each tool's
    #: `x-mcp-header` parameters before calling it.
    uses_headers = True

    #: HTTP keeps no process-scoped state: the era and the legacy session outlive any one request.
    generation = 0

    def __init__(self, url: str, http: httpx.AsyncClient) -> None:
        self.url = url
        self.endpoint = url
        self.http = http
        #: Unused on HTTP: every notification arrives on the stream of the request it belongs to.
        self.on_stray: StrayHandler | None = None
        #: Set after a legacy `initialize`: sent as `MCP-Protocol-Version` on legacy requests.
        self.legacy_version: str | None = None
        #: A legacy session id minted by the server in its `initialize` answer.
        self.session_id: str | None = None

    def headers_for(self, message: Mapping[str, Any], header_params: HeaderParams | None = None) -> dict[str, str]:
        """Every header a POST of `message` carries.

        Args:
            message: The JSON-RPC request or notification.
            header_params: The tool's `x-mcp-header` parameters, mirrored as `Mcp-Param-*`.

        Returns:
            The headers by name: the content types, `Mcp-Method` and the other mirrored headers
                of a modern request, the version of a legacy one, and the legacy session id.
        """
        headers = {"Content-Type": "application/json", "Accept": ACCEPT}
        params = message.get("params") or {}
        if isinstance((params.get("_meta") or {}).get(PROTOCOL_VERSION_KEY), str):
            if "id" in message:
                method = message["method"]
                headers.update(request_headers(method, params, header_params, EXTENSION_NAME_FIELDS.get(method)))
            else:
                # Header rules for notification POSTs are not defined (streamable-http.mdx Note);
                # the version is the one header every POST is asked to carry.
                headers[PROTOCOL_VERSION_HEADER] = params["_meta"][PROTOCOL_VERSION_KEY]
        elif self.legacy_version is not None:
            headers[PROTOCOL_VERSION_HEADER] = self.legacy_version
        if self.session_id is not None:
            headers[SESSION_HEADER] = self.session_id
        return headers

    async def exchange(
        self, message: dict[str, Any], *, header_params: HeaderParams | None = None, long_lived: bool = False
    ) -> AsyncGenerator[dict[str, Any], None]:
        """POST one request and yield each JSON-RPC message of the answer, the response last.

        Stop iterating (or `aclose()` the iterator) to close the connection, which the server
        takes as cancellation.

        Args:
            message: The JSON-RPC request.
            header_params: The tool's `x-mcp-header` parameters, mirrored as `Mcp-Param-*`.
            long_lived: Lift the read timeout, for `subscriptions/listen`.

        Yields:
            Each message of the answer: one JSON body, or each event of an SSE stream.

        Raises:
            MCPClientError: A JSON-RPC error answered with an HTTP error status.
            SessionExpired: The server ended the legacy session (404).
            TransportError: The connection failed, or the answer is neither JSON-RPC nor SSE.
        """
        timeout = httpx.Timeout(self.http.timeout.connect, read=None) if long_lived else httpx.USE_CLIENT_DEFAULT
        content, headers = encode(message), self.headers_for(message, header_params)
        try:
            async with self.http.stream(
                "POST", self.url, content=content, headers=headers, timeout=timeout
            ) as response:
                if message.get("method") == "initialize" and SESSION_HEADER in response.headers:
                    self.session_id = response.headers[SESSION_HEADER]
                elif response.status_code == 404 and SESSION_HEADER in headers:
                    self.session_id = None
                    raise SessionExpired(
                        f"the server ended session {headers[SESSION_HEADER]!r} (HTTP 404)", status_code=404
                    )
                media_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
                if media_type == "text/event-stream" and response.is_success:
                    async for event in _EventStream(response).aiter_sse():
                        if event.event in ("", "message") and event.data:
                            yield _decode(event.data.encode("utf-8"), response.status_code)
                    return
                body = await response.aread()
                if media_type == "application/json" and body:
                    payload = _decode(body, response.status_code)
                    if response.is_success:
                        yield payload
                        return
                    if "error" in payload:
                        # A JSON-RPC error with a 4xx/5xx status: raised here, where the status is known.
                        raise error_from(payload["error"], response.status_code)
                raise _unexpected(response, body, "a JSON-RPC response")
        except (httpx.TransportError, SSEError) as exc:
            raise TransportError(f"HTTP exchange with {self.url} failed: {exc!r}") from exc

    async def notify(self, message: dict[str, Any]) -> None:
        """POST a notification; the server accepts it with 202 and no body.

        Args:
            message: The JSON-RPC notification.

        Raises:
            TransportError: The connection failed, or the server did not accept it.
        """
        message = telemetry.inject(message)
        try:
            response = await self.http.post(self.url, content=encode(message), headers=self.headers_for(message))
        except httpx.TransportError as exc:
            raise TransportError(f"HTTP POST to {self.url} failed: {exc!r}") from exc
        if not response.is_success:
            raise _unexpected(response, response.content, "202 Accepted")

    async def connect(self) -> None:
        """Nothing to do: httpx connects per request and keeps connections alive itself."""

    async def aclose(self) -> None:
        """Ask the server to drop a legacy session (2025-11-25: DELETE; a 405 just means it won't).
        The httpx client belongs to whoever made it."""
        if self.session_id is None:
            return
        with suppress(httpx.HTTPError):
            await self.http.delete(self.url, headers=self.headers_for({}))
        self.session_id = None


def _decode(body: bytes, status: int) -> dict[str, Any]:
    """One JSON-RPC message, checked only as far as the client relies on it: a JSON object."""
    try:
        payload = decode_json(body)
    except MCPError as exc:
        raise TransportError(f"the server sent invalid JSON: {exc.message}", status_code=status) from None
    if not isinstance(payload, dict) or payload.get("jsonrpc") != "2.0":
        raise TransportError("the server sent something that is not a JSON-RPC 2.0 message", status_code=status)
    return payload


def _unexpected(response: httpx.Response, body: bytes, wanted: str) -> TransportError:
    text = body[:_EXCERPT].decode("utf-8", "replace")
    content_type = response.headers.get("content-type", "none")
    challenge = response.headers.get("www-authenticate")
    # A 401 has an empty body: the challenge is what tells the user what to do.
    hint = f"; the server asks for authorization (Client's auth=): WWW-Authenticate: {challenge}" if challenge else ""
    return TransportError(
        f"expected {wanted} but got HTTP {response.status_code} ({content_type}): {text!r}{hint}",
        status_code=response.status_code,
        body=text,
    )
