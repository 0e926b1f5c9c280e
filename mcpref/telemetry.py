"""OpenTelemetry for MCP: trace context in `_meta`, and a span and a duration per message.

2026-07-28 reserves three `_meta` keys for W3C trace context, `traceparent`, `tracestate` and
`baggage` ([`basic/index.mdx` §_meta](https://modelcontextprotocol.io/specification/2026-07-28/basic#meta),
from [SEP-414][sep]), and OpenTelemetry's [semantic conventions for MCP][semconv] say what to
record: span names (`{mcp.method.name} {target}`), attributes (`mcp.method.name`,
`jsonrpc.request.id`, `gen_ai.tool.name`, `error.type`...), and the histograms
`mcp.client.operation.duration` and `mcp.server.operation.duration`.

Everything here is on the OpenTelemetry *API* (the `otel` extra, `pip install "./mcpref[otel]"` from a clone),
which records nothing until the application installs an SDK; mcpref has no tracer of its own.
mcpref imports it only once the application has (`active`): until then, and always without the
extra, nothing is imported, every hook is a no-op, and the wire is unchanged.

The hooks, each one line where a message is sent or dispatched:

- the client: `requesting(transport)` is the transport's `exchange`, tracing each
  request (a CLIENT span, its context injected into `params._meta`), `inject(message)` on a
  notification, and
  `receiving(message)` around a notification from the server (a SERVER span, its parent the
  context the server injected);
- the server's transports: `serve(work, request, scope)` runs the coroutine serving one request
  in a SERVER span whose parent is the context extracted from `params._meta` (linked to the
  ambient one, e.g. an HTTP server span), `serving(message, scope)` around a notification,
  `outgoing(message)` on each notification it sends in that request's name, and
  `failed(error)` for an error that travels inside an already started stream;
- the dispatcher: `answered(result)` (once `loaded`), so a `CallToolResult` with `isError: true` is a
  `tool_error`, not a JSON-RPC error;
- the tasks extension: `running_task(ctx)` around a task's work (an INTERNAL span, child of
  the `tools/call` that created the task).

`trace_id(meta)` is what the frame log shows. The trace context is read with OpenTelemetry's
W3C propagators, not the process's configured ones: the spec reserves exactly these three keys,
and a B3 or Jaeger propagator would write others into `_meta`.

[sep]: https://github.com/modelcontextprotocol/modelcontextprotocol/pull/414
[semconv]: https://opentelemetry.io/docs/specs/semconv/gen-ai/mcp/
"""

from __future__ import annotations

import functools
import re
import sys
import time
from collections.abc import AsyncGenerator, Callable, Coroutine, Mapping
from contextvars import ContextVar
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast
from urllib.parse import urlsplit

from .jsonrpc import MCPError

# OpenTelemetry's API, once it is in use (see `active`): None until then, and always without the
# extra. Declared with its types, so mypy checks every call below against the API's own (its
# packages are typed); without the extra mypy reads them as Any and passes the same.
if TYPE_CHECKING:
    from opentelemetry import context as otel_context
    from opentelemetry import metrics, trace
    from opentelemetry.metrics import Histogram
    from opentelemetry.propagators.composite import CompositePropagator
    from opentelemetry.trace import Link, SpanKind, StatusCode, Tracer
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    _PROPAGATOR: CompositePropagator
    _TRACE_ONLY: TraceContextTextMapPropagator
    _tracer: Tracer
    _client_duration: Histogram
    _server_duration: Histogram
else:
    trace = metrics = otel_context = Link = SpanKind = StatusCode = None
    _PROPAGATOR = _TRACE_ONLY = _tracer = _client_duration = _server_duration = None

#: True once OpenTelemetry is imported and mcpref records through it (see `active`); a hook's
#: callers may test it first, where even a call is worth saving.
loaded = False
_modules = sys.modules

#: What an application uses; the rest are the hooks mcpref's client and transports call.
__all__ = ["active", "instrument", "span", "trace_id"]

