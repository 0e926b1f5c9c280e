"""`Client`: an async MCP client over Streamable HTTP (httpx) or stdio, built on the mcpref core.

Every request carries the `_meta` the 2026-07-28 revision requires (protocol version, client
capabilities, client info); on HTTP its headers are built from the body by
`mcpref.headers.request_headers`. On top of one request/response exchange the client adds, in
this order: era and version negotiation (`_era`), the MRTR loop (`_input`), and the result
cache (`_cache`). `listen()` opens a `subscriptions/listen` stream (`_listen`).
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import inspect
import itertools
import logging
import uuid
import weakref
from collections.abc import AsyncGenerator, Awaitable, Callable, Hashable, Mapping, Sequence
from contextlib import aclosing
from typing import Any, cast

import httpx

from .. import __version__, telemetry
from ..headers import annotation_problems, header_params
from ..jsonrpc import same_id
from ..meta import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROGRESS_TOKEN_KEY,
    PROTOCOL_VERSION_KEY,
)
from ..mrtr import MRTR_METHODS
from ..tasks.record import TASKS_EXTENSION
from ._cache import CacheKey, ResultCache, cache_key
from ._era import AUTO, DEFAULT_ERA_CACHE, EraCache, EraInfo, Negotiation, check_version, origin_of
from ._errors import (
    HeaderMismatch,
    InvalidParams,
    ProtocolError,
    SessionExpired,
    TransportError,
    UnsupportedProtocolVersion,
    error_from,
)
from ._http import HTTPTransport, default_ssl_context
from ._input import InputHandler, InputHandlers, input_rounds, result_type
from ._listen import Subscription, listen_filter
from ._results import (
    CompletionResult,
    DiscoverResult,
    PromptInfo,
    PromptResult,
    ReadResourceResult,
    ResourceInfo,
    ResourceTemplateInfo,
    TaskInfo,
    ToolCallResult,
    ToolInfo,
)
from ._tasks import CANCEL, GET, UPDATE, StatusCallback, TaskWaiter, task_params
from ._transport import DEFAULT_MAX_MESSAGE_BYTES, HeaderParams, Transport

CLIENT_INFO = {"name": "mcpref-client", "version": __version__}

#: Requests that get a `progressToken` when a progress callback is set: the ones that do work.
PROGRESS_METHODS = MRTR_METHODS | {"completion/complete"}

Callback = Callable[[dict[str, Any]], Awaitable[None] | None]


logger = logging.getLogger("mcpref.client")


class Client:
    """An MCP client for one server: a Streamable HTTP URL, or a transport such as `StdioTransport`.

    ```python
    async with Client("http://127.0.0.1:8000/mcp") as client:
        tools = await client.list_tools()
        result = await client.call_tool(
            "convert_temperature", {"value": 20, "from": "C", "to": "F"}
        )

    server = ["python", "-m", "mcpref.examples.minimal_server", "--stdio"]
    async with Client(StdioTransport(server)) as client:
        ...
    ```

    The capabilities the client declares are exactly the input handlers plugged in
    (`elicitation`, `sampling`, `roots`), plus `capabilities`.

    Args:
        target: The server: a Streamable HTTP URL, or a `Transport` (`StdioTransport`, ...).
        version: `"auto"` probes with `server/discover`, falls back to `initialize` for a legacy
            server, and remembers the era per HTTP origin or per stdio process; `"legacy"` uses
            the 2025-11-25 handshake; a version string pins it (a pre-2026 one means the legacy
            handshake asking for that version).
            ([`basic/versioning.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning))
        client_info: The `clientInfo` sent to a legacy server's `initialize`.
        elicitation: Answers the server's `elicitation/create` input requests (MRTR).
        sampling: Answers `sampling/createMessage` input requests.
        roots: Answers `roots/list` input requests: a handler, or the roots themselves.
        elicitation_modes: The elicitation modes declared, of `"form"` and `"url"`.
        capabilities: More client capabilities to declare.
        on_progress: Called with each `notifications/progress` of a request that asked for it.
        on_log: Called with each `notifications/message`; also asks the server for log messages
            at `log_level` and above.
        log_level: The lowest log level `on_log` wants.
        headers: Sent on every HTTP request (such as `Authorization`).
        principal: Who private cached results are kept for; by default a digest of the
            `Authorization` header, or else this client alone.
        cache: Where results are cached (`ttlMs`, `cacheScope`); share one between clients.
        era_cache: Where detected eras are remembered, per origin.
        http: The `httpx.AsyncClient` to use; by default one is made, and closed with the client.
        auth: An `httpx.Auth` for every request, such as `mcpref.client.OAuth` (the whole
            authorization flow, started by the server's 401).
        timeout: The HTTP client's timeout, in seconds, when the client makes its own.
        max_message_bytes: The most bytes read for one message from an HTTP server (a JSON
            body, one SSE event); None: `HTTPTransport`'s default, 16 MiB. Past it the request
            fails with `TransportError`. For stdio, `StdioTransport(max_line_bytes=...)`.
        max_rounds: The most input rounds (MRTR retries) one request may take.
        tasks: Declare the tasks extension (`io.modelcontextprotocol/tasks`), so that the server
            may answer a slow `tools/call` with a task; `call_tool` then waits for it.

    Raises:
        ValueError: An unknown `version`, or `max_rounds` below 1.
        TypeError: `http`, `headers`, `auth` or `max_message_bytes` given with a transport rather
            than a URL.
    """

    def __init__(
        self,
        target: str | Transport,
        *,
        version: str = AUTO,
        client_info: Mapping[str, Any] | None = None,
        elicitation: InputHandler | None = None,
        sampling: InputHandler | None = None,
        roots: InputHandler | Sequence[Mapping[str, Any]] | None = None,
        elicitation_modes: Sequence[str] = ("form", "url"),
        capabilities: Mapping[str, Any] | None = None,
        on_progress: Callback | None = None,
        on_log: Callback | None = None,
        log_level: str = "info",
        headers: Mapping[str, str] | None = None,
        principal: str | None = None,
        cache: ResultCache | None = None,
        era_cache: EraCache | None = None,
        http: httpx.AsyncClient | None = None,
        auth: httpx.Auth | None = None,
        timeout: float = 30.0,
        max_message_bytes: int | None = None,
        max_rounds: int = 8,
        tasks: bool = False,
    ) -> None:
        check_version(version)
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self.client_info = dict(client_info or CLIENT_INFO)
        self.inputs = InputHandlers(elicitation, sampling, roots, tuple(elicitation_modes))
        self.capabilities = {**self.inputs.capabilities(), **(capabilities or {})}
        if tasks:
            self.capabilities["extensions"] = {**self.capabilities.get("extensions", {}), TASKS_EXTENSION: {}}
        self.tasks = TaskWaiter(self._call, self.inputs.respond)
        self.inputs.declared = self.capabilities
        self.on_progress = on_progress
        self.on_log = on_log
        self.log_level = log_level
        self.max_rounds = max_rounds
        self.cache = cache if cache is not None else ResultCache()
        self._http: httpx.AsyncClient | None = None
        if isinstance(target, str):
            self._owns_http = http is None
            self._http = http or httpx.AsyncClient(headers=headers, timeout=timeout, verify=default_ssl_context())
            if http is not None and headers:
                self._http.headers.update(headers)
            if auth is not None:
                self._http.auth = auth
            bound = DEFAULT_MAX_MESSAGE_BYTES if max_message_bytes is None else max_message_bytes
            self.transport: Transport = HTTPTransport(target, self._http, max_message_bytes=bound)
            authorization = self._http.headers.get("authorization")
        else:
            if http is not None or headers is not None or auth is not None or max_message_bytes is not None:
                raise TypeError("http, headers, auth and max_message_bytes apply to HTTP URLs, not to a transport")
            self._owns_http = False
            self.transport = target
            authorization = None
        self.transport.on_stray = self._stray
        self.endpoint = self.transport.endpoint
        self.principal = principal or (
            "authorization:" + hashlib.sha256(authorization.encode()).hexdigest()
            if authorization
            else f"client:{uuid.uuid4()}"
        )
        # Eras are remembered per HTTP origin; a stdio server's era lives as long as its process.
        self._negotiation = Negotiation(
            self.transport,
            self._exchange,
            self._discovered,
            version=version,
            client_info=self.client_info,
            era_cache=era_cache if era_cache is not None else DEFAULT_ERA_CACHE,
            origin=origin_of(target) if isinstance(target, str) else None,
        )
        #: Tools left out of `list_tools()` because their `x-mcp-header` annotations break the rules.
        self.dropped_tools: dict[str, list[str]] = {}
        self._tool_headers: dict[str, dict[str, tuple[str, ...]]] = {}
        self._tools_listed = False
        #: The probe's DiscoverResult, handed to a `discover()` call that caused the probe.
        self._probe_result: dict[str, Any] | None = None
        self._ids = itertools.count(1)
        self._subscriptions: weakref.WeakSet[Subscription] = weakref.WeakSet()

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close open subscriptions and the transport (ending a legacy HTTP session, stopping a
        stdio server), and the HTTP client if this client made it."""
        for subscription in list(self._subscriptions):
            await subscription.aclose()
        await self.transport.aclose()
        if self._owns_http and self._http is not None:
            await self._http.aclose()

    # -- what negotiation found (see `_era`) -------------------------------------------------

    @property
    def era(self) -> EraInfo | None:
        """The era and version in use, once known."""
        return self._negotiation.era

    @property
    def server_info(self) -> dict[str, Any] | None:
        """Who the server says it is: `serverInfo` from its `DiscoverResult` or `InitializeResult`."""
        return self._negotiation.server_info

    @property
    def server_capabilities(self) -> dict[str, Any] | None:
        """The capabilities the server announced when the era was negotiated."""
        return self._negotiation.server_capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for the model, if it gave any."""
        return self._negotiation.instructions

    @property
    def version(self) -> str:
        """What `Client(version=...)` asked for: `"auto"`, `"legacy"` or a version."""
        return self._negotiation.version

    @property
    def origin(self) -> str | None:
        """The HTTP origin the era is remembered for; `None` for a stdio server."""
        return self._negotiation.origin

    @property
    def era_cache(self) -> EraCache:
        """Where detected eras are remembered, per origin."""
        return self._negotiation.era_cache

    # -- the methods ---------------------------------------------------------------------

    async def discover(self) -> DiscoverResult:
        """`server/discover`: supported versions, capabilities, instructions.

        Returns:
            The server's `DiscoverResult`; from a legacy server, its `InitializeResult`.

        Raises:
            ProtocolError: The answer's `resultType` is one `server/discover` cannot have.
        """
        self._probe_result = None
        era = await self._ready()
        if era.era == "legacy":
            return cast(DiscoverResult, dict(self._negotiation.initialize_result))
        # If this call made the client probe, the probe's answer is the answer, checked as `_call` checks one.
        probed, self._probe_result = self._probe_result, None
        if probed is None:
            return cast(DiscoverResult, await self._call("server/discover", {}))
        result_type("server/discover", probed, tasks=False)  # no task may stand in for a DiscoverResult
        return cast(DiscoverResult, probed)

    async def list_tools(self) -> list[ToolInfo]:
        """Every tool, all pages (`tools/list`, following `nextCursor`).

        Returns:
            Each tool the server lists. Over HTTP, tools whose `x-mcp-header` annotations break
                the rules are left out, as clients must
                ([`server/tools.mdx` §x-mcp-header](https://modelcontextprotocol.io/specification/2026-07-28/server/tools#x-mcp-header));
                `dropped_tools` says why. So are entries without a name or an `inputSchema` object.
        """
        tools = await self._list_all("tools/list", "tools")
        kept = []
        dropped: dict[str, list[str]] = {}
        headers: dict[str, dict[str, tuple[str, ...]]] = {}
        for tool in tools:
            schema = tool.get("inputSchema") if isinstance(tool, dict) else None
            name = tool.get("name") if isinstance(tool, dict) else None
            if not isinstance(name, str) or not isinstance(schema, dict):
                continue
            problems = annotation_problems(schema) if self.transport.uses_headers else []
            if problems:
                # Rejected, and said so: one bad definition must not hide why a tool is missing.
                logger.warning("dropping tool %r: %s", name, "; ".join(problems))
                dropped[name] = problems
                continue
            headers[name] = header_params(schema)
            kept.append(tool)
        self.dropped_tools, self._tool_headers, self._tools_listed = dropped, headers, True
        return cast(list[ToolInfo], kept)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        on_progress: Callback | None = None,
        on_status: StatusCallback | None = None,
        timeout: float | None = None,
    ) -> ToolCallResult:
        """`tools/call`: run a tool and return its result.

        Args:
            name: The tool's name, as `list_tools` gives it.
            arguments: The tool's arguments, checked by the server against its `inputSchema`.
            on_progress: Called with each progress notification of this call.
            on_status: Called with the task's status as it changes, if the server answers with a
                task (only to a client made with `tasks=True`); the call then waits for it.
            timeout: Seconds the whole call may take, progress or not; when they pass, the call
                is cancelled on the server
                ([`basic/patterns/cancellation.mdx` §Timeouts](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/cancellation#timeouts)).

        Returns:
            The tool's result. A tool's own failure is a result whose `isError` is true, not an
                exception ([`server/tools.mdx` §Error Handling](https://modelcontextprotocol.io/specification/2026-07-28/server/tools#error-handling)).

        Raises:
            InvalidParams: Unknown tool, or arguments the input schema refuses.
            TimeoutError: `timeout` passed.
            MCPClientError: Any other JSON-RPC error, as its subclass for the code.
        """
        if timeout is not None:
            async with asyncio.timeout(timeout):
                return await self.call_tool(name, arguments, on_progress=on_progress, on_status=on_status)
        result = await self.start_tool(name, arguments, on_progress=on_progress)
        if result.get("resultType") == "task":
            return cast(ToolCallResult, await self.tasks.wait(result["taskId"], on_status=on_status, created=result))
        return cast(ToolCallResult, result)

    async def start_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, on_progress: Callback | None = None
    ) -> dict[str, Any]:
        """`tools/call`, returning what the server answered: a `CallToolResult`, or a
        `CreateTaskResult` (`resultType: "task"`) whose `taskId` the caller keeps.

        Args:
            name: The tool's name, as `list_tools` gives it.
            arguments: The tool's arguments.
            on_progress: Called with each progress notification of this call.

        Returns:
            The result as sent, without waiting for a task.

        Raises:
            ValueError: An empty `name`.
            TypeError: `arguments` is not a mapping.
            MCPClientError: A JSON-RPC error, as its subclass for the code.
        """
        if not isinstance(name, str) or not name:
            raise ValueError("tool name must be a non-empty string")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise TypeError(f"arguments must be a mapping, got {type(arguments).__name__}")
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        header_params = await self._headers_for_tool(name)
        try:
            return await self._call("tools/call", params, header_params=header_params, progress=on_progress)
        except HeaderMismatch:
            # The tool's x-mcp-header parameters may have changed since we listed it: list the tools
            # again and, if they did change, retry once (streamable-http.mdx §Client Behavior).
            if header_params is None and not self._tools_listed:
                raise
            self._forget("tools/list")
            self._tool_headers.pop(name, None)
            fresh = await self._headers_for_tool(name)
            if fresh == header_params:
                raise
            return await self._call("tools/call", params, header_params=fresh, progress=on_progress)

    async def list_resources(self) -> list[ResourceInfo]:
        """`resources/list`: every resource, all pages.

        Returns:
            The resources, as the server lists them to this client.
        """
        return cast(list[ResourceInfo], await self._list_all("resources/list", "resources"))

    async def list_resource_templates(self) -> list[ResourceTemplateInfo]:
        """`resources/templates/list`: every resource template, all pages.

        Returns:
            The templates, each with its `uriTemplate`.
        """
        return cast(list[ResourceTemplateInfo], await self._list_all("resources/templates/list", "resourceTemplates"))

    async def read_resource(self, uri: str, *, on_progress: Callback | None = None) -> ReadResourceResult:
        """`resources/read`: a resource's contents.

        Args:
            uri: The resource's URI, from `list_resources` or a template.
            on_progress: Called with each progress notification of this read.

        Returns:
            The contents, each text or a base64 `blob`.

        Raises:
            InvalidParams: No such resource (the URI is in `data.uri`;
                [`server/resources.mdx` §Error Handling](https://modelcontextprotocol.io/specification/2026-07-28/server/resources#error-handling)).
            ValueError: An empty `uri`.
        """
        if not isinstance(uri, str) or not uri:
            raise ValueError("uri must be a non-empty string")
        return cast(ReadResourceResult, await self._call("resources/read", {"uri": uri}, progress=on_progress))

    async def list_prompts(self) -> list[PromptInfo]:
        """`prompts/list`: every prompt, all pages.

        Returns:
            The prompts, each with its arguments.
        """
        return cast(list[PromptInfo], await self._list_all("prompts/list", "prompts"))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None, *, on_progress: Callback | None = None
    ) -> PromptResult:
        """`prompts/get`: the prompt's messages for these arguments.

        Args:
            name: The prompt's name, as `list_prompts` gives it.
            arguments: The prompt's arguments, all strings.
            on_progress: Called with each progress notification of this call.

        Returns:
            The messages, each a role and a content block.

        Raises:
            InvalidParams: Unknown prompt, or a required argument missing.
            ValueError: An empty `name`.
        """
        if not isinstance(name, str) or not name:
            raise ValueError("prompt name must be a non-empty string")
        params: dict[str, Any] = {"name": name}
        if arguments is not None:
            params["arguments"] = dict(arguments)
        return cast(PromptResult, await self._call("prompts/get", params, progress=on_progress))

    async def complete(
        self, ref: Mapping[str, Any], argument: Mapping[str, str], *, context: Mapping[str, str] | None = None
    ) -> CompletionResult:
        """`completion/complete`: suggestions for an argument being typed.

        Args:
            ref: What is being completed: `{"type": "ref/prompt", "name": ...}` or
                `{"type": "ref/resource", "uri": ...}`.
            argument: The partial argument, `{"name": ..., "value": ...}`.
            context: Arguments already chosen, by name.

        Returns:
            `completion` with its `values`, and maybe `total` and `hasMore`.
        """
        params: dict[str, Any] = {"ref": dict(ref), "argument": dict(argument)}
        if context is not None:
            params["context"] = {"arguments": dict(context)}
        return cast(CompletionResult, await self._call("completion/complete", params))

    def listen(
        self,
        notifications: Mapping[str, Any] | None = None,
        *,
        max_reconnects: int = 3,
        backoff: float = 0.05,
        **wanted: Any,
    ) -> Subscription:
        """Open a `subscriptions/listen` stream; iterate it for change notifications.

        Pass the wire filter (`{"toolsListChanged": True}`) or keywords (`tools_list_changed=True`,
        `prompts_list_changed`, `resources_list_changed`, `resource_subscriptions=[uri, ...]`).

        ```python
        async with Client("http://127.0.0.1:8000/mcp") as client:
            async with client.listen(tools_list_changed=True) as subscription:
                print(subscription.honored)  # what the server agreed to send
                # `async for note in subscription:` now yields each
                # mcpref.jsonrpc.Notification
        ```

        Args:
            notifications: The wire filter, as `subscriptions/listen` takes it.
            max_reconnects: How many times in a row a stream that breaks is re-opened.
            backoff: Seconds to wait before the first retry (doubling, jittered).
            **wanted: The filter as keywords, instead of `notifications`.

        Returns:
            The subscription, not open yet: `async with` or iterate it.
        """
        wire_filter = listen_filter(notifications, wanted)
        subscription = Subscription(
            self._open_listen, self._forget, wire_filter, max_reconnects=max_reconnects, backoff=backoff
        )
        self._subscriptions.add(subscription)
        return subscription

    # -- tasks (io.modelcontextprotocol/tasks) ---------------------------------------------

    async def get_task(self, task_id: str) -> TaskInfo:
        """`tasks/get`: the task's status, and its input requests, result or error
        ([SEP-2663](https://modelcontextprotocol.io/seps/2663-tasks-extension)).

        Args:
            task_id: The `taskId` of the `CreateTaskResult`.

        Returns:
            The task as it stands.
        """
        return cast(TaskInfo, await self._call(GET, task_params(task_id)))

    async def update_task(self, task_id: str, input_responses: Mapping[str, Any]) -> None:
        """`tasks/update`: answers to some or all of the task's outstanding input requests.

        Args:
            task_id: The task's id.
            input_responses: Answers by input-request key, as the input handlers give them.
        """
        await self._call(UPDATE, {**task_params(task_id), "inputResponses": dict(input_responses)})

    async def cancel_task(self, task_id: str) -> None:
        """`tasks/cancel`: ask the server to stop the task; it may finish anyway.

        Args:
            task_id: The task's id.
        """
        await self._call(CANCEL, task_params(task_id))

    async def wait_for_task(self, task_id: str, *, on_status: StatusCallback | None = None) -> ToolCallResult:
        """Poll the task to its end and return its result (also after a restart, given the id).

        Input requests on the way are answered by the client's input handlers.

        Args:
            task_id: The task's id.
            on_status: Called with the task's status as it changes.

        Returns:
            The tool's result, once the task completed.

        Raises:
            TaskCancelled: The task was cancelled.
            MCPClientError: The task failed: its error, as the subclass for its code.
        """
        return cast(ToolCallResult, await self.tasks.wait(task_id, on_status=on_status))

    # -- one request, with negotiation, MRTR and caching ---------------------------------

    async def _call(
        self,
        method: str,
        params: dict[str, Any],
        *,
        header_params: HeaderParams | None = None,
        progress: Callback | None = None,
    ) -> dict[str, Any]:
        era = await self._ready()
        key = self._cache_key(method, params, era)
        if key is not None:
            cached = self.cache.get(key, self.principal)
            if cached is not None:
                return cached
        send = functools.partial(self._request, method, header_params=header_params, progress=progress)
        declares_tasks = TASKS_EXTENSION in self.capabilities.get("extensions", {})
        result, rounds = await input_rounds(
            method, params, send, self.inputs, max_rounds=self.max_rounds, tasks=declares_tasks
        )
        # Results of MRTR retries depend on inputs the key does not hold (caching.mdx §Cache Key).
        if key is not None and rounds == 0:
            self.cache.put(key, self.principal, result)
        return result

    async def _request(
        self, method: str, params: dict[str, Any], header_params: HeaderParams | None, progress: Callback | None
    ) -> dict[str, Any]:
        """One request in the negotiated era. In `auto` mode a -32022 that lists a version we
        speak switches to it and resends once (even if it is the version just refused: the spec
        asks for a retry with a mutual version); a legacy session the server ended is started
        again, once."""
        era = await self._ready()
        if era.era == "legacy":
            try:
                return await self._exchange(method, params, None, header_params, progress)
            except SessionExpired:
                # 2025-11-25 transports: after a 404 for its session, the client MUST initialize anew.
                await self._negotiation.initialize_again(era.version)
                return await self._exchange(method, params, None, header_params, progress)
        try:
            return await self._exchange(method, params, era.version, header_params, progress)
        except UnsupportedProtocolVersion as error:
            better = self._negotiation.retry_version(error)
            if better is None:
                raise
            return await self._exchange(method, params, better, header_params, progress)

    async def _exchange(
        self,
        method: str,
        params: dict[str, Any],
        version: str | None,
        header_params: HeaderParams | None = None,
        progress: Callback | None = None,
    ) -> dict[str, Any]:
        """Send one JSON-RPC request and return its result, delivering notifications on the way.

        `version` is the modern version to put in `_meta`; `None` sends a legacy-shaped body.
        """
        request_id = next(self._ids)
        on_progress = progress or self.on_progress
        token = f"progress-{request_id}" if on_progress is not None and method in PROGRESS_METHODS else None
        body = self._with_meta(params, version, token) if version is not None else _legacy_params(params, token)
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body}
        exchange = telemetry.requesting(self.transport)
        async with aclosing(exchange(message, header_params=header_params)) as stream:
            async for incoming in stream:
                if "method" in incoming:
                    if "id" in incoming:
                        raise ProtocolError(f"the server sent a request ({incoming['method']}) on a response stream")
                    await self._notification(incoming, token, on_progress)
                    continue
                answers_us = same_id(incoming.get("id"), request_id)
                if not answers_us and not ("error" in incoming and incoming.get("id") is None):
                    raise ProtocolError(f"got a response to id {incoming.get('id')!r}, expected {request_id!r}")
                if "error" in incoming:
                    raise error_from(incoming["error"])
                result = incoming.get("result")
                if not isinstance(result, dict):
                    raise ProtocolError(f"the {method} response has no result object")
                return result
        raise TransportError(f"the stream ended before the response to {method} arrived")

    def _with_meta(self, params: dict[str, Any], version: str, token: str | None) -> dict[str, Any]:
        meta: dict[str, Any] = {
            PROTOCOL_VERSION_KEY: version,
            CLIENT_CAPABILITIES_KEY: self.capabilities,
            CLIENT_INFO_KEY: self.client_info,
        }
        if self.on_log is not None:
            meta[LOG_LEVEL_KEY] = self.log_level
        if token is not None:
            meta[PROGRESS_TOKEN_KEY] = token
        return {**params, "_meta": meta}

    async def _stray(self, message: dict[str, Any]) -> None:
        """A notification no open request claims: on stdio, log messages name no request."""
        await self._notification(message, None, None)

    async def _notification(self, message: dict[str, Any], token: str | None, on_progress: Callback | None) -> None:
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        with telemetry.receiving(message):
            if message["method"] == "notifications/progress":
                if on_progress is not None and token is not None and params.get("progressToken") == token:
                    await _invoke(on_progress, params)
            elif message["method"] == "notifications/message" and self.on_log is not None:
                await _invoke(self.on_log, params)

    # -- lists and caching ---------------------------------------------------------------

    async def _list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        """Every item of a paginated list, following `nextCursor` (an empty string is a cursor too).

        If a cursor from a cached page turns out invalid, the cached pages are dropped and the
        list is read again from the start (caching.mdx §Interaction with Pagination).
        """
        for attempt in range(2):
            items: list[dict[str, Any]] = []
            cursor: str | None = None
            seen: set[str] = set()
            try:
                while True:
                    page = await self._call(method, {} if cursor is None else {"cursor": cursor})
                    found = page.get(key)
                    if not isinstance(found, list):
                        raise ProtocolError(f"{method} result has no {key!r} list")
                    items.extend(found)
                    cursor = page.get("nextCursor")
                    if cursor is None:
                        return items
                    if not isinstance(cursor, str) or cursor in seen:
                        raise ProtocolError(f"{method} returned a bad or repeated nextCursor {cursor!r}")
                    seen.add(cursor)
            except InvalidParams:
                if cursor is None or attempt == 1:
                    raise
                self.cache.invalidate(endpoint=self.endpoint, method=method)
        raise AssertionError("unreachable")

    def _cache_key(self, method: str, params: dict[str, Any], era: EraInfo) -> CacheKey | None:
        """Legacy results carry no cache hints: only a modern era's results are kept."""
        return cache_key(self.endpoint, method, era.version, params) if era.era == "modern" else None

    async def _headers_for_tool(self, name: str) -> dict[str, tuple[str, ...]] | None:
        """The `x-mcp-header` parameters of a tool, learning them from `tools/list` if need be."""
        if not self.transport.uses_headers or (await self._ready()).era != "modern":
            return None
        if name not in self._tool_headers and not self._tools_listed:
            await self.list_tools()
        if name in self.dropped_tools:
            problems = "; ".join(self.dropped_tools[name])
            raise ProtocolError(f"tool {name!r} was dropped: its x-mcp-header annotations break the rules ({problems})")
        return self._tool_headers.get(name)

    def _forget(self, method: str, /, **params: Hashable) -> None:
        """Drop cached results of `method` (those with these params), and what `tools/list` taught."""
        self.cache.invalidate(endpoint=self.endpoint, method=method, **params)
        if method == "tools/list":
            self._tools_listed = False

    # -- what the Negotiation and a Subscription are handed (`_era`, `_listen`) -------------

    async def _ready(self) -> EraInfo:
        """The era and version to speak, negotiated on first use (see `_era.Negotiation`)."""
        return await self._negotiation.ready()

    def _discovered(self, result: dict[str, Any], era: EraInfo) -> None:
        """The probe's DiscoverResult: the answer for a `discover()` that caused the probe, and
        cached like any `server/discover` result."""
        self._probe_result = result
        key = self._cache_key("server/discover", {}, era)
        if key is not None and result.get("resultType", "complete") == "complete":
            self.cache.put(key, self.principal, result)

    async def _open_listen(self, notifications: dict[str, Any]) -> tuple[int, AsyncGenerator[dict[str, Any], None]]:
        """Send a `subscriptions/listen` request for a `Subscription`: its id, and its stream."""
        era = await self._ready()
        if era.era != "modern":
            raise ProtocolError(f"subscriptions/listen needs a 2026-07-28 server; this one speaks {era.version}")
        request_id = next(self._ids)
        params = self._with_meta({"notifications": notifications}, era.version, None)
        message = {"jsonrpc": "2.0", "id": request_id, "method": "subscriptions/listen", "params": params}
        exchange = telemetry.requesting(self.transport)
        return request_id, exchange(message, long_lived=True)


def _legacy_params(params: dict[str, Any], token: str | None) -> dict[str, Any]:
    """A 2025-11-25 body: no per-request `_meta`, except a progress token if one is wanted."""
    return {**params, "_meta": {PROGRESS_TOKEN_KEY: token}} if token is not None else dict(params)


async def _invoke(callback: Callback, params: dict[str, Any]) -> None:
    returned = callback(params)
    if inspect.isawaitable(returned):
        await returned
