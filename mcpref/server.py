"""The dispatcher: one `Server` holds the registries and answers every method, whatever the transport.

A transport (Streamable HTTP, stdio) owns its wire: it checks what only it can (HTTP method,
Origin, body size...), turns bytes into a `jsonrpc.Request`, and hands it over once:
`Server.accept` reads and checks the request in the order of docs/reference/errors.md (its era,
`_meta`, the mirrored headers the transport passes along, the version, the method) into an
`Incoming`, and `Server.answer` runs it. The transport reads from the `Incoming` how to answer
(one JSON object, a stream, a listen stream) and never reaches into the server for protocol facts.
`Server.handle` does both steps for callers without a transport (tests, embedding).

Everything the protocol says about results lives here: every result carries `resultType` and
`_meta` serverInfo (basic/index.mdx), and cacheable results carry `ttlMs`/`cacheScope`
(server/utilities/caching.mdx).
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from . import telemetry
from .caching import CACHEABLE_METHODS, CacheHints
from .catchall import log_bug
from .completion import complete
from .context import LOCAL_PEER, NotifySink, RequestContext, fair_share_caller
from .extensions import Extension, declared, requirement
from .headers import check_legacy_request_headers, check_request_headers
from .jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    MCPError,
    Request,
)
from .legacy import handle_legacy, is_legacy_request, names_modern_version, read_legacy_meta
from .meta import (
    CLIENT_CAPABILITIES_KEY,
    LATEST_VERSION,
    MODERN_VERSIONS,
    SERVER_INFO_KEY,
    RequestMeta,
    read_progress_token,
    read_request_meta,
    require_capabilities,
    unsupported_version,
)
from .mrtr import MRTR_METHODS, InputRequired, StateSealer, params_digest, read_input_responses, required_capability
from .pagination import paginate
from .prompts import Prompt, PromptRegistry
from .relay import Change, Relay
from .resources import Resource, ResourceRegistry, ResourceTemplate
from .subscriptions import LIST_FLAGS, RESOURCE_UPDATED, ListenStream, SubscriptionHub
from .tools import Tool, ToolError, ToolRegistry

#: Methods that existed in 2025-11-25 and are gone from 2026-07-28 (changelog.mdx).
REMOVED_METHODS = frozenset(
    {
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "tasks/get",
        "tasks/result",
        "tasks/list",
        "tasks/cancel",
    }
)

#: The `resultType` values of the core protocol (basic/patterns/mrtr.mdx); extensions add theirs.
CORE_RESULT_TYPES = frozenset({"complete", "input_required"})

logger = logging.getLogger("mcpref.server")

#: Whatever extension is added comes back as itself, so `server.add_extension(TasksExtension(...))` is typed.
E = TypeVar("E", bound=Extension)

#: The default cache hints: `ttlMs: 0`, `cacheScope: "private"`.
NO_REUSE = CacheHints()

Handler = Callable[[RequestContext], Awaitable[Any]]

#: The one method a transport serves as a stream of its own rather than through a handler.
LISTEN = "subscriptions/listen"


class Service(Protocol):
    """Something that runs beside the requests on the server's event loop (`Server.services`)."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


@dataclass(slots=True)
class Incoming:
    """One request, read and checked once by `Server.accept`, ready for `Server.answer`.

    The transport asks it how to answer: `legacy` (2025-era rules, see `mcpref.legacy`),
    `listens` (a `subscriptions/listen` stream) or `streams` (notifications on the response).
    """

    request: Request
    #: The request's `_meta` as read; None for a legacy request, which has no per-request `_meta`.
    meta: RequestMeta | None
    #: Who is asking, as the transport authenticated it (None when anonymous).
    principal: str | None
    #: The method's handler, found once; None for a listen or a legacy request.
    handler: Handler | None = None
    #: Whether the request asked for notifications on its response: progress, or (modern
    #: requests) log messages. Those need a stream to travel on.
    streams: bool = False
    #: A `subscriptions/listen` request: the transport serves it as a stream of its own.
    listens: bool = False
    #: A 2025-era request, and the revision its transport named (None when it named none).
    legacy: bool = False
    legacy_version: str | None = None
    #: Whose fair share it counts against (`context.fair_share_caller`).
    caller: str = f"peer:{LOCAL_PEER}"