#: The `_meta` keys 2026-07-28 reserves for trace context (basic/index.mdx §`_meta`).
TRACE_KEYS = ("traceparent", "tracestate", "baggage")

#: A transport's `exchange`: one request in, its messages out.
Exchange = Callable[..., AsyncGenerator[dict[str, Any], None]]
T = TypeVar("T")

#: The instrumentation scope spans and metrics are recorded under.
SCOPE = "mcpref"

#: The bucket boundaries the conventions ask of both duration histograms (seconds).
DURATION_BUCKETS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)

#: `error.type` of a `CallToolResult` with `isError: true` (the conventions' value).
TOOL_ERROR = "tool_error"
#: `error.type` of a request the client stopped waiting for (mcpref's value; see the page).
CANCELLED = "cancelled"

#: Attributes that name a request, not a kind of request: on spans, never on metrics.
_SPAN_ONLY = frozenset({"jsonrpc.request.id", "mcp.resource.uri", "client.address", "client.port"})

#: W3C `traceparent`: version, trace id, parent id, flags; version 00 ends there (Trace Context §3.2).
_TRACEPARENT = re.compile(r"^[ \t]*([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:(-.*)|[ \t]*)$")
#: Longer is refused, as OpenTelemetry's propagator refuses it.
_TRACEPARENT_MAX = 512


def trace_id(meta: Any) -> str | None:
    """The 32-hex trace id of the `traceparent` in a request's `_meta`, or None (absent, malformed).

    With the extra it is what OpenTelemetry's propagator extracts; without it a check of the same
    W3C format, so the frame log still lines up traces where nothing else is installed.

    Args:
        meta: A request's `_meta` (anything else, or one without `traceparent`, has no trace id).

    Returns:
        The trace id, lower-case hex, or None.
    """
    carrier = _carrier(meta)
    if carrier is None:
        return None
    if active():
        span_context = trace.get_current_span(_PROPAGATOR.extract(carrier)).get_span_context()
        return format(span_context.trace_id, "032x") if span_context.is_valid else None
    return _trace_id_of(carrier.get("traceparent", ""))


def _trace_id_of(traceparent: str) -> str | None:
    """The trace id of a W3C `traceparent`, refused as OpenTelemetry's propagator refuses it."""
    match = _TRACEPARENT.match(traceparent) if len(traceparent) <= _TRACEPARENT_MAX else None
    if match is None:
        return None
    version, trace_hex, parent_hex, _, rest = match.groups()
    if trace_hex == "0" * 32 or parent_hex == "0" * 16 or version == "ff" or (version == "00" and rest):
        return None
    return trace_hex


def active() -> bool:
    """Whether mcpref records through OpenTelemetry: once the application has imported its API,
    as every application that installs an SDK (or runs `opentelemetry-instrument`) has.

    mcpref never imports it first: a process that does not use OpenTelemetry pays nothing for
    it, not even the import (180 ms against mcpref's own 400 ms, on a loaded 2-core machine).

    Returns:
        True once spans and metrics are recorded.
    """
    return loaded or ("opentelemetry.trace" in _modules and _load())


def instrument(tracer_provider: Any = None, meter_provider: Any = None) -> None:
    """Record with these providers instead of the global ones (None: the global ones again).

    Most applications never call this: `trace.set_tracer_provider` is enough. It is for a process
    that must keep mcpref's telemetry apart, such as a test suite.

    Args:
        tracer_provider: The OpenTelemetry `TracerProvider` spans go to; None: the global one.
        meter_provider: The `MeterProvider` the duration histograms go to; None: the global one.

    Raises:
        RuntimeError: OpenTelemetry's API is not installed (the `otel` extra).
    """
    if not _load():
        raise RuntimeError('mcpref.telemetry needs the otel extra: pip install "./mcpref[otel]" from a clone')
    _use(tracer_provider, meter_provider)


