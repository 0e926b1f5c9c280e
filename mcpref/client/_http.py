"""Streamable HTTP from the client's side: one POST per message, headers mirrored from the body.

The answer to a request is one JSON object or an SSE stream of request-scoped notifications
ending with the response (basic/transports/streamable-http.mdx); `exchange` yields every message
either way, so the client has one loop for both. Closing the stream early is cancellation: the
spec defines no other way to cancel on HTTP. SSE framing is parsed by `_sse`, which bounds one
event as the JSON body is bounded: by `max_message_bytes`, so a server that never stops sending
costs the client that much memory and no more.

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

from .. import telemetry
from ..headers import ACCEPT, PROTOCOL_VERSION_HEADER, request_headers
from ..jsonrpc import MCPError, decode_json, encode
from ..meta import PROTOCOL_VERSION_KEY
from ..tasks.record import NAME_FIELDS as EXTENSION_NAME_FIELDS
from ._errors import SessionExpired, TransportError, error_from
from ._sse import EventTooLarge, events
from ._transport import DEFAULT_MAX_MESSAGE_BYTES, HeaderParams, StrayHandler

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


class BodyTooLarge(Exception):
    """A body passed its bound before it ended.

    Args:
        size: The bytes read when it passed the bound (more may have followed).
    """

    def __init__(self, size: int) -> None:
        super().__init__(f"a body over its bound ({size} bytes read so far)")
        self.size = size


async def read_at_most(response: httpx.Response, limit: int) -> bytes:
    """A streamed response's whole body, as httpx decodes it, if it is at most `limit` bytes:
    the one bounded read the transport and OAuth share.

    Args:
        response: A response opened with `stream`, its body not read yet.
        limit: The most bytes to hold.

    Returns:
        The body.

    Raises:
        BodyTooLarge: It is longer; reading stops at the chunk that passed the bound.
    """
    chunks, size = [], 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(size)
        chunks.append(chunk)
    return b"".join(chunks)


class HTTPTransport:
    """Posts JSON-RPC messages to one MCP endpoint with an `httpx.AsyncClient` the caller owns
    ([`basic/transports/streamable-http.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)).

    Args:
        url: The endpoint's URL, such as `http://127.0.0.1:8000/mcp`.
        http: The client that sends every request; its headers, auth and timeouts apply, and it
            stays open when the transport closes.
        max_message_bytes: The most bytes read for one message: a JSON body, or one SSE event's
            lines up to the blank line that ends it (a stream of many events has no bound).
            16 MiB by default, as a stdio line; past it the exchange fails and the connection is
            closed.
    """

    #: Streamable HTTP mirrors parts of the body in headers, so the client must know each tool's
    #: `x-mcp-header` parameters before calling it.
    uses_headers = True

    #: HTTP keeps no process-scoped state: the era and the legacy session outlive any one request.
    generation = 0

    def __init__(
        self, url: str, http: httpx.AsyncClient, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    ) -> None:
        self.url = url
        self.endpoint = url
        self.http = http
        self.max_message_bytes = max_message_bytes
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
            TransportError: The connection failed, the answer is neither JSON-RPC nor SSE, or one
                message of it is over `max_message_bytes` (the connection is closed, which the
                server takes as cancellation).
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
                    try:
                        async for event in events(response.aiter_bytes(), self.max_message_bytes):
                            if event.event in ("", "message") and event.data:
                                yield _decode(event.data, response.status_code)
                    except EventTooLarge as exc:
                        raise self._too_large("an SSE event", exc.size, response) from None
                    return
                body = await self._read(response)
                if media_type == "application/json" and body:
                    payload = _decode(body, response.status_code)
                    if response.is_success:
                        yield payload
                        return
                    if "error" in payload:
                        # A JSON-RPC error with a 4xx/5xx status: raised here, where the status is known.
                        raise error_from(payload["error"], response.status_code)
                raise _unexpected(response, body, "a JSON-RPC response")
        except httpx.TransportError as exc:
            raise TransportError(f"HTTP exchange with {self.url} failed: {exc!r}") from exc

    async def notify(self, message: dict[str, Any]) -> None:
        """POST a notification; the server accepts it with 202 and no body.

        Args:
            message: The JSON-RPC notification.

        Raises:
            TransportError: The connection failed, the server did not accept it, or its answer's
                body is over `max_message_bytes`.
        """
        message = telemetry.inject(message)
        content, headers = encode(message), self.headers_for(message)
        try:
            async with self.http.stream("POST", self.url, content=content, headers=headers) as response:
                body = await self._read(response)
        except httpx.TransportError as exc:
            raise TransportError(f"HTTP POST to {self.url} failed: {exc!r}") from exc
        if not response.is_success:
            raise _unexpected(response, body, "202 Accepted")

    async def _read(self, response: httpx.Response) -> bytes:
        """The whole body, if it is no larger than `max_message_bytes`.

        Raises:
            TransportError: It is larger; reading stops at the chunk that passed the bound.
        """
        try:
            return await read_at_most(response, self.max_message_bytes)
        except BodyTooLarge as exc:
            raise self._too_large("a body", exc.size, response) from None

    def _too_large(self, what: str, size: int, response: httpx.Response) -> TransportError:
        """The error for a message over the bound; raised inside the response's block, so that
        the connection is closed with the rest unread."""
        return TransportError(
            f"{self.url} answered {what} over the client's bound of {self.max_message_bytes} bytes for one"
            f" message (max_message_bytes=), {size} bytes read; the connection was closed",
            status_code=response.status_code,
        )

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
