"""`Host`: many MCP servers behind one catalogue, each server kept apart from the others.

One `mcpref.client.Client` per server, each with its own `httpx.AsyncClient`, its own auth (so
its own tokens), its own era cache and result cache. The host merges their tools under labels it
chose (`<label>.<tool>`), routes each call back to the server that owns the tool under that
server's own name, sends every multi round-trip retry to the server that asked (the client's
MRTR loop does: it only ever talks to its one server), asks the consent gate before a tool runs
and before answers leave, and keeps one server's failure to that server's entries.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import httpx

from mcpref.apps import UI_EXTENSION, client_settings
from mcpref.client import (
    Client,
    MCPClientError,
    ProtocolError,
    Subscription,
    ToolCallResult,
    ToolInfo,
    TransportError,
    default_ssl_context,
)
from mcpref.telemetry import span

from .apps import AppView, checked_view, for_model, link_of
from .consent import CALL, INPUT, ConsentGate, ConsentQuestion
from .frames import FrameLog
from .registry import SEPARATOR, Registry, ServerEntry

logger = logging.getLogger("mcpref.examples.host")

TOOLS_CHANGED = "notifications/tools/list_changed"


class HostError(Exception):
    """Base of what `Host` raises; `server` is the label of the server concerned, if any."""

    def __init__(self, message: str, *, server: str | None = None) -> None:
        super().__init__(message)
        self.server = server


class UnknownTool(HostError):
    """The name is not in the catalogue (a server's own name, a made-up prefix, a typo)."""


class ServerUnavailable(HostError):
    """The server is marked down (unreachable, too slow, or answering garbage); `reason` says which."""

    def __init__(self, server: str, reason: str) -> None:
        super().__init__(f"{server} is unavailable: {reason}", server=server)
        self.reason = reason


class ServerFailed(HostError):
    """The server failed during this call; it is now marked unavailable."""


class AppCallRefused(HostError):
    """A view asked for a tool it may not call: one whose visibility lacks `app`, or one that is
    not its own server's. Nothing was sent to any server."""


class CallRejected(HostError):
    """The server answered the call with a JSON-RPC error (`error` is the client's typed error)."""

    def __init__(self, server: str, tool: str, error: MCPClientError) -> None:
        super().__init__(f"{server}.{tool} was rejected: {error.message} ({error.code})", server=server)
        self.error = error


class ToolFailed(HostError):
    """The tool ran and failed: its result had `isError: true`. `result` is that labelled result."""

    def __init__(self, result: LabelledResult) -> None:
        super().__init__(f"{result.name} failed: {result.text}", server=result.server)
        self.result = result


@dataclass(frozen=True)
class CatalogueEntry:
    """A tool as the model sees it, and where it really lives."""

    name: str  #: `<label>.<tool>`, the name the host shows
    server: str  #: the label of the server that owns it
    tool: str  #: the server's own name for it, the one that goes on the wire
    description: str
    input_schema: Mapping[str, Any]
    annotations: Mapping[str, Any]
    available: bool = True
    view: str | None = None  #: the `ui://` URI of the view that renders its results (MCP Apps)


@dataclass(frozen=True)
class LabelledResult:
    """A tool result and where it came from. Its content is data from that server, nothing more."""

    name: str
    server: str
    tool: str
    result: ToolCallResult

    @property
    def text(self) -> str:
        return "\n".join(
            str(block.get("text", "")) for block in self.result.get("content", []) if isinstance(block, dict)
        )

    def for_model(self) -> str:
        """The result as a model should get it: fenced and attributed, so text in it that names
        another server's tools reads as that server's data, not as an instruction from the host."""
        text = self.text.replace("</result", "<\\/result")  # a result cannot close its own fence
        return f'<result server="{self.server}" tool="{self.tool}">\n{text}\n</result>'


@dataclass(frozen=True)
class InputQuestion:
    """An input request shown to the user, with the server that asked and the tool it is for."""

    server: str
    tool: str
    method: str
    params: dict[str, Any]

    def __str__(self) -> str:
        what = self.params.get("message") or self.method
        return f"[{self.server}] {what}"


#: Answers an input request (the result object: `ElicitResult`, `CreateMessageResult`).
AskUser = Callable[[InputQuestion], "dict[str, Any] | Awaitable[dict[str, Any]]"]


def _annotations(tool: ToolInfo) -> Mapping[str, Any]:
    """The tool's hints; anything but an object (the client does not check them) counts as none."""
    annotations = tool.get("annotations")
    return annotations if isinstance(annotations, dict) else {}


#: The (server, tool) of the call in progress in this task, for the input handlers.
_current_call: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar("current_call")


@dataclass
class Connection:
    """One server as the host holds it: its client, its slice of the catalogue, its health."""

    entry: ServerEntry
    client: Client
    http: httpx.AsyncClient
    tools: list[ToolInfo] = field(default_factory=list)
    capabilities: dict[str, Any] = field(default_factory=dict)
    down: str | None = None  #: why the server is unavailable, or `None`
    listening: bool = False
    listen_task: asyncio.Task[None] | None = None

    @property
    def label(self) -> str:
        return self.entry.label


class Host:
    """Every server in `registry` that `principal` may use, merged into one catalogue.

    ```python
    host = Host(registry, principal="alice", consent=gate, ask_user=answer)
    async with host:
        await host.start()
        result = await host.call("tides.get_forecast", {"port": "oslo"})
    ```

    - `consent`: the `ConsentGate`; the default one has no rules and asks no one, so it refuses
      everything that needs consent.
    - `ask_user`: answers the servers' elicitation requests; without it the host declares no
      elicitation and servers cannot ask.
    - `listen`: open one `subscriptions/listen` stream per server that announces
      `tools.listChanged`, and refresh that server's slice on each `tools/list_changed`.
      A stream that breaks or ends is opened again after `listen_backoff` seconds (doubling, up
      to `listen_backoff_max`), and that server's tools are listed again.
    - `on_change`: called with a server's label after its slice was refreshed by its stream.
    - `frames`: the `FrameLog` the requests are recorded into.
    - `apps`: declare MCP Apps (`io.modelcontextprotocol/ui`) to every server, so tools linked
      to views come with their `_meta.ui`: `open_view` fetches a tool's view, `app_call` is a
      view's `tools/call`, and tools only views may call stay out of the catalogue.
    - `tasks`: declare the tasks extension, so a server may answer a slow call with a task;
      `call` waits for it.

    With OpenTelemetry in use (`mcpref[otel]`, an SDK installed), `action(name)` is one user
    action as one trace: each `call` inside it is a span of it, and each server's spans are
    children of that call's (the context travels in `_meta`), whatever server it reaches.
    """

    def __init__(
        self,
        registry: Registry,
        *,
        principal: str,
        consent: ConsentGate | None = None,
        ask_user: AskUser | None = None,
        listen: bool = True,
        on_change: Callable[[str], Any] | None = None,
        frames: FrameLog | None = None,
        listen_backoff: float = 0.5,
        listen_backoff_max: float = 30.0,
        apps: bool = False,
        tasks: bool = False,
    ) -> None:
        self.principal = principal
        self.apps = apps
        self.tasks = tasks
        self.consent = consent if consent is not None else ConsentGate()
        self.ask_user = ask_user
        self.listen = listen
        self.listen_backoff = listen_backoff
        self.listen_backoff_max = listen_backoff_max
        self.on_change = on_change
        self.frames = frames if frames is not None else FrameLog()
        self.servers: dict[str, Connection] = {}
        for entry in registry.for_principal(principal):
            self.servers[entry.label] = self._connect(entry)

    def _connect(self, entry: ServerEntry) -> Connection:
        http = httpx.AsyncClient(
            timeout=entry.timeout,
            verify=default_ssl_context(),
            auth=entry.auth() if entry.auth is not None else None,
            event_hooks={"request": [self.frames.hook(entry.label)]},
        )
        label = entry.label
        client = Client(
            entry.url,
            http=http,
            principal=self.principal,
            cache=entry.cache,
            era_cache=entry.era_cache,
            elicitation=self._input_handler(label, "elicitation/create") if self.ask_user is not None else None,
            elicitation_modes=("form",),
            client_info={"name": "mcpref-host", "version": "0.1.0"},
            capabilities={"extensions": {UI_EXTENSION: client_settings()}} if self.apps else None,
            tasks=self.tasks,
        )
        return Connection(entry, client, http)

    # -- lifecycle -----------------------------------------------------------------------

    async def __aenter__(self) -> Host:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        for connection in self.servers.values():
            if connection.listen_task is not None:
                connection.listen_task.cancel()
        tasks = [c.listen_task for c in self.servers.values() if c.listen_task is not None]
        await asyncio.gather(*tasks, return_exceptions=True)
        for connection in self.servers.values():
            await connection.client.aclose()
            await connection.http.aclose()

    async def start(self) -> None:
        """Discover every server at once; a server that fails is marked down, the rest go on.
        Then open the listen streams, each acknowledged before this returns."""
        await asyncio.gather(*(self._discover(connection) for connection in self.servers.values()))
        if self.listen:
            await asyncio.gather(*(self._start_listening(connection) for connection in self.servers.values()))

    async def refresh(self, label: str | None = None) -> None:
        """List the tools again (all servers, or one). A down server gets another chance; a
        fresh cached list (`ttlMs`) is served from the server's cache without a request."""
        targets = [self.servers[label]] if label is not None else list(self.servers.values())
        await asyncio.gather(*(self._discover(connection) for connection in targets))

    # -- the catalogue -------------------------------------------------------------------

    @property
    def catalogue(self) -> dict[str, CatalogueEntry]:
        """Every tool the model may see, by `<label>.<tool>`; a down server's tools stay, marked
        unavailable. A tool only views may call (visibility without `model`) is not in it."""
        merged: dict[str, CatalogueEntry] = {}
        for connection in self.servers.values():
            for tool in connection.tools:
                if not for_model(connection.label, tool):
                    continue
                link = link_of(connection.label, tool)
                name = f"{connection.label}{SEPARATOR}{tool['name']}"
                merged[name] = CatalogueEntry(
                    name=name,
                    server=connection.label,
                    tool=tool["name"],
                    description=str(tool.get("description") or ""),
                    input_schema=tool["inputSchema"],
                    annotations=_annotations(tool),
                    available=connection.down is None,
                    view=link.resource_uri if link is not None else None,
                )
        return merged

    def needs_consent(self, entry: CatalogueEntry) -> bool:
        """True unless the tool says read-only, not destructive, and the host trusts its server's hints."""
        if not self.servers[entry.server].entry.trust_annotations:
            return True
        hints = entry.annotations
        return hints.get("readOnlyHint") is not True or hints.get("destructiveHint") is True

    def status(self) -> dict[str, str]:
        """Each server's health in a word or a reason."""
        return {label: c.down or ("ready, listening" if c.listening else "ready") for label, c in self.servers.items()}

    # -- calls ---------------------------------------------------------------------------

    async def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> LabelledResult:
        """Call a catalogue tool by its catalogue name. Raises a `HostError` for anything but success."""
        entry = self.catalogue.get(name)
        if entry is None:
            raise UnknownTool(f"no tool {name!r} in the catalogue")
        with span(f"host call {name}", {"mcpref.host.server": entry.server}):
            return await self._call_entry(entry, arguments)

    def action(self, name: str) -> AbstractContextManager[Any]:
        """`with host.action("plan the day"):` makes every call inside it one trace (a span named
        `name`, current while it lasts). Without OpenTelemetry in use it does nothing."""
        return span(name)

    async def _call_entry(self, entry: CatalogueEntry, arguments: Mapping[str, Any] | None) -> LabelledResult:
        connection = self.servers[entry.server]
        if connection.down is not None:
            raise ServerUnavailable(entry.server, connection.down)
        if self.needs_consent(entry):
            await self.consent.require(ConsentQuestion(entry.server, entry.tool, CALL, dict(arguments or {})))
        token = _current_call.set((entry.server, entry.tool))
        try:
            result = await connection.client.call_tool(entry.tool, arguments or {})
        except (TransportError, ProtocolError) as failure:
            self._mark_down(connection, failure)
            raise ServerFailed(
                f"{entry.server} failed during {entry.tool}: {failure}", server=entry.server
            ) from failure
        except MCPClientError as error:
            raise CallRejected(entry.server, entry.tool, error) from error
        finally:
            _current_call.reset(token)
        labelled = LabelledResult(entry.name, entry.server, entry.tool, result)
        if result.get("isError") is True:
            raise ToolFailed(labelled)
        return labelled

    # -- views (MCP Apps) ---------------------------------------------------------------

    async def open_view(self, name: str) -> AppView:
        """Fetch and check the view of catalogue tool `name` (`resources/read`, apps §Resource
        Discovery). Raises `UnknownTool` if it has none, `HostError` if the server's view breaks
        the extension's rules: such a view is never rendered."""
        entry = self.catalogue.get(name)
        if entry is None or entry.view is None:
            raise UnknownTool(f"no tool {name!r} with a view in the catalogue")
        connection = self.servers[entry.server]
        try:
            result = await connection.client.read_resource(entry.view)
            return checked_view(entry.server, entry.tool, entry.view, result)
        except MCPClientError as error:
            raise CallRejected(entry.server, entry.tool, error) from error
        except ValueError as problem:
            raise HostError(f"{entry.server}'s view {entry.view} was refused: {problem}", server=entry.server) from None

    async def app_call(self, view: AppView, tool: str, arguments: Mapping[str, Any] | None = None) -> LabelledResult:
        """A view's `tools/call`, by the server's own tool name. Refused (`AppCallRefused`, nothing
        sent) unless the view's own server lists the tool and its visibility includes `app`
        (apps §Visibility); then asked of the consent gate like any call, and sent."""
        connection = self.servers.get(view.server)
        listed = next((t for t in connection.tools if t.get("name") == tool), None) if connection else None
        if listed is None:
            raise AppCallRefused(
                f"the view of {view.server}.{view.tool} may call only its own server's tools, not {tool!r}"
            )
        link = link_of(view.server, listed)
        if link is not None and not link.for_app:
            raise AppCallRefused(
                f"{view.server}.{tool} is not callable by views (visibility: {list(link.visibility)})",
                server=view.server,
            )
        logger.info("view of %s.%s calls %s.%s", view.server, view.tool, view.server, tool)
        entry = CatalogueEntry(
            name=f"{view.server}{SEPARATOR}{tool}",
            server=view.server,
            tool=tool,
            description=str(listed.get("description") or ""),
            input_schema=listed["inputSchema"],
            annotations=_annotations(listed),
            available=connection is not None and connection.down is None,
            view=link.resource_uri if link is not None else None,
        )
        return await self._call_entry(entry, arguments)

    def _input_handler(self, label: str, method: str) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
        """The handler this server's client uses for `method`: ask the user, labelled with the
        server, then ask the gate before the answer goes back (to this server only)."""

        async def handle(params: dict[str, Any]) -> dict[str, Any]:
            server, tool = _current_call.get((label, "?"))
            if server != label or self.ask_user is None:
                # Only a call through this host, to this server, may ask this user anything.
                raise ProtocolError(f"{label} asked for input outside a call the host made to it")
            answer = self.ask_user(InputQuestion(label, tool, method, params))
            if inspect.isawaitable(answer):
                answer = await answer
            await self.consent.require(ConsentQuestion(label, tool, INPUT, answer))
            return answer

        return handle

    # -- per server ----------------------------------------------------------------------

    async def _discover(self, connection: Connection) -> None:
        try:
            discovered = await connection.client.discover()
            capabilities = discovered.get("capabilities")
            connection.capabilities = capabilities if isinstance(capabilities, dict) else {}
            connection.tools = await connection.client.list_tools() if "tools" in connection.capabilities else []
        except MCPClientError as failure:
            self._mark_down(connection, failure)
            return
        connection.down = None

    def _mark_down(self, connection: Connection, failure: Exception) -> None:
        reason = f"{type(failure).__name__}: {failure}"
        logger.warning("server %s marked unavailable: %s", connection.label, reason)
        connection.down = reason

    async def _start_listening(self, connection: Connection) -> None:
        if connection.down is not None or not (connection.capabilities.get("tools") or {}).get("listChanged"):
            return
        subscription = await self._open_listen(connection)
        if subscription is not None:
            connection.listen_task = asyncio.create_task(self._pump(connection, subscription))

    async def _open_listen(self, connection: Connection) -> Subscription | None:
        """A listen stream for this server, acknowledged; `None` if it cannot be opened now.
        The client's own reconnecting is off (`max_reconnects=0`): the host re-opens the stream
        itself, because after a gap it must also list the tools again (notifications sent while
        no stream was open are lost, subscriptions.mdx)."""
        subscription = connection.client.listen(tools_list_changed=True, max_reconnects=0)
        try:
            await subscription.start()
        except MCPClientError as failure:
            logger.warning("listen stream of %s could not be opened: %s", connection.label, failure)
            return None
        connection.listening = True
        return subscription

    async def _pump(self, connection: Connection, subscription: Subscription | None) -> None:
        """The listen stream of one server, for as long as the host runs. Each `tools/list_changed`
        (the client has already dropped the cached list) re-lists that server's tools, and only
        that server's. A stream that breaks, or that the server ends, is opened again after a
        backoff that doubles up to `listen_backoff_max`, and the tools are listed again."""
        delay = self.listen_backoff
        while True:
            if subscription is not None:
                try:
                    async for note in subscription:
                        delay = self.listen_backoff
                        if note.method == TOOLS_CHANGED:
                            await self._changed(connection)
                except MCPClientError as failure:
                    logger.warning("listen stream of %s broke: %s", connection.label, failure)
                finally:
                    connection.listening = False
                    await subscription.aclose()
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.listen_backoff_max)
            subscription = await self._open_listen(connection)
            if subscription is not None:
                await self._changed(connection)  # whatever changed during the gap

    async def _changed(self, connection: Connection) -> None:
        await self._discover(connection)
        if self.on_change is not None:
            self.on_change(connection.label)