def _load() -> bool:
    """Import OpenTelemetry's API and make the tracer and the histograms; False without the extra."""
    global trace, metrics, otel_context, Link, SpanKind, StatusCode, _PROPAGATOR, _TRACE_ONLY, loaded
    if loaded:
        return True
    try:
        from opentelemetry import context as otel_context
        from opentelemetry import metrics, trace
        from opentelemetry.baggage.propagation import W3CBaggagePropagator
        from opentelemetry.propagators.composite import CompositePropagator
        from opentelemetry.trace import Link, SpanKind, StatusCode
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
    except ImportError:  # the `otel` extra is not installed: every hook does nothing
        return False
    _TRACE_ONLY = TraceContextTextMapPropagator()
    _PROPAGATOR = CompositePropagator([_TRACE_ONLY, W3CBaggagePropagator()])
    _use(None, None)
    loaded = True
    return True


def _use(tracer_provider: Any, meter_provider: Any) -> None:
    global _tracer, _client_duration, _server_duration
    _tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
    meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
    _client_duration = meter.create_histogram(
        "mcp.client.operation.duration",
        unit="s",
        description="MCP request or notification duration as seen by the sender, until the response",
        explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
    )
    _server_duration = meter.create_histogram(
        "mcp.server.operation.duration",
        unit="s",
        description="MCP request or notification duration as seen by the receiver, until the response is sent",
        explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
    )


# -- the server's side -------------------------------------------------------------------------


def serve(work: Coroutine[Any, Any, T], request: Any, scope: Mapping[str, Any] | None) -> Coroutine[Any, Any, T]:
    """`work`, the coroutine that serves `request` (a parsed `jsonrpc.Request`), run inside a
    SERVER span; `scope` is the ASGI scope, None on stdio. Not in use, `work` itself: the hot
    path pays one call and one dictionary lookup, not a frame or a context manager."""
    if not loaded and "opentelemetry.trace" not in _modules:
        return work
    return _served(work, request, scope) if _load() else work


async def _served(work: Coroutine[Any, Any, T], request: Any, scope: Mapping[str, Any] | None) -> T:
    with _Serving(request.method, request.params, request.id, scope):
        return await work


def serving(message: Any, scope: Mapping[str, Any] | None) -> _Nothing | _Serving:
    """A context manager around handling one notification (`message`, a parsed `Notification`)."""
    if not active():
        return _NOTHING
    return _Serving(message.method, message.params, None, scope)


def answered(result: Mapping[str, Any]) -> None:
    """The request being served answered `result`: a tool's own failure is a `tool_error`.
    (The dispatcher calls it only once `loaded`.)"""
    if result.get("isError") is True:
        serving_now = _serving.get()
        if serving_now is not None:
            serving_now.error(TOOL_ERROR)


def failed(error: MCPError) -> None:
    """The request being served failed with `error` after its stream had started."""
    if loaded:
        serving_now = _serving.get()
        if serving_now is not None:
            serving_now.mcp_error(error)


def outgoing(message: dict[str, Any]) -> dict[str, Any]:
    """`message` (a notification the server sends while serving a request or a listen stream),
    with the serving span's context in `params._meta`. Unchanged without a span to name."""
    if not loaded:
        return message
    serving_now = _serving.get()
    if serving_now is None or not serving_now.span.get_span_context().is_valid:
        return message
    return _with_context(message, trace.set_span_in_context(serving_now.span))


def running_task(ctx: Any) -> _Nothing | _Internal:
    """A context manager around a task's work (`ctx`, the `RequestContext` of its `tools/call`)."""
    if not active():
        return _NOTHING
    tool = ctx.params.get("name")
    attributes: dict[str, Any] = {"mcp.method.name": "tools/call"}
    if not isinstance(tool, str):
        return _Internal("task tools/call", attributes)
    attributes.update({"gen_ai.tool.name": tool, "gen_ai.operation.name": "execute_tool"})
    return _Internal(f"task tools/call {tool}", attributes)