class Server:
    """An MCP server: register tools, resources and prompts, then serve it with a transport.

    ```python
    server = Server("demo", "1.0.0")

    @server.tool(
        input_schema={
            "type": "object",
            "properties": {"message": {"type": "string"}},
        }
    )
    def echo(message: str) -> str:
        return message
    ```

    Args:
        name: Who the server is: `serverInfo.name`, in every result's `_meta`.
        version: `serverInfo.version`.
        title: `serverInfo.title`, a name for people; left out when None.
        instructions: Text for the client's model on how to use the server, sent in
            `server/discover`; left out when None.
        cache: The `ttlMs`/`cacheScope` of every cacheable result (lists, reads, `server/discover`);
            by default none may be reused
            ([`server/utilities/caching.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching)).
        cache_for: The same, per method (`"tools/list"`), over `cache`.
        page_size: Split lists into pages of this many items, with a `nextCursor`; None sends each
            list in one page ([`server/utilities/pagination.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/pagination)).
        supported_versions: The modern revisions served, in `server/discover` and checked on
            every request (-32022 for another).
        state_sealer: Seals and opens the MRTR `requestState`; by default one keyed by
            `MCP_STATE_KEY` (or a random key, good for one process only).
        max_subscriptions: The most `subscriptions/listen` streams open at once, over all callers.
        max_subscriptions_per_caller: The most one caller may hold, so one caller cannot take
            every slot (`context.fair_share_caller` says who a caller is).
        serve_legacy: Also serve 2025-11-25-era clients (`initialize`, no per-request `_meta`).
        emits_logs: Declare the `logging` capability, which `ctx.log` needs; None declares it when
            any handler takes `ctx`.
    """

    def __init__(
        self,
        name: str,
        version: str,
        *,
        title: str | None = None,
        instructions: str | None = None,
        cache: CacheHints = NO_REUSE,
        cache_for: dict[str, CacheHints] | None = None,
        page_size: int | None = None,
        supported_versions: tuple[str, ...] = MODERN_VERSIONS,
        state_sealer: StateSealer | None = None,
        max_subscriptions: int = 1000,
        max_subscriptions_per_caller: int = 32,
        serve_legacy: bool = True,
        emits_logs: bool | None = None,
    ) -> None:
        self.info: dict[str, Any] = {"name": name, "version": version}
        if title is not None:
            self.info["title"] = title
        self.instructions = instructions
        self.cache = cache
        self.cache_for = dict(cache_for or {})
        self.page_size = page_size
        self.supported_versions = supported_versions
        #: Serve 2025-11-25-era clients (`initialize`, no per-request `_meta`); see `mcpref.legacy`.
        self.serve_legacy = serve_legacy
        #: Declare the (deprecated) `logging` capability, which `ctx.log` needs to send anything.
        #: None decides by the handlers: any that takes `ctx` can log, so it is declared.
        self.emits_logs = emits_logs
        self.tools = ToolRegistry()
        self.resources = ResourceRegistry()
        self.prompts = PromptRegistry()
        self.state_sealer = state_sealer or StateSealer()
        self.subscriptions = SubscriptionHub(max_subscriptions, max_per_caller=max_subscriptions_per_caller)
        #: Tells the other instances of a deployment about changes made here (`mcpref.relay`);
        #: None keeps notifications on this instance.
        self.relay: Relay | None = None
        #: What else runs beside the requests, started and stopped with the relay (`mcpref.shares`).
        self.services: list[Service] = []
        # A registry that changes while the server runs tells the clients listening for it.
        self.tools.on_change = lambda: self._registry_changed("tools")
        self.resources.on_change = lambda: self._registry_changed("resources")
        self.prompts.on_change = lambda: self._registry_changed("prompts")
        #: The names in `capabilities()`, which every request checks; None until computed again.
        self._offered: frozenset[str] | None = None
        self._methods: dict[str, tuple[Handler, str | None]] = {
            # method: (handler, the server capability that must be advertised for it)
            "server/discover": (self._discover, None),
            "tools/list": (self._list_tools, "tools"),
            "tools/call": (self._call_tool, "tools"),
            "resources/list": (self._list_resources, "resources"),
            "resources/templates/list": (self._list_templates, "resources"),
            "resources/read": (self._read_resource, "resources"),
            "prompts/list": (self._list_prompts, "prompts"),
            "prompts/get": (self._get_prompt, "prompts"),
            "completion/complete": (self._complete, "completions"),
        }
        #: Extensions by identifier, in the order they were added (see `mcpref.extensions`).
        self.extensions: dict[str, Extension] = {}

    def add_extension(self, extension: E) -> E:
        """Serve an extension: advertise it, and add its methods, result types and headers.

        A clash shows at start-up rather than on the wire
        ([`index.mdx` §Extensions](https://modelcontextprotocol.io/specification/2026-07-28#extensions)).

        Args:
            extension: The extension (an `mcpref.extensions.Extension`), its `id` with a vendor
                prefix (`com.example/name`).

        Returns:
            The same extension, so that `tasks = server.add_extension(TasksExtension())` keeps it.

        Raises:
            ValueError: The identifier has no prefix or is already added, or a method or
                `resultType` is one the core or another extension already has.
        """
        prefix, slash, name = extension.id.rpartition("/")
        if not slash or not prefix or not name:
            raise ValueError(f"extension id {extension.id!r} needs a prefix, like 'com.example/name'")
        if extension.id in self.extensions:
            raise ValueError(f"extension {extension.id!r} is already added")
        for method in extension.methods:
            if method in self._methods or self._extension_of(method) is not None:
                raise ValueError(f"{extension.id}: method {method!r} is already served")
        for result_type in extension.result_types:
            if result_type in CORE_RESULT_TYPES or any(result_type in e.result_types for e in self.extensions.values()):
                raise ValueError(f"{extension.id}: resultType {result_type!r} is already taken")
        self.extensions[extension.id] = extension
        self._offered = None
        extension.added_to(self)
        return extension

    def _extension_of(self, method: str) -> Extension | None:
        for extension in self.extensions.values():
            if method in extension.methods:
                return extension
        return None

    # -- registration --------------------------------------------------------------------

    def tool(
        self,
        name: str | None = None,
        *,
        input_schema: dict[str, Any] | None = None,
        description: str | None = None,
        title: str | None = None,
        output_schema: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        icons: list[dict[str, Any]] | None = None,
        requires: dict[str, Any] | None = None,
        visible: Callable[[str | None], bool] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a function as a tool ([`server/tools.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/server/tools)).

        The function returns a str (one text block), a content block (a dict with a `type`) or a
        list of them, a `ToolResult`, or `InputRequired`; with `output_schema`, the data itself.
        Anything else is the server's bug, answered `-32603`. A parameter named `ctx` receives the
        `RequestContext`; the others are the call's arguments.

        Args:
            name: The tool's name; by default the function's.
            input_schema: The JSON Schema of its arguments; by default `{"type": "object"}`.
                Properties annotated `x-mcp-header` are mirrored in `Mcp-Param-*` headers.
            description: For the client's model; by default the function's docstring.
            title: A name for people.
            output_schema: The JSON Schema of its `structuredContent`: the function then returns
                the data, sent as structured content and as text.
            annotations: Hints about its behaviour (`readOnlyHint`, `destructiveHint`, ...), sent as is.
            icons: Icons for a client's UI.
            requires: Client capabilities a call needs; a call without them is refused -32021.
            visible: `visible(principal)` decides who sees it: the others get it neither in
                `tools/list` (then answered with `cacheScope: "private"`) nor by calling it,
                which fails as for an unknown tool. None: everyone.

        Returns:
            A decorator that registers the function and returns it unchanged.

        Raises:
            ValueError: When the decorator is applied: the name is taken or not a valid tool name
                (1-128 of `A-Z a-z 0-9 _ - .`), a schema is not valid JSON Schema or its root is
                not an object, or an `x-mcp-header` annotation breaks the rules.
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.tools.add(
                Tool(
                    name=name or fn.__name__,
                    fn=fn,
                    input_schema=input_schema or {"type": "object"},
                    description=description if description is not None else _doc(fn),
                    title=title,
                    output_schema=output_schema,
                    annotations=annotations,
                    icons=icons,
                    requires=requires or {},
                    visible=visible,
                )
            )
            return fn

        return register

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        visible: Callable[[str | None], bool] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a function as the resource at `uri` ([`server/resources.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/server/resources)).

        The function returns str (text), bytes (a blob) or a list of contents.

        Args:
            uri: The resource's URI, exactly as `resources/read` names it.
            name: Its name in `resources/list`; by default the function's.
            title: A name for people.
            description: By default the function's docstring.
            mime_type: The `mimeType` of its contents.
            visible: `visible(principal)` decides who sees it, as for `tool`.

        Returns:
            A decorator that registers the function and returns it unchanged.

        Raises:
            ValueError: Another resource has the URI (when the decorator is applied).
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            description_ = description if description is not None else _doc(fn)
            self.resources.add(Resource(uri, name or fn.__name__, fn, title, description_, mime_type, visible))
            return fn

        return register

    def resource_template(
        self,
        uri_template: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        complete: dict[str, Any] | None = None,
        visible: Callable[[str | None], bool] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a function for every URI matching `uri_template`; its parameters are the
        template's variables ([`server/resources.mdx` §Resource Templates](https://modelcontextprotocol.io/specification/2026-07-28/server/resources#resource-templates)).

        Args:
            uri_template: An RFC 6570 URI template, such as `file:///{path}`.
            name: Its name in `resources/templates/list`; by default the function's.
            title: A name for people.
            description: By default the function's docstring.
            mime_type: The `mimeType` of what it reads.
            complete: Maps a variable to a function suggesting values for `completion/complete`.
            visible: `visible(principal)` decides who sees it, as for `tool`: the others neither
                list it, nor read through it, nor complete its variables.

        Returns:
            A decorator that registers the function and returns it unchanged.
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.resources.add_template(
                ResourceTemplate(
                    uri_template,
                    name or fn.__name__,
                    fn,
                    title,
                    description if description is not None else _doc(fn),
                    mime_type,
                    complete or {},
                    visible,
                )
            )
            return fn

        return register

    def prompt(
        self,
        name: str | None = None,
        *,
        title: str | None = None,
        description: str | None = None,
        arguments: dict[str, str] | None = None,
        complete: dict[str, Any] | None = None,
        visible: Callable[[str | None], bool] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a function as a prompt ([`server/prompts.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/server/prompts)).

        The function takes the arguments and returns the messages (a str is one user message).

        Args:
            name: The prompt's name; by default the function's.
            title: A name for people.
            description: By default the function's docstring.
            arguments: Argument names and their descriptions, as `prompts/list` shows them.
            complete: Maps an argument to a function suggesting values for `completion/complete`.
            visible: `visible(principal)` decides who sees it, as for `tool`.

        Returns:
            A decorator that registers the function and returns it unchanged.

        Raises:
            ValueError: Another prompt has the name (when the decorator is applied).
        """

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.prompts.add(
                Prompt(
                    name or fn.__name__,
                    fn,
                    title,
                    description if description is not None else _doc(fn),
                    arguments or {},
                    complete or {},
                    visible,
                )
            )
            return fn

        return register

    # -- what the server offers ----------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """Advertise a feature only when something is registered for it ([`server/discover.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/server/discover)).

        Returns:
            The `capabilities` object of `server/discover`, computed anew on each call.
        """
        capabilities: dict[str, Any] = {}
        # listChanged and subscribe: changes are announced on subscriptions/listen streams.
        if len(self.prompts):
            capabilities["prompts"] = {"listChanged": True}
        if len(self.resources):
            capabilities["resources"] = {"subscribe": True, "listChanged": True}
        if len(self.tools):
            capabilities["tools"] = {"listChanged": True}
        has_completers = any(p.complete for p in self.prompts) or any(t.complete for t in self.resources.templates)
        if has_completers:
            capabilities["completions"] = {}
        if self._may_log():
            capabilities["logging"] = {}
        if self.extensions:
            capabilities["extensions"] = {ext_id: ext.settings() for ext_id, ext in self.extensions.items()}
        return capabilities

    def _may_log(self) -> bool:
        """Servers that emit log messages MUST declare `logging` (server/utilities/logging.mdx)."""
        if self.emits_logs is not None:
            return self.emits_logs
        handlers = [*self.tools, *self.prompts, *self.resources.resources.values(), *self.resources.templates]
        return any(handler._with_ctx for handler in handlers)

    def header_params_for(
        self, method: str, params: dict[str, Any], principal: str | None = None
    ) -> dict[str, tuple[str, ...]]:
        """The `x-mcp-header` parameters the transport must check for this request. A tool the
        principal may not see has none, as an unknown one, so no header error betrays it.

        Args:
            method: The request's method; only `tools/call` has any.
            params: The request's params (its `name` picks the tool).
            principal: Who asks, for the tool's `visible`.

        Returns:
            Each mirrored header's name and the path to its parameter in `arguments`.
        """
        if method == "tools/call":
            tool = self.tools.get(params.get("name"))
            if tool is not None and (tool.visible is None or tool.visible(principal)):
                return tool.header_params
        return {}

    def name_field_for(self, method: str) -> str | None:
        """The parameter an extension method's `Mcp-Name` header mirrors, if it has one.

        Args:
            method: The request's method.

        Returns:
            The parameter's name (`taskId` for `tasks/get`), or None.
        """
        extension = self._extension_of(method)
        return extension.name_fields.get(method) if extension is not None else None

    # -- dispatch ------------------------------------------------------------------------

    def accept(
        self,
        request: Request,
        *,
        headers: Mapping[str, str] | None = None,
        principal: str | None = None,
        legacy_version: str | None = None,
        caller: str | None = None,
    ) -> Incoming:
        """Read and check `request` once, or raise `MCPError`; `answer` runs what it returns.

        The order is docs/reference/errors.md's: the era (a legacy request goes its own way, and
        is refused -32602 if it breaks its schema), `_meta` (-32602 if missing, or -32022 when
        the transport's version names one this server does not serve), the mirrored `headers`
        when the transport has them (-32020, keyed by lower-case name), the protocol version
        (-32022: judged only once header and body agree), then the method (-32601 if unknown,
        removed, or its capability is not offered).

        `legacy_version` is the version the transport says the client speaks outside the body
        (the `MCP-Protocol-Version` header, or what stdio's `initialize` agreed). A 2025-era
        revision makes a request without modern `_meta` a legacy one; for such a request, any
        other version this server does not serve is -32022. With modern `_meta` it is ignored
        here (the mirrored `headers` compare it with the body).

        Args:
            request: The JSON-RPC request, parsed.
            headers: The HTTP request's headers, keyed by lower-case name; None without a
                transport's headers (stdio), which skips the mirrored-header checks.
            principal: Who the transport authenticated, or None.
            legacy_version: The version the transport says the client speaks outside the body,
                if it says one.
            caller: Whose fair share it counts against (`context.fair_share_caller`); by default
                the principal's, as `handle` assumes.

        Returns:
            The checked request, with its handler, for `answer` (or `open_subscription`).

        Raises:
            MCPError: The request fails one of the checks above.
        """
        caller = caller or fair_share_caller(principal, LOCAL_PEER)
        if is_legacy_request(request, legacy_version):
            if self.serve_legacy:
                if headers is not None:
                    check_legacy_request_headers(headers, request.method, request.params)
                streams = read_progress_token(read_legacy_meta(request)) is not None
                return Incoming(
                    request, None, principal, streams=streams, legacy=True, legacy_version=legacy_version, caller=caller
                )
            if request.method == "initialize":
                # Modern-only: say which versions this server speaks (basic/versioning.mdx:
                # modern-only servers SHOULD list them in any error they return to initialize).
                raise unsupported_version(request.params.get("protocolVersion"), self.supported_versions)
        # An `initialize` that carries modern `_meta` is a modern request for a removed
        # method, and gets -32601 like `ping`.
        method, params = request.method, request.params
        if legacy_version and legacy_version not in self.supported_versions and not names_modern_version(params):
            # A body in no era's shape, and a header naming a version this server does not
            # serve: that the version is unsupported is what the client can act on, not that
            # `_meta` is missing (streamable-http.mdx §Protocol Version Header).
            raise unsupported_version(legacy_version, self.supported_versions)
        meta = read_request_meta(params, supported=None)
        if headers is not None:
            # Only an extension's method can mirror another parameter in Mcp-Name (name_field_for).
            name_field = self.name_field_for(method) if self.extensions else None
            params_by_header = self.header_params_for(method, params, principal)
            check_request_headers(headers, method, params, params_by_header, name_field)
        if meta.protocol_version not in self.supported_versions:
            raise unsupported_version(meta.protocol_version, self.supported_versions)
        streams = meta.progress_token is not None or meta.log_level is not None
        if method == LISTEN:
            return Incoming(request, meta, principal, streams=streams, listens=True, caller=caller)
        return Incoming(request, meta, principal, self.handler_for(method), streams, caller=caller)

    def answer(self, incoming: Incoming, notify: NotifySink | None = None) -> Coroutine[Any, Any, dict[str, Any]]:
        """Run an accepted request: await it for the result, or `MCPError`. `notify` sends its
        request-scoped notifications (progress, log messages) on the transport's response stream.

        A plain function returning the coroutine that does the work, so a request costs one
        coroutine, not two stacked (a transport awaits this on every request).

        Args:
            incoming: What `accept` returned.
            notify: Sends a request-scoped notification; None drops them.

        Returns:
            The coroutine to await for the result object; it raises `MCPError` for an error answer.

        Raises:
            ValueError: `incoming` is a listen request, which `open_subscription` serves.
        """
        if incoming.legacy:
            return handle_legacy(self, incoming.request, incoming.legacy_version, notify, principal=incoming.principal)
        if incoming.meta is None or incoming.handler is None:
            raise ValueError("a listen request is opened with open_subscription, not answered")
        return self._run(incoming.request, incoming.meta, incoming.handler, notify, incoming.principal, incoming.caller)

    async def handle(
        self,
        request: Request,
        *,
        meta: RequestMeta | None = None,
        notify: NotifySink | None = None,
        principal: str | None = None,
        caller: str | None = None,
    ) -> dict[str, Any]:
        """Answer one request with its result object, or raise `MCPError`: for callers without a
        transport, which have no mirrored headers and no era to tell (tests, embedding). The
        `principal` given counts as verified: it is the caller for fair shares unless `caller` says.

        Order: `_meta` (-32602 if missing, -32022 if the version is unsupported; skipped when
        `meta` is given, already read), then the method (-32601), then the method's own checks.

        Args:
            request: The JSON-RPC request, parsed.
            meta: The request's `_meta`, if already read; None reads it from `request`.
            notify: Sends a request-scoped notification (progress, log messages); None drops them.
            principal: Who is asking, taken as verified.
            caller: Whose fair share it counts against; by default the principal's.

        Returns:
            The result object, with `resultType` and `_meta.serverInfo`.

        Raises:
            MCPError: The error answer, with its JSON-RPC code.
        """
        if meta is None:
            meta = read_request_meta(request.params, self.supported_versions)
        caller = caller or fair_share_caller(principal, LOCAL_PEER)
        return await self._run(request, meta, self.handler_for(request.method), notify, principal, caller)

    async def _run(
        self,
        request: Request,
        meta: RequestMeta,
        handler: Handler,
        notify: NotifySink | None,
        principal: str | None,
        caller: str,
    ) -> dict[str, Any]:
        """Run a checked request: the MRTR parameters (-32602 for a refused `requestState`),
        the extensions around the handler, the handler, and the result's shape."""
        ctx = RequestContext(request.id, request.method, request.params, meta, notify, principal, caller=caller)
        # Without `logging` declared, ctx.log is silent (server/utilities/logging.mdx §Capabilities).
        ctx.may_log = "logging" in (self._offered or self._offered_names())
        params = request.params
        if "inputResponses" in params or "requestState" in params:  # an MRTR retry, or a mistake
            self._read_round(ctx)
        call = handler
        if self.extensions:
            for extension in reversed(self.extensions.values()):
                call = _around(extension, call)
        try:
            result = await call(ctx)
        except MCPError:
            raise
        except Exception:
            # A bug in a handler: log it here, tell the client no more than that it happened.
            log_bug(logger, "%s handler raised", request.method)
            raise MCPError(INTERNAL_ERROR, f"Internal error while handling {request.method}") from None
        if isinstance(result, InputRequired):
            try:
                asked = self._input_required(ctx, result)
            except MCPError:
                raise
            except Exception:
                # A handler that asked for nothing, or for a method no client serves: its bug, not the client's.
                log_bug(logger, "%s handler returned an unusable InputRequired", request.method)
                raise MCPError(INTERNAL_ERROR, f"Internal error while handling {request.method}") from None
            return self._finish(asked)
        if telemetry.loaded:
            telemetry.answered(result)
        if request.method in CACHEABLE_METHODS:
            private = result.get("cacheScope") == "private"  # a list that depends on who asks
            self.cache_for.get(request.method, self.cache).apply(result)
            if private:
                result["cacheScope"] = "private"
        if self.extensions:
            self._check_result_type(ctx, result.get("resultType", "complete"))
        return self._finish(result)

    def _check_result_type(self, ctx: RequestContext, result_type: Any) -> None:
        """Send an extension's `resultType` only to a client that declared that extension.

        A value no extension registered is left alone: it is the handler's to answer for (the
        client tests use one to check that clients refuse it).
        """
        for extension in self.extensions.values():
            if result_type in extension.result_types and not declared(ctx, extension.id):
                logger.error("%s answered resultType %r to a client without %s", ctx.method, result_type, extension.id)
                raise MCPError(INTERNAL_ERROR, f"Internal error while handling {ctx.method}")

    def _read_round(self, ctx: RequestContext) -> None:
        """Take `inputResponses` and open `requestState` on an MRTR retry (basic/patterns/mrtr.mdx)."""
        params = ctx.params
        if ctx.method not in MRTR_METHODS:
            if ctx.method not in self._methods:
                return  # an extension's method reads its own parameters (tasks/update has inputResponses)
            if "inputResponses" in params or "requestState" in params:
                raise MCPError(
                    INVALID_PARAMS, f"Invalid params: {ctx.method} does not take inputResponses or requestState"
                )
            return
        ctx.input_responses = read_input_responses(params)
        if "requestState" in params:
            ctx.state = self.state_sealer.open(
                params["requestState"],
                method=ctx.method,
                digest=params_digest(ctx.method, params),
                principal=ctx.principal,
                issuer=self.info["name"],
            )

    def _input_required(self, ctx: RequestContext, asked: InputRequired) -> dict[str, Any]:
        """An `input_required` result: only for what the client declared it can do, state sealed."""
        if not asked.requests and asked.state is None:
            raise ValueError("InputRequired needs input requests, a state, or both")
        # Every capability the input requests need, checked at once, so -32021 names all that is missing.
        needed: dict[str, Any] = {}
        for input_request in asked.requests.values():
            for name, sub in required_capability(input_request).items():
                needed[name] = _merged(needed.get(name), sub)
        require_capabilities(needed, ctx.client_capabilities)
        result: dict[str, Any] = {"resultType": "input_required"}
        if asked.requests:
            result["inputRequests"] = asked.requests
        if asked.state is not None:
            digest = params_digest(ctx.method, ctx.params)
            result["requestState"] = self.state_sealer.seal(
                asked.state, method=ctx.method, digest=digest, principal=ctx.principal, issuer=self.info["name"]
            )
        return result

    # -- subscriptions ---------------------------------------------------------------------

    def open_subscription(self, request: Request, caller: str = "", principal: str | None = None) -> ListenStream:
        """Start a `subscriptions/listen` subscription; the transport streams it
        ([`basic/patterns/subscriptions.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/subscriptions)).

        Args:
            request: The listen request.
            caller: Whose fair share of the listen slots it counts against (a principal, or a peer
                address).
            principal: Decides which resource updates it may hear of (`visible=`).

        Returns:
            The open stream: its acknowledgement, then the notifications it asked for.

        Raises:
            MCPError: A filter the server does not offer, an extension's filter without that
                extension declared (-32021), or no listen slot left.
        """
        self._check_listen_keys(request.params)
        return self.subscriptions.open(request.id, request.params, self.capabilities(), caller, principal)

    def _check_listen_keys(self, params: dict[str, Any]) -> None:
        """A filter an extension defines is refused (-32021) to a client that did not declare it."""
        requested = params.get("notifications")
        if not isinstance(requested, dict):
            return  # the hub refuses it, with the reason
        for extension in self.extensions.values():
            if extension.listen_keys & requested.keys() and not declared(_declared_in(params), extension.id):
                raise MCPError(
                    MISSING_REQUIRED_CLIENT_CAPABILITY,
                    f"Missing required client capability: {', '.join(sorted(extension.listen_keys))} "
                    f"needs the {extension.id} extension",
                    {"requiredCapabilities": requirement(extension.id)},
                )

    def notify_list_changed(self, kind: str) -> None:
        """Tell listening clients that the list of `kind` changed, and the other instances through `relay`.

        A registry that changes while the server runs calls this itself.

        Args:
            kind: `"tools"`, `"prompts"` or `"resources"`.

        Raises:
            ValueError: Another `kind`.
        """
        flag = f"{kind}ListChanged"
        if flag not in LIST_FLAGS:
            raise ValueError(f"unknown list {kind!r}")
        self.subscriptions.publish(LIST_FLAGS[flag][1])
        if self.relay is not None:
            self.relay.send(Change(list=kind))

    def notify_resource_updated(self, uri: str) -> None:
        """Tell clients subscribed to `uri` that it changed; they read it again if they care. Only
        listeners who may see `uri` hear of it: to the others it is a URI nothing serves, which a
        filter may name (and is acknowledged) but never hears about.

        Args:
            uri: The resource's URI, as subscribers named it.
        """
        self.subscriptions.publish(RESOURCE_UPDATED, {"uri": uri}, self.resources.audience_of(uri))
        if self.relay is not None:
            self.relay.send(Change(uri=uri))

    def _relayed(self, change: Change) -> None:
        """A change another instance made: told to this instance's listeners, visibility decided
        here as for a local change, and not relayed again."""
        if change.stale:
            self.subscriptions.publish_stale(self.resources.audience_of)
        elif change.uri is not None:
            self.subscriptions.publish(RESOURCE_UPDATED, {"uri": change.uri}, self.resources.audience_of(change.uri))
        elif change.list is not None:
            self.subscriptions.publish(LIST_FLAGS[f"{change.list}ListChanged"][1])

    async def start(self) -> None:
        """Start what runs beside the requests (the relay and the services, if any): a transport calls it once,
        on the event loop that will serve the requests (HTTP: the ASGI lifespan's startup)."""
        if self.relay is not None:
            await self.relay.start(self._relayed)
        for service in self.services:
            await service.start()

    async def stop(self) -> None:
        """Stop what `start` started."""
        for service in self.services:
            await service.stop()
        if self.relay is not None:
            await self.relay.stop()

    def finish_subscription(self, subscription: ListenStream) -> dict[str, Any]:
        """The final result of a listen request, with serverInfo like every other result.

        Args:
            subscription: The stream, ended.

        Returns:
            The listen request's result object.
        """
        return self._finish(subscription.completion())

    def close_subscription(self, subscription: ListenStream) -> None:
        """Forget a listen stream its transport has closed (the client left, or it was ended).

        Args:
            subscription: The stream; its listen slot is free again.
        """
        self.subscriptions.close(subscription)

    def end_subscriptions(self) -> None:
        """End every open listen stream with its final result, as on shutdown."""
        self.subscriptions.end_all()

    def _registry_changed(self, kind: str) -> None:
        self._offered = None
        self.notify_list_changed(kind)

    def _offered_names(self) -> frozenset[str]:
        """The capability names `capabilities()` advertises, computed again after a registry change."""
        if self._offered is None:
            self._offered = frozenset(self.capabilities())
        return self._offered

    def handler_for(self, method: str) -> Handler:
        """The handler for `method`. Extensions add methods with `add_extension`.

        Args:
            method: The request's method.

        Returns:
            A coroutine function taking the `RequestContext`.

        Raises:
            MCPError: -32601 if the method is unknown, removed, or its capability is not offered.
        """
        entry = self._methods.get(method)
        if entry is None:  # not a core method (an extension cannot take one: see add_extension)
            extension = self._extension_of(method)
            if extension is not None:
                return _gated(extension, extension.methods[method])
            if method in REMOVED_METHODS:
                raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method} (removed in {LATEST_VERSION})")
            if method == LISTEN:
                raise MCPError(INTERNAL_ERROR, f"{LISTEN} is served by the transport as a stream")
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method}")
        handler, capability = entry
        if capability is not None and capability not in (self._offered or self._offered_names()):
            raise MCPError(METHOD_NOT_FOUND, f"Method not found: {method} (this server does not offer {capability})")
        return handler

    def _finish(self, result: dict[str, Any]) -> dict[str, Any]:
        """Put `resultType` first and serverInfo in `_meta`, keeping any `_meta` the handler set."""
        meta = {**result.pop("_meta", {}), SERVER_INFO_KEY: self.info}
        return {"resultType": result.pop("resultType", "complete"), **result, "_meta": meta}

    # -- methods -------------------------------------------------------------------------

    async def _discover(self, ctx: RequestContext) -> dict[str, Any]:
        result: dict[str, Any] = {
            "supportedVersions": list(self.supported_versions),
            "capabilities": self.capabilities(),
        }
        if self.instructions is not None:
            result["instructions"] = self.instructions
        return result

    def _page(self, ctx: RequestContext, items: list[dict[str, Any]], key: str) -> dict[str, Any]:
        page, next_cursor = paginate(items, ctx.params.get("cursor"), self.page_size, ctx.method)
        result: dict[str, Any] = {key: list(page)}
        if next_cursor is not None:
            result["nextCursor"] = next_cursor
        return result

    def _page_of(self, ctx: RequestContext, shown: tuple[Iterable[Any], bool], key: str) -> dict[str, Any]:
        """A page of the entries this caller may see. A list that depends on who asks is private
        (server/utilities/caching.mdx): a shared cache must not hand one user's list to another.
        Cursors are offsets into the caller's own list, so each principal pages consistently."""
        entries, per_principal = shown
        result = self._page(ctx, [entry.definition() for entry in entries], key)
        if per_principal:
            result["cacheScope"] = "private"
        return result

    async def _list_tools(self, ctx: RequestContext) -> dict[str, Any]:
        return self._page_of(ctx, self.tools.visible_to(ctx.principal), "tools")

    async def _call_tool(self, ctx: RequestContext) -> dict[str, Any] | InputRequired:
        tool = self.tools.require(ctx.params.get("name"), ctx.principal)
        arguments = ctx.params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise MCPError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        if tool.requires:
            require_capabilities(tool.requires, ctx.client_capabilities)
        try:
            return await tool.call(arguments, ctx)
        except ToolError as exc:
            return {"content": [{"type": "text", "text": str(exc)}], "isError": True}

    async def _list_resources(self, ctx: RequestContext) -> dict[str, Any]:
        return self._page_of(ctx, self.resources.visible_to(ctx.principal), "resources")

    async def _list_templates(self, ctx: RequestContext) -> dict[str, Any]:
        return self._page_of(ctx, self.resources.templates_visible_to(ctx.principal), "resourceTemplates")

    async def _read_resource(self, ctx: RequestContext) -> dict[str, Any] | InputRequired:
        contents = await self.resources.read(ctx.params.get("uri"), ctx)
        return contents if isinstance(contents, InputRequired) else {"contents": contents}

    async def _list_prompts(self, ctx: RequestContext) -> dict[str, Any]:
        return self._page_of(ctx, self.prompts.visible_to(ctx.principal), "prompts")

    async def _get_prompt(self, ctx: RequestContext) -> dict[str, Any] | InputRequired:
        prompt = self.prompts.require(ctx.params.get("name"), ctx.principal)
        return await prompt.get(ctx.params.get("arguments"), ctx)

    async def _complete(self, ctx: RequestContext) -> dict[str, Any]:
        return await complete(ctx.params, self.prompts, self.resources, ctx.principal)


def _declared_in(params: dict[str, Any]) -> dict[str, Any]:
    """The client capabilities a request's `_meta` declares, `{}` if it declares none."""
    meta = params.get("_meta")
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY) if isinstance(meta, dict) else None
    return capabilities if isinstance(capabilities, dict) else {}


def _around(extension: Extension, call_next: Handler) -> Handler:
    async def call(ctx: RequestContext) -> Any:
        return await extension.around(ctx, call_next)

    return call


def _gated(extension: Extension, handler: Handler) -> Handler:
    """An extension's method, served only to requests that declare the extension (-32021 otherwise)."""

    async def call(ctx: RequestContext) -> Any:
        if not declared(ctx, extension.id):
            raise MCPError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: {ctx.method} needs the {extension.id} extension",
                {"requiredCapabilities": requirement(extension.id)},
            )
        return await handler(ctx)

    return call


def _merged(have: dict[str, Any] | None, more: dict[str, Any]) -> dict[str, Any]:
    """Two requirements of one capability as one. A bare `{}` is elicitation's form mode
    (client/elicitation.mdx §Capabilities), so it is spelled out once the other asks for more."""
    if have is None or have == more:
        return more
    return {**(have or {"form": {}}), **(more or {"form": {}})}


def _doc(fn: Callable[..., Any]) -> str | None:
    return inspect.getdoc(fn) or None
