"""Streamable HTTP, the 2026-07-28 way: one endpoint, one POST per message, no session.

An ASGI application (run it with uvicorn, mount it in Starlette) written against ASGI directly:
it is the hot path of every request, and Starlette's request and routing layers would add work
without adding checks. See basic/transports/streamable-http.mdx.

Checks run in this order; the first that fails answers, and later ones never run:

1. `Host` (421, on a loopback bind) and `Origin` (403, when present and not allowed), on every
   method, before the body is even read, so a page on a hostile site learns nothing from a
   loopback server (DNS rebinding).
2. HTTP method: only POST (405 with `Allow: POST`). GET streams and DELETE sessions are gone.
3. `Content-Type` must be `application/json` (415) and `Accept` must cover both
   `application/json` and `text/event-stream` (406): what the body and answer can be at all.
4. Body size (413): read no further than the limit; the refusal closes the connection, so the
   rest of the body is never read. (The body's deadline is the HTTP server's: `mcpref.limits`.)
5. JSON-RPC framing (400, -32700 or -32600): see `jsonrpc.parse_message`.
6. A notification is accepted with 202 and no body.
7. The rest is the protocol's, checked once by `Server.accept` with the request's headers: the
   era, `_meta` (400, -32602 when missing: the body is the source of truth, so it is read before
   the headers that mirror it), the mirrored headers (400, -32020), the protocol version (400,
   -32022: judged only once header and body agree), the method (404, -32601); then the
   method's own checks (-32602 and friends) as it runs.

The transport maps the dispatcher's errors to HTTP statuses (`status_for`) and decides the
framing: one JSON object, or SSE when the request asked for notifications (`Incoming.streams`).

`Mcp-Session-Id` and `Last-Event-ID` are ignored, and no session id is ever sent.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator, MutableMapping
from typing import Any, TypeVar

from .. import jsonrpc, telemetry
from ..catchall import NOSNIFF, internal_error, plain_response
from ..context import fair_share_caller
from ..headers import ACCEPT
from ..jsonrpc import MCPError, Notification, Request, encode, error_response, result_response
from ..origins import HostPolicy, OriginPolicy
from ..server import Incoming, Server
from . import sse

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

logger = logging.getLogger("mcpref.http")
T = TypeVar("T")

#: The largest body read (413 past it). MCP requests are small; the largest real ones carry a
#: file or an image in tool arguments, and 1 MiB leaves room for that.
DEFAULT_MAX_BODY_BYTES = 1024 * 1024
#: Bodies at least this large are parsed in a worker thread: orjson reads 64 KiB in well under a
#: millisecond, but a megabyte of nested brackets takes long enough to stall every other request.
#: orjson holds the GIL throughout, so such a body is read by a parser that gives it up
#: (`_codec.YIELDING_CONTAINERS`): a thread alone would not let the loop run.
PARSE_IN_THREAD_BYTES = 64 * 1024
#: Refusals after which the rest of the body is not worth reading: the connection is closed.
CLOSE = [(b"connection", b"close")]

#: HTTP status for each JSON-RPC error code, where the spec names one (streamable-http.mdx,
#: basic/index.mdx). An error may override it with its own `http_status`.
STATUS_FOR_CODE = {
    jsonrpc.PARSE_ERROR: 400,
    jsonrpc.INVALID_REQUEST: 400,
    jsonrpc.METHOD_NOT_FOUND: 404,
    jsonrpc.HEADER_MISMATCH: 400,
    jsonrpc.MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    jsonrpc.UNSUPPORTED_PROTOCOL_VERSION: 400,
    jsonrpc.INTERNAL_ERROR: 500,
}


def status_for(error: MCPError) -> int:
    """Errors found by the method itself (unknown tool, bad cursor, missing resource) keep 200:
    the request was well-formed and the JSON-RPC body carries the answer."""
    if error.http_status is not None:
        return error.http_status
    return STATUS_FOR_CODE.get(error.code, 200)


class StreamableHTTP:
    """The MCP endpoint as an ASGI app
    ([`basic/transports/streamable-http.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/transports/streamable-http)).

    Serve it with any ASGI server (`uvicorn.run(StreamableHTTP(server), port=8000)`); its
    lifespan starts and stops the server's relay and services.

    Args:
        server: The `Server` whose requests it answers.
        path: Answer only this path (others get 404); None answers any path, for mounting.
        origins: Which browser origins may call it (403 for another); by default from
            `MCP_ALLOWED_ORIGINS`, loopback pages allowed.
        hosts: Which `Host` names it answers when bound to loopback (421 for another), against
            DNS rebinding; by default from `MCP_ALLOWED_HOSTS`.
        max_body_bytes: The largest request body read, 1 MiB by default; a larger one gets 413.
        stream_responses: Answer every request as an SSE stream rather than one JSON object.
            Requests that ask for progress or log messages are always streamed, since those
            notifications need a stream to travel on.
        keepalive_seconds: How long a `subscriptions/listen` stream stays silent before it sends
            an SSE comment, so that proxies do not close it as idle.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str | None = "/mcp",
        origins: OriginPolicy | None = None,
        hosts: HostPolicy | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        stream_responses: bool = False,
        keepalive_seconds: float = 15.0,
    ) -> None:
        self.server = server
        self.path = path
        self.origins = origins or OriginPolicy.from_env()
        self.hosts = hosts or HostPolicy.from_env()
        self.max_body_bytes = max_body_bytes
        self.stream_responses = stream_responses
        self.keepalive_seconds = keepalive_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send, self.server)
            return
        if scope["type"] != "http":
            return
        if self.path is not None and scope["path"] != self.path:
            await plain_response(send, 404, b"Not Found")
            return
        try:
            await self._handle(scope, receive, send)
        except MCPError as error:
            if CORS_ORIGIN_KEY in scope:  # a page from an allowed origin may read the error too
                send = _with_cors(send, scope[CORS_ORIGIN_KEY])
            await _json(send, status_for(error), error_response(error.request_id, error), error.http_headers)
        except Exception as exc:  # a bug: one uniform 500, one log line (see mcpref.catchall)
            await internal_error(scope, send, exc)

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, headers = scope["method"], _headers(scope)
        if method == "OPTIONS":
            await self._preflight(headers, scope, send)
            return
        # Every method, not POST alone: the spec's Origin check covers all incoming connections.
        if headers.get("host") not in self.hosts.known_good or "origin" in headers:  # else nothing to judge
            origin = self._check_host_and_origin(headers, scope)
            if origin is not None:
                scope[CORS_ORIGIN_KEY] = origin
                send = _with_cors(send, origin)
        if method != "POST":  # a page from an allowed origin reads this 405 too: a 2025 client's fallback cue
            await _method_not_allowed(send, "the MCP endpoint takes POST only", b"POST")
            return
        content_type, accept = headers.get("content-type"), headers.get("accept")
        if content_type != "application/json" or accept != ACCEPT:  # what clients send passes at once
            _check_content_type(content_type)
            _check_accept(accept)
        body = await self._read_body(headers, receive)

        if len(body) < PARSE_IN_THREAD_BYTES:
            message = jsonrpc.parse_message(body)
        else:  # in a thread, and by a parser that lets the loop run meanwhile (see `_codec.decode`)
            message = await asyncio.to_thread(functools.partial(jsonrpc.parse_message, body, yielding=True))
        del body  # a listen stream may last for hours; it keeps only what it still needs
        if isinstance(message, Notification):
            with telemetry.serving(message, scope):
                await send({"type": "http.response.start", "status": 202, "headers": []})
                await send({"type": "http.response.body", "body": b""})
            return
        try:
            await telemetry.serve(self._answer(message, headers, scope, receive, send), message, scope)
        except MCPError as error:
            error.request_id = message.id
            raise

    def _check_host_and_origin(self, headers: dict[str, str], scope: Scope) -> str | None:
        """Refuse a foreign Host on a loopback bind (421) and a foreign Origin (403): DNS
        rebinding's two lines. Returns the (allowed) Origin of a browser request."""
        host = headers.get("host")
        if host not in self.hosts.known_good and not self.hosts.allows(host, scope.get("server")):
            raise MCPError(
                jsonrpc.INVALID_REQUEST,
                "Misdirected Request: this server is bound to loopback and answers only loopback host names",
                http_status=421,
            )
        origin = headers.get("origin")
        if origin is not None and not self.origins.allows(origin):
            raise MCPError(
                jsonrpc.INVALID_REQUEST, f"Forbidden: Origin {_shown(origin)} is not allowed", http_status=403
            )
        return origin

    async def _preflight(self, headers: dict[str, str], scope: Scope, send: Send) -> None:
        """A CORS preflight, answered on purpose: allowed origins learn they may POST with the
        MCP headers, and GET or DELETE with a 2025 client's (answered 405, the header ignored, as
        the spec's backward compatibility asks: the page must be able to read that); others get
        403 and no CORS headers, so the browser stops there."""
        origin = self._check_host_and_origin(headers, scope)
        if origin is None or "access-control-request-method" not in headers:
            await _method_not_allowed(send, "OPTIONS is for CORS preflights", b"POST, OPTIONS")
            return
        requested = headers.get("access-control-request-headers", "")
        allowed = [name.strip() for name in requested.lower().split(",") if _cors_header_allowed(name.strip())]
        cors = [
            (b"access-control-allow-origin", origin.encode("latin-1")),
            (b"access-control-allow-methods", CORS_METHODS),
            # None asked for (or none of ours): no header, rather than an empty one.
            *([(b"access-control-allow-headers", ", ".join(allowed).encode("latin-1"))] if allowed else []),
            (b"access-control-max-age", b"600"),
            (b"vary", b"Origin"),
        ]
        await plain_response(send, 204, b"", extra=cors)

    async def _answer(
        self, request: Request, headers: dict[str, str], scope: Scope, receive: Receive, send: Send
    ) -> None:
        """Hand the request to the dispatcher once (`Server.accept`: `_meta`, mirrored headers,
        version, method) and answer it the way the `Incoming` says: a listen stream, an SSE
        stream, or one JSON object."""
        principal = _principal(scope, headers)
        caller = fair_share_caller(scope.get(PRINCIPAL_SCOPE_KEY), _peer(scope))
        incoming = self.server.accept(
            request,
            headers=headers,
            principal=principal,
            legacy_version=headers.get("mcp-protocol-version"),
            caller=caller,
        )
        if incoming.legacy:
            await self._answer_legacy(incoming, receive, send)
            return
        if incoming.listens:
            # Checked and done with: a listen stream may stay idle for hours, holding only what it needs.
            headers.clear()
            del incoming
            await self._listen(request, caller, principal, receive, send)
            return
        if self.stream_responses or incoming.streams:
            await self._stream(request, lambda notify: self.server.answer(incoming, notify), receive, send)
            return
        try:
            result = await _unless_client_leaves(self.server.answer(incoming), receive)
        except _ClientLeft:
            return
        await _json(send, 200, result_response(request.id, result), nosniff=False)

    async def _answer_legacy(self, incoming: Incoming, receive: Receive, send: Send) -> None:
        """A 2025-11-25-era request, served statelessly (see `mcpref.legacy`).

        Errors keep HTTP 200 unless the transport itself refused the message: a legacy client
        reads 404 as "your session is gone" and would start over for nothing.
        """
        request = incoming.request
        try:
            if incoming.streams or self.stream_responses:
                await self._stream(request, lambda notify: self.server.answer(incoming, notify), receive, send)
                return
            result = await _unless_client_leaves(self.server.answer(incoming), receive)
        except _ClientLeft:
            return
        except MCPError as error:
            error.http_status = error.http_status or 200
            raise
        await _json(send, 200, result_response(request.id, result))

    async def _stream(
        self,
        request: Request,
        run: Callable[[Callable[[dict[str, Any]], Awaitable[None]]], Coroutine[Any, Any, dict[str, Any]]],
        receive: Receive,
        send: Send,
    ) -> None:
        """Answer on an SSE stream: request-scoped notifications first, the response last.

        The status line goes out with the first notification, not before: an error found before
        then (a method that does not exist, a client capability the handler finds missing, -32021)
        is raised and answered with its own status, as basic/index.mdx asks (400 for -32021), not
        inside a 200 stream. After it, an error can only travel in the stream.

        If the client closes the stream, that is cancellation (streamable-http.mdx
        §Cancellation): the handler is cancelled and nothing more is sent.
        """
        started = False

        async def start() -> None:
            nonlocal started
            if not started:
                started = True
                await send({"type": "http.response.start", "status": 200, "headers": sse.HEADERS})

        async def notify(message: dict[str, Any]) -> None:
            await start()
            event = sse.event(telemetry.outgoing(message))
            await send({"type": "http.response.body", "body": event, "more_body": True})

        try:
            final = result_response(request.id, await _unless_client_leaves(run(notify), receive))
        except MCPError as error:
            if not started:
                raise
            telemetry.failed(error)
            final = error_response(request.id, error)
        except _ClientLeft:
            return
        await start()
        await send({"type": "http.response.body", "body": sse.event(final), "more_body": False})

    async def _listen(self, request: Request, caller: str, principal: str | None, receive: Receive, send: Send) -> None:
        """Serve a `subscriptions/listen` stream until the client leaves or the server ends it.

        The acknowledgement goes out at once, so a client knows the subscription is live before
        anything changes; comment lines keep idle connections from being cut by proxies. An idle
        stream is this task waiting on its queue and one watcher task waiting for a disconnect
        (which cancels this one): every idle stream costs memory, so nothing more.
        """
        subscription = self.server.open_subscription(request, caller, principal)
        request.params = {}  # the subscription holds what it honours; the rest need not stay
        watcher = asyncio.ensure_future(_cancel_on_disconnect(receive, asyncio.current_task()))
        try:
            await send({"type": "http.response.start", "status": 200, "headers": sse.HEADERS})
            await send(
                {"type": "http.response.body", "body": sse.event(subscription.acknowledgement()), "more_body": True}
            )
            while True:
                try:
                    async with asyncio.timeout(self.keepalive_seconds):
                        message = await subscription.queue.get()
                except TimeoutError:
                    await send({"type": "http.response.body", "body": sse.KEEP_ALIVE, "more_body": True})
                    continue
                if message is None:
                    final = result_response(request.id, self.server.finish_subscription(subscription))
                    await send({"type": "http.response.body", "body": sse.event(final), "more_body": False})
                    return
                event = sse.event(telemetry.outgoing(message))
                await send({"type": "http.response.body", "body": event, "more_body": True})
        except asyncio.CancelledError:
            if not watcher.done():
                raise  # cancelled from outside: the server is stopping
            # the client left
        finally:
            watcher.cancel()
            self.server.close_subscription(subscription)

    async def _read_body(self, headers: dict[str, str], receive: Receive) -> bytes:
        """The whole body, within `max_body_bytes` (413). How long it may take is the HTTP
        server's to bound (`mcpref.limits`): it knows, at no cost per request, when a body is late."""
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            raise self._too_large()
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise MCPError(jsonrpc.INVALID_REQUEST, "Client disconnected before sending the whole body")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                raise self._too_large()
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    def _too_large(self) -> MCPError:
        return MCPError(
            jsonrpc.INVALID_REQUEST,
            f"Payload Too Large: the limit is {self.max_body_bytes} bytes",
            http_status=413,
            http_headers=CLOSE,
        )


def _headers(scope: Scope) -> dict[str, str]:
    """Request headers by name, in lower case as ASGI servers give them (Starlette relies on that
    too); repeated headers are joined as HTTP says they may be."""
    raw = scope["headers"]
    headers: dict[str, str] = {}
    for raw_name, raw_value in raw:
        headers[raw_name.decode("latin-1")] = raw_value.decode("latin-1")
    if len(headers) < len(raw):  # a name came twice: join its values
        headers = {}
        for raw_name, raw_value in raw:
            name, value = raw_name.decode("latin-1"), raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


#: The scope key holding the allowed Origin of a browser request, so its errors carry CORS headers.
CORS_ORIGIN_KEY = "mcpref.cors_origin"
#: Methods a page from an allowed origin may send: POST, and a 2025 client's GET and DELETE, so
#: that it can read their 405 (streamable-http.mdx §Earlier Streamable HTTP Revisions).
CORS_METHODS = b"GET, POST, DELETE"
#: Request headers a browser client may send cross-origin: what MCP requests carry, and the 2025
#: headers the server ignores (`Mcp-Session-Id`, `Last-Event-ID`), so a 2025 client's request is
#: answered rather than stopped by its preflight.
CORS_HEADERS = frozenset(
    {"content-type", "accept", "authorization", "mcp-protocol-version", "mcp-method", "mcp-name"}
    | {"mcp-session-id", "last-event-id"}
)


def _cors_header_allowed(name: str) -> bool:
    return name in CORS_HEADERS or name.startswith("mcp-param-")


def _with_cors(send: Send, origin: str) -> Send:
    """`send`, adding the headers that let a page from an allowed `origin` read the answer."""
    cors = [(b"access-control-allow-origin", origin.encode("latin-1")), (b"vary", b"Origin")]

    async def send_with_cors(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *cors]}
        await send(message)

    return send_with_cors


def _shown(value: str | None, limit: int = 100) -> str:
    """A client-sent value quoted in an error message, cut short: errors never echo large inputs."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "...'"


def _check_content_type(content_type: str | None) -> None:
    media_type = (content_type or "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise MCPError(
            jsonrpc.INVALID_REQUEST,
            f"Unsupported Media Type: Content-Type must be application/json, got {_shown(content_type)}",
            http_status=415,
        )


def _check_accept(accept: str | None) -> None:
    """The client must accept both answer forms (streamable-http.mdx §Sending Messages).
    Wildcards count, as HTTP defines them. The value clients send (`headers.ACCEPT`) passes at once."""
    if accept == ACCEPT:
        return
    accepted = {part.split(";")[0].strip().lower() for part in (accept or "").split(",")}
    json_ok = accepted & {"application/json", "application/*", "*/*"}
    sse_ok = accepted & {"text/event-stream", "text/*", "*/*"}
    if not (json_ok and sse_ok):
        raise MCPError(
            jsonrpc.INVALID_REQUEST,
            "Not Acceptable: Accept must include both application/json and text/event-stream",
            http_status=406,
        )


async def _cancel_on_disconnect(receive: Receive, task: asyncio.Task[Any] | None) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    if task is not None:
        task.cancel()


class _ClientLeft(Exception):
    """The client closed the connection before its answer was ready; there is no one to answer."""


@types.coroutine
def _unless_client_leaves(work: Coroutine[Any, Any, T], receive: Receive) -> Generator[Any, Any, T]:
    """Await `work` in the current task, cancelling it if the client disconnects first.

    Closing the connection is how an HTTP client cancels a request (streamable-http.mdx
    §Cancellation), whether the answer would have been a stream or one JSON object. Watching
    for that takes a task waiting on `receive`, so it starts only when the work has to wait:
    the work's first step runs right here, and a handler that answers without waiting (most
    do) finishes in it, paying for neither a task nor a callback. A work that waits is driven
    on from here step by step, exactly as `await` would (what it yields goes to the task, what
    the task sends or throws goes back to it), with the watcher running beside it.
    """
    try:
        waiting_on = work.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    watcher = asyncio.ensure_future(_cancel_on_disconnect(receive, asyncio.current_task()))
    try:
        while True:
            try:
                sent = yield waiting_on
            except GeneratorExit:
                work.close()
                raise
            except BaseException as thrown:  # noqa: BLE001 - handed to the work, as `await` does
                waiting_on = work.throw(thrown)
            else:
                waiting_on = work.send(sent)
    except StopIteration as done:
        if _left(watcher):  # the client left as the work finished
            raise _ClientLeft from None
        result = done.value
        return result
    except asyncio.CancelledError:
        if _left(watcher):
            raise _ClientLeft from None
        raise  # cancelled from outside: the server is stopping
    finally:
        watcher.cancel()


def _left(watcher: asyncio.Future[None]) -> bool:
    """Whether the watcher saw the client leave (it ends only then, or when cancelled)."""
    return watcher.done() and not watcher.cancelled()


async def _method_not_allowed(send: Send, why: str, allow: bytes) -> None:
    """405 with the methods the endpoint does take, and a JSON-RPC error saying why."""
    error = MCPError(jsonrpc.INVALID_REQUEST, f"Method Not Allowed: {why}")
    await _json(send, 405, error_response(None, error), extra=[(b"allow", allow)])


async def _json(
    send: Send,
    status: int,
    message: dict[str, Any],
    extra: list[tuple[bytes, bytes]] | None = None,
    *,
    nosniff: bool = True,
) -> None:
    """One JSON answer. `nosniff=False` only for the 200 result of a POST: a browser reaches
    that only through fetch (an HTML form cannot send application/json), and fetch never renders
    what it gets, so the header would protect nothing there and cost every request ~2% of its
    instructions (uvicorn validates each header in Python). Errors, streams and plain answers
    keep it."""
    body = encode(message)
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if nosniff:
        headers.append(NOSNIFF)
    if extra:
        headers += extra
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _peer(scope: Scope) -> str | None:
    """The client's address (behind a reverse proxy, the proxy's): see `fair_share_caller`."""
    client = scope.get("client")
    return str(client[0]) if client else None


#: The ASGI scope key an authentication layer in front of the endpoint sets to the caller it
#: verified (`mcpref.auth.ProtectedResource`: the access token's issuer and subject). It wins over
#: the header digest, so `requestState`, handles and private cache entries stay bound to the
#: user across token refreshes, and no two users share one. Only it (or else the peer) is the
#: caller for fair shares (`context.fair_share_caller`): the digest binds, it does not count.
PRINCIPAL_SCOPE_KEY = "mcpref.principal"


def _principal(scope: Scope, headers: dict[str, str]) -> str | None:
    """Who is asking, for binding `requestState`: the authenticated caller when a layer in front
    verified one (`PRINCIPAL_SCOPE_KEY`), else a digest of the credentials, never the credentials.
    """
    verified = scope.get(PRINCIPAL_SCOPE_KEY)
    if verified is not None:
        return str(verified)
    authorization = headers.get("authorization")
    if authorization is None:
        return None
    return hashlib.sha256(authorization.encode("latin-1")).hexdigest()[:32]


async def _lifespan(receive: Receive, send: Send, server: Server) -> None:
    """Start the server's background work (a relay) at startup; at shutdown end the listen
    streams gracefully first, then stop it."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await server.start()
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            server.end_subscriptions()
            await server.stop()
            await send({"type": "lifespan.shutdown.complete"})
            return