def carrier() -> dict[str, str] | None:
    """The current trace context as `_meta` keys (`traceparent`, `tracestate`, not baggage, which
    may carry user data), for a record that outlives its request: a task. None when not in use."""
    if not loaded:
        return None
    found: dict[str, str] = {}
    _TRACE_ONLY.inject(found)
    return found or None


def link(stored: Mapping[str, Any] | None) -> None:
    """Link the request being served to the trace a stored record (a task) was made in: a task
    keeps its trace on whichever instance, and in whichever trace, it is asked about later."""
    if not loaded or not stored:
        return
    serving_now = _serving.get()
    carrier = _carrier(dict(stored))
    if serving_now is None or carrier is None:
        return
    origin = trace.get_current_span(_TRACE_ONLY.extract(carrier)).get_span_context()
    if origin.is_valid and origin.trace_id != serving_now.span.get_span_context().trace_id:
        serving_now.span.add_link(origin, {"mcpref.link": "task origin"})


def span(name: str, attributes: Mapping[str, Any] | None = None) -> _Nothing | _Internal:
    """A context manager around an INTERNAL span of the application's own, current while it runs:
    a host's user action, or one call it routes, so every request made inside joins its trace.

    Args:
        name: The span's name.
        attributes: Its attributes; None for none.

    Returns:
        A context manager; without OpenTelemetry, one that does nothing.
    """
    if not active():
        return _NOTHING
    return _Internal(name, dict(attributes or {}))


# -- the client's side -------------------------------------------------------------------------


def requesting(transport: Any) -> Exchange:
    """`transport.exchange`, traced: a CLIENT span from the moment a request is sent until its
    response (for a listen stream, until it ends), the span's context in `params._meta`."""
    if not loaded and "opentelemetry.trace" not in _modules:
        return cast(Exchange, transport.exchange)
    return functools.partial(_requesting, transport) if _load() else cast(Exchange, transport.exchange)


def inject(message: dict[str, Any]) -> dict[str, Any]:
    """`message`, a notification the client sends, with the current context in `params._meta`."""
    if not active():
        return message
    return _with_context(message, otel_context.get_current())


def receiving(message: Mapping[str, Any]) -> _Nothing | _Serving:
    """A context manager around handling a notification from the server (progress, a log
    message, a listen stream's change): a SERVER span, as the conventions ask of a receiver."""
    if not active():
        return _NOTHING
    params = message.get("params")
    return _Serving(message.get("method"), params if isinstance(params, dict) else {}, None, None, client=True)


# -- what the hooks return ---------------------------------------------------------------------


class _Nothing:
    """What every hook returns without the extra: a context manager that does nothing."""

    __slots__ = ()

    def __enter__(self) -> _Nothing:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def finished(self, result: Mapping[str, Any] | None, error: Mapping[str, Any] | None) -> None:
        return None


_NOTHING = _Nothing()


class _Serving:
    """One SERVER span and one `mcp.server.operation.duration` measurement."""

    def __init__(
        self,
        method: Any,
        params: dict[str, Any],
        request_id: Any,
        scope: Mapping[str, Any] | None,
        client: bool = False,
    ) -> None:
        self.started = time.perf_counter()
        self.client = client
        meta = params.get("_meta")
        carrier = _carrier(meta)
        parent = _PROPAGATOR.extract(carrier) if carrier else None
        ambient = trace.get_current_span().get_span_context()
        name, attributes = _describe(method, params, request_id, meta)
        attributes.update(_peer_attributes(scope, client))
        self.attributes = attributes
        self.span = _tracer.start_span(
            name,
            context=parent,
            kind=SpanKind.SERVER,
            attributes=attributes,
            # The transport's context (an HTTP server span, if HTTP is instrumented) is linked, not
            # the parent: one MCP request may cross several HTTP requests, and one stream carry many.
            links=[Link(ambient)] if parent is not None and ambient.is_valid else None,
        )
        self._context = trace.set_span_in_context(self.span, parent)

    def __enter__(self) -> _Serving:
        self._token = otel_context.attach(self._context)
        self._serving_token = _serving.set(self)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if isinstance(error, MCPError):
            self.mcp_error(error)
        elif isinstance(error, Exception):
            self.error(type(error).__qualname__)
        _serving.reset(self._serving_token)
        otel_context.detach(self._token)
        self.span.end()
        if not self.client:
            _server_duration.record(time.perf_counter() - self.started, _metric_attributes(self.attributes))

    def mcp_error(self, error: MCPError) -> None:
        code = str(error.code)
        self.attributes["rpc.response.status_code"] = code
        self.span.set_attribute("rpc.response.status_code", code)
        self.error(code, error.message)

    def error(self, error_type: str, description: str | None = None) -> None:
        self.error_type = error_type
        self.attributes["error.type"] = error_type
        self.span.set_attribute("error.type", error_type)
        self.span.set_status(StatusCode.ERROR, description)


async def _requesting(transport: Any, message: dict[str, Any], **kwargs: Any) -> AsyncGenerator[dict[str, Any], None]:
    """One CLIENT span and one `mcp.client.operation.duration` measurement around an exchange."""
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    name, attributes = _describe(message["method"], params, message.get("id"), params.get("_meta"))
    attributes.update(_server_attributes(transport))
    started = time.perf_counter()
    span = _tracer.start_span(name, kind=SpanKind.CLIENT, attributes=attributes)
    context = trace.set_span_in_context(span)
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=context)
    if carrier:
        meta = params.get("_meta")
        message["params"] = {**params, "_meta": {**(meta if isinstance(meta, dict) else {}), **carrier}}
    error_type: str | None = None
    description: str | None = None
    stream = transport.exchange(message, **kwargs)
    try:
        while True:
            # The span is current only while the transport works (its HTTP spans nest under it),
            # never across a yield, where the caller's code runs in the caller's context.
            token = otel_context.attach(context)
            try:
                incoming = await stream.__anext__()
            except StopAsyncIteration:
                return
            finally:
                otel_context.detach(token)
            if "method" not in incoming:  # the response
                error_type, description = _response_outcome(incoming, attributes)
            yield incoming
    except GeneratorExit:
        raise
    except Exception as exc:
        error_type, description = _exception_outcome(exc, attributes)
        raise
    except BaseException:
        error_type = CANCELLED
        raise
    finally:
        await stream.aclose()
        if error_type is not None:
            attributes["error.type"] = error_type
            span.set_attributes({key: attributes[key] for key in _OUTCOME if key in attributes})
            span.set_status(StatusCode.ERROR, description)
        span.end()
        _client_duration.record(time.perf_counter() - started, _metric_attributes(attributes))


_OUTCOME = ("error.type", "rpc.response.status_code")


def _response_outcome(response: Mapping[str, Any], attributes: dict[str, Any]) -> tuple[str | None, str | None]:
    """(`error.type`, description) of a response: its JSON-RPC error code, `tool_error`, or none."""
    error = response.get("error")
    if isinstance(error, dict):
        code = str(error.get("code"))
        attributes["rpc.response.status_code"] = code
        message = error.get("message")
        return code, message if isinstance(message, str) else None
    result = response.get("result")
    if isinstance(result, dict) and result.get("isError") is True:
        return TOOL_ERROR, None
    return None, None


def _exception_outcome(exc: Exception, attributes: dict[str, Any]) -> tuple[str, str | None]:
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        attributes["rpc.response.status_code"] = str(code)
        return str(code), getattr(exc, "message", None)
    if getattr(exc, "timed_out", False):
        return "timeout", None
    return type(exc).__qualname__, None


class _Internal:
    """One INTERNAL span, current while it lasts: a task's work (which outlives the request that
    started it), or an application's own step."""

    def __init__(self, name: str, attributes: dict[str, Any]) -> None:
        self.name = name
        self.attributes = attributes

    def __enter__(self) -> _Internal:
        self.span = _tracer.start_span(self.name, kind=SpanKind.INTERNAL, attributes=self.attributes)
        self._token = otel_context.attach(trace.set_span_in_context(self.span))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if error is not None:
            self.outcome(CANCELLED if not isinstance(error, Exception) else type(error).__qualname__)
        otel_context.detach(self._token)
        self.span.end()

    def finished(self, result: Mapping[str, Any] | None, error: Mapping[str, Any] | None) -> None:
        """How the work ended: its result (`tool_error` if `isError`), or its JSON-RPC error."""
        if error is not None:
            message = error.get("message")
            self.outcome(str(error.get("code")), message if isinstance(message, str) else None)
        elif result is not None and result.get("isError") is True:
            self.outcome(TOOL_ERROR)

    def outcome(self, error_type: str, description: str | None = None) -> None:
        self.span.set_attribute("error.type", error_type)
        self.span.set_status(StatusCode.ERROR, description)


# -- attributes --------------------------------------------------------------------------------


def _describe(method: Any, params: Mapping[str, Any], request_id: Any, meta: Any) -> tuple[str, dict[str, Any]]:
    """The span name and the attributes one message gives (the conventions' span tables)."""
    method = method if isinstance(method, str) else "unknown"
    attributes: dict[str, Any] = {"mcp.method.name": method}
    name = method
    if request_id is not None and not isinstance(request_id, bool):
        attributes["jsonrpc.request.id"] = str(request_id)
    target = params.get("name")
    if method == "tools/call" and isinstance(target, str):
        attributes["gen_ai.tool.name"] = target
        attributes["gen_ai.operation.name"] = "execute_tool"
        name = f"{method} {target}"
    elif method == "prompts/get" and isinstance(target, str):
        attributes["gen_ai.prompt.name"] = target
        name = f"{method} {target}"
    uri = params.get("uri")
    if method in _URI_METHODS and isinstance(uri, str):
        attributes["mcp.resource.uri"] = uri
    if isinstance(meta, dict):
        version = meta.get("io.modelcontextprotocol/protocolVersion")
        if isinstance(version, str):
            attributes["mcp.protocol.version"] = version
    return name, attributes


#: Methods whose `uri` parameter is the conventions' `mcp.resource.uri`.
_URI_METHODS = frozenset({"resources/read", "notifications/resources/updated"})


def _peer_attributes(scope: Mapping[str, Any] | None, client: bool) -> dict[str, Any]:
    if client:
        return {}
    if scope is None:
        return {"network.transport": "pipe"}
    attributes: dict[str, Any] = {"network.transport": "tcp", "network.protocol.name": "http"}
    version = scope.get("http_version")
    if isinstance(version, str):
        attributes["network.protocol.version"] = version
    peer = scope.get("client")
    if peer:
        attributes["client.address"], attributes["client.port"] = peer[0], peer[1]
    return attributes


def _server_attributes(transport: Any) -> dict[str, Any]:
    url = getattr(transport, "url", None)
    if not isinstance(url, str):
        return {"network.transport": "pipe"}
    attributes: dict[str, Any] = {"network.transport": "tcp", "network.protocol.name": "http"}
    parts = urlsplit(url)
    if parts.hostname:
        attributes["server.address"] = parts.hostname
        attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
    return attributes


def _metric_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in attributes.items() if key not in _SPAN_ONLY}


def _carrier(meta: Any) -> dict[str, str] | None:
    """The trace keys of `_meta` that are strings: anything else is ignored, never an error."""
    if not isinstance(meta, dict):
        return None
    carrier = {key: value for key in TRACE_KEYS if isinstance(value := meta.get(key), str)}
    return carrier or None


def _with_context(message: dict[str, Any], context: Any) -> dict[str, Any]:
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=context)
    if not carrier:
        return message
    params = message.get("params")
    params = params if isinstance(params, dict) else {}
    meta = params.get("_meta")
    return {**message, "params": {**params, "_meta": {**(meta if isinstance(meta, dict) else {}), **carrier}}}


#: The request being served in this context, for `answered`, `failed` and `outgoing`.
_serving: ContextVar[_Serving | None] = ContextVar("mcpref_serving", default=None)

