"""The `io.modelcontextprotocol/tasks` extension (SEP-2663), served on the mcpref core.

A tool that may run long hands its work off with `tasks.hand_off(ctx, work)`. If the request
declared the extension, the task is stored (durably, before the answer leaves), the work runs in
the background, and the client gets a `CreateTaskResult` (`resultType: "task"`). If it did not,
the work runs within the request and the client gets the plain result, core behaviour (or -32021
for a tool that cannot run without a task: `required=True`).

The work is an async function taking a `Task`: it may report a status message, ask the client
for input (`await task.ask({...})`: the task moves to `input_required` until `tasks/update`
answers every key) and sleep in a way a cancel interrupts. What it returns becomes the tool's
result, exactly as if the tool had returned it; a `ToolError` becomes `completed` with
`isError: true`, an `MCPError` becomes `failed` with that error.

Everything about a task is in the `TaskStore`, so any instance sharing it answers `tasks/get`,
`tasks/update` and `tasks/cancel`. Only the work itself runs in the instance that accepted it.
That instance holds a lease on the task and renews it while the work runs; if it dies, the lease
runs out and the next instance asked about the task marks it `failed` (-32603, "the instance
running it stopped"). mcpref does not re-run the work elsewhere: a tool's work is arbitrary code
that may not be safe to run twice.

What a task may cost (issue 25), each bound a parameter with a default:

- Live tasks per caller and in all (`TaskQuota`: 16 and 1,000): past either, -32603 with 503.
- The bytes a task keeps of its request (`max_task_bytes`, 256 KiB): its arguments, the client
  capabilities input requests depend on (`mrtr.input_capabilities`; not the whole declaration),
  and the input responses `tasks/update` brings. A call or an update past it is -32602.
- Time: at its TTL a task's work is stopped and the task deleted, by this instance's own clock
  (a `tasks/get` on an expired task is refused even before that).
- Waiting: work waiting for input waits on an event, not in a thread. One heartbeat per instance
  watches every task it runs with one store read (`TaskStore.states`), renews their leases with
  one write, and purges expired tasks when they are due.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import heapq
import logging
import math
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .. import telemetry
from ..catchall import log_bug
from ..context import RequestContext
from ..extensions import CallNext, Extension, declared, requirement
from ..jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, MCPError, encode
from ..meta import RequestMeta, require_capabilities
from ..mrtr import InputRequired, input_capabilities, read_input_responses, required_capability
from ..tools import ToolError, ToolResult, text
from .quota import TaskQuota
from .record import (
    ACTIVE,
    CANCEL,
    CANCELLED,
    COMPLETED,
    FAILED,
    GET,
    NAME_FIELDS,
    TASKS_EXTENSION,
    TERMINAL,
    UPDATE,
    WORKING,
    TaskRecord,
)
from .store import SQLiteTaskStore, TaskStore

#: Defaults: how long a task is kept (from creation), how often clients should poll, and how long
#: an instance's claim on running a task lasts without renewal.
DEFAULT_TTL_MS = 3_600_000
DEFAULT_POLL_INTERVAL_MS = 1000
DEFAULT_LEASE_SECONDS = 15.0
#: What one task may keep of its request: arguments, input capabilities, input responses (bytes of JSON).
DEFAULT_MAX_TASK_BYTES = 256 * 1024
#: How often an instance looks at the tasks waiting for input for answers or cancels that reached
#: another instance (one store read for all of them), and the granularity of purging on time.
DEFAULT_WATCH_SECONDS = 0.5

CANCELLED_MESSAGE = "Cancelled at the client's request"

logger = logging.getLogger("mcpref.tasks")

Work = Callable[["Task"], Awaitable[Any]]


class Task:
    """What a task's work sees of its task: report, ask, sleep, and whether it was cancelled.

    `TasksExtension.hand_off` makes one and passes it to the work.

    Args:
        tasks: The extension running the task; None when the work runs within its request (the
            client did not declare tasks), where `report` does nothing and `ask` is refused.
        task_id: The task's id; None within a request.
        ctx: The request that started the task: its arguments, principal and MRTR answers.
    """

    def __init__(self, tasks: TasksExtension | None, task_id: str | None, ctx: RequestContext) -> None:
        self._tasks = tasks
        self.task_id = task_id
        #: The request that started the task (its arguments, principal, MRTR answers); its stream is gone.
        self.ctx = ctx

    @property
    def background(self) -> bool:
        """False when the client did not declare tasks and the work runs within its request."""
        return self._tasks is not None

    async def report(self, message: str) -> None:
        """Set the task's `statusMessage` (progress, in words), which `tasks/get` shows.

        Args:
            message: The new status message.
        """
        if self._tasks is not None and self.task_id is not None:
            await self._tasks._store_call("touch", self.task_id, status_message=message)

    async def ask(self, requests: dict[str, dict[str, Any]], message: str | None = None) -> dict[str, dict[str, Any]]:
        """Ask the client for input (`elicit_form`, `create_message`, ...) and wait for every answer.

        The task is `input_required` until `tasks/update` has answered every key, then `working`
        again ([SEP-2663](https://modelcontextprotocol.io/seps/2663-tasks-extension)).

        Args:
            requests: Keys mapped to input requests; the keys must be unique over the task's
                lifetime.
            message: The `statusMessage` while it waits.

        Returns:
            The client's answers, by key.

        Raises:
            MCPError: -32021 when the work runs within its request (the client did not declare
                tasks), since only a task can ask mid-flight.
        """
        if self._tasks is None or self.task_id is None:
            raise MCPError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                f"Missing required client capability: this work asks for input mid-flight, which needs the "
                f"{TASKS_EXTENSION} extension",
                {"requiredCapabilities": requirement(TASKS_EXTENSION)},
            )
        return await self._tasks._ask(self.task_id, requests, message)

    async def sleep(self, seconds: float) -> None:
        """Sleep; a `tasks/cancel` on this instance interrupts it at once (others within a lease tick).

        Args:
            seconds: How long.
        """
        await asyncio.sleep(seconds)


class TasksExtension(Extension):
    """Serve tasks ([SEP-2663](https://modelcontextprotocol.io/seps/2663-tasks-extension)):
    `server.add_extension(TasksExtension())`, then `hand_off` in a tool.

    Args:
        store: Where tasks live; by default SQLite in `mcp-tasks.sqlite3`. Instances that share a
            store (`PostgresTaskStore`) serve each other's tasks.
        ttl_ms: How long a task is kept from its creation (`ttlMs`), one hour by default; None
            keeps it until purged by hand.
        poll_interval_ms: How often clients should poll `tasks/get` (`pollIntervalMs`).
        lease_seconds: How long an instance's claim on running a task lasts without renewal;
            past it, the task is failed, as its instance is taken to be gone.
        quota: Live tasks per caller and in all (`TaskQuota`); by default 16 and 1000.
        max_task_bytes: What one task may keep of its request (arguments, input capabilities,
            input responses), 256 KiB of JSON by default; a larger request gets -32602.
        watch_seconds: How often an instance looks for answers or cancels that reached another
            instance, and the step of purging on time.
    """

    id = TASKS_EXTENSION
    result_types = frozenset({"task"})
    name_fields = NAME_FIELDS
    #: Status notifications (`notifications/tasks`) are a MAY that mcpref does not send yet: a
    #: declaring client asking for `taskIds` is acknowledged without them, and polls.
    listen_keys = frozenset({"taskIds"})

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        ttl_ms: int | None = DEFAULT_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        quota: TaskQuota | None = None,
        max_task_bytes: int = DEFAULT_MAX_TASK_BYTES,
        watch_seconds: float = DEFAULT_WATCH_SECONDS,
    ) -> None:
        self.store: TaskStore = store if store is not None else SQLiteTaskStore()
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.lease_seconds = lease_seconds
        #: Live tasks per caller and in all (see `TaskQuota`).
        self.quota = quota or TaskQuota()
        self.max_task_bytes = max_task_bytes
        self.watch_seconds = watch_seconds
        #: Names this instance in the store, as the owner of the tasks it runs.
        self.instance = secrets.token_hex(8)
        self.methods = {GET: self._get, UPDATE: self._update, CANCEL: self._cancel}
        self._server: Any = None
        #: Tool calls in flight that handed their work off: id(ctx) -> the task created, if any.
        self._handed_off: dict[int, TaskRecord | None] = {}
        #: Work running in this instance, and what wakes it when an answer or a cancel arrives here.
        self._running: dict[str, asyncio.Task[None]] = {}
        self._wakeups: dict[str, asyncio.Event] = {}
        self._cancelling: set[str] = set()
        #: Work waiting for input: what it last read of its task (status, cancel asked, updated),
        #: so the heartbeat wakes it when that changes on another instance.
        self._seen: dict[str, tuple[str, bool, float]] = {}
        #: Each running task's timer for its TTL, and the bytes its request keeps.
        self._expiry: dict[str, asyncio.TimerHandle] = {}
        self._kept: dict[str, int] = {}
        #: When tasks created here expire (rounded up to `watch_seconds`): when to purge.
        self._purge_at: list[float] = []
        self._heartbeat: asyncio.Task[None] | None = None
        #: Set when there is something new to watch, so the heartbeat does not sleep past it.
        self._rethink = asyncio.Event()

    def added_to(self, server: Any) -> None:
        """Keep the server, whose tools the tasks' work calls.

        Args:
            server: The `Server` the extension was added to.
        """
        self._server = server

    # -- handing work off --------------------------------------------------------------------

    async def hand_off(self, ctx: RequestContext, work: Work, *, required: bool = False) -> Any:
        """Run `work` as a task if this request declared the extension, else within the request.

        Args:
            ctx: The tool call's context.
            work: An async function taking the `Task`; what it returns is the tool's result.
            required: The work cannot run within a request, so a client that did not declare
                tasks gets -32021 naming the extension.

        Returns:
            What the tool returns: the work's result within a request, or a placeholder that
                the extension turns into the `task` result.

        Raises:
            MCPError: -32021 (`required` without the extension declared), -32602 (the request is
                larger than `max_task_bytes`), or -32603 with HTTP 503 when the quota is full.
        """
        if not declared(ctx, TASKS_EXTENSION) or id(ctx) not in self._handed_off:
            if required:
                raise MCPError(
                    MISSING_REQUIRED_CLIENT_CAPABILITY,
                    f"Missing required client capability: {ctx.params.get('name')} runs as a task "
                    f"(the {TASKS_EXTENSION} extension)",
                    {"requiredCapabilities": requirement(TASKS_EXTENSION)},
                )
            return await work(Task(None, None, ctx))
        background, kept = self._what_a_task_keeps(ctx)
        task_id = secrets.token_urlsafe(24)  # 192 random bits: the id is a bearer handle
        self.quota.admit(ctx.caller, task_id)
        try:
            record = await self._create(task_id, background)
        except BaseException:
            self.quota.release(task_id)
            raise
        self._handed_off[id(ctx)] = record
        self._kept[task_id] = kept
        runner = asyncio.create_task(self._run(task_id, background, work))
        self._running[task_id] = runner
        if record.ttl_ms is not None:
            expires = record.created_at + record.ttl_ms / 1000
            delay = expires - time.time()
            self._expiry[task_id] = asyncio.get_running_loop().call_later(delay, self._expired, task_id)
            slot = math.ceil(expires / self.watch_seconds) * self.watch_seconds
            if slot not in self._purge_at:
                heapq.heappush(self._purge_at, slot)
        self._beat()
        # A placeholder the core turns into a result that `around` then replaces by the task.
        return ToolResult(content=[], is_error=True)

    def _what_a_task_keeps(self, ctx: RequestContext) -> tuple[RequestContext, int]:
        """The request as the task's work keeps it, and its size: the arguments and what input
        requests depend on, not the whole `_meta` (-32602 past `max_task_bytes`)."""
        capabilities = input_capabilities(ctx.client_capabilities)
        if declared(ctx, TASKS_EXTENSION):
            capabilities["extensions"] = {TASKS_EXTENSION: {}}
        params = {key: value for key, value in ctx.params.items() if key != "_meta"}
        meta = RequestMeta(ctx.meta.protocol_version, capabilities)
        kept = len(encode(params)) + len(encode(capabilities))
        if kept > self.max_task_bytes:
            raise MCPError(
                INVALID_PARAMS,
                f"Invalid params: a task keeps at most {self.max_task_bytes} bytes of its request; "
                f"this one would keep {kept}",
            )
        return dataclasses.replace(ctx, params=params, meta=meta, notify=None), kept

    async def around(self, ctx: RequestContext, call_next: CallNext) -> Any:
        """Answer a `tools/call` whose tool handed its work off with the task (`resultType: "task"`).

        Args:
            ctx: The request's context.
            call_next: The core's handler.

        Returns:
            The task result, or the handler's own result if nothing was handed off.
        """
        if ctx.method != "tools/call" or not declared(ctx, TASKS_EXTENSION):
            return await call_next(ctx)
        self._handed_off[id(ctx)] = None
        try:
            result = await call_next(ctx)
        finally:
            record = self._handed_off.pop(id(ctx), None)
        if record is None:
            return result
        return {"resultType": "task", **record.task()}

    async def _create(self, task_id: str, ctx: RequestContext) -> TaskRecord:
        now = time.time()
        record = TaskRecord(
            task_id=task_id,
            principal=ctx.principal,
            status=WORKING,
            created_at=now,
            updated_at=now,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            client_capabilities=ctx.client_capabilities,
            owner=self.instance,
            lease_until=now + self.lease_seconds,
            trace_context=telemetry.carrier(),
        )
        await self._store_call("create", record)  # durable before the CreateTaskResult leaves
        return record

    # -- running work ------------------------------------------------------------------------

    async def _run(self, task_id: str, ctx: RequestContext, work: Work) -> None:
        try:
            with telemetry.running_task(ctx) as span:
                status, fields = await self._outcome(ctx, work, task_id)
                span.finished(fields.get("result"), fields.get("error"))
            await self._store_call("move", task_id, status, **fields)
        except asyncio.CancelledError:
            if task_id in self._cancelling:
                await self._store_call("move", task_id, CANCELLED, status_message=CANCELLED_MESSAGE)
            # Otherwise the server is shutting down: the lease runs out and others report the task failed.
        finally:
            self._running.pop(task_id, None)
            self._wakeups.pop(task_id, None)
            self._seen.pop(task_id, None)
            self._kept.pop(task_id, None)
            self._cancelling.discard(task_id)
            expiry = self._expiry.pop(task_id, None)
            if expiry is not None:
                expiry.cancel()
            self.quota.release(task_id)

    async def _outcome(self, ctx: RequestContext, work: Work, task_id: str) -> tuple[str, dict[str, Any]]:
        """(status, fields) the task ends with: what the tool would have answered synchronously."""
        tool = self._server.tools.get(ctx.params.get("name"))
        try:
            result = tool.result_of(await work(Task(self, task_id, ctx)))
        except ToolError as exc:
            return (COMPLETED, {"result": {"content": [text(str(exc))], "isError": True}})
        except MCPError as exc:
            return (FAILED, {"error": exc.to_error_object(), "status_message": exc.message})
        except asyncio.CancelledError:
            raise
        except Exception:
            log_bug(logger, "task work of tool %r raised", ctx.params.get("name"))
            error = MCPError(INTERNAL_ERROR, f"Internal error while running {ctx.params.get('name')}")
            return (FAILED, {"error": error.to_error_object(), "status_message": error.message})
        if isinstance(result, InputRequired):
            logger.error("task work of tool %r returned InputRequired; use task.ask", ctx.params.get("name"))
            error = MCPError(INTERNAL_ERROR, f"Internal error while running {ctx.params.get('name')}")
            return (FAILED, {"error": error.to_error_object(), "status_message": error.message})
        return (COMPLETED, {"result": result})

    def _expired(self, task_id: str) -> None:
        """The task's TTL ran out: stop its work (no store write: the purge deletes the task)."""
        runner = self._running.get(task_id)
        if runner is not None:
            runner.cancel()

    def _beat(self) -> None:
        """Start the heartbeat, or have it look again at what it watches and when."""
        if self._heartbeat is None or self._heartbeat.done():
            self._rethink = asyncio.Event()  # of this loop (a test may run the extension in several)
            self._heartbeat = asyncio.create_task(self._beats())
        else:
            self._rethink.set()

    async def _beats(self) -> None:
        """This instance's one watcher of its tasks, for as long as it runs any or has any to purge:
        renew the leases (every third of one), look at the tasks waiting for input (every
        `watch_seconds`) and at the running ones (with the leases), purge the expired when due."""
        next_lease = time.monotonic() + self.lease_seconds / 3
        while self._running or self._purge_at:
            due = [next_lease - time.monotonic()]
            if self._wakeups:
                due.append(self.watch_seconds)
            if self._purge_at:
                due.append(self._purge_at[0] - time.time())
            self._rethink.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, min(due))):
                    await self._rethink.wait()
                continue  # something new to watch: work out the next due time again
            try:
                next_lease = await self._beat_once(next_lease)
            except Exception:  # a store that failed once: the next beat tries again
                log_bug(logger, "the tasks heartbeat failed")

    async def _beat_once(self, next_lease: float) -> float:
        now = time.time()
        if self._purge_at and self._purge_at[0] <= now:
            while self._purge_at and self._purge_at[0] <= now:
                heapq.heappop(self._purge_at)
            await self._store_call("purge", now)
        watched = list(self._wakeups)
        if time.monotonic() >= next_lease:
            next_lease = time.monotonic() + self.lease_seconds / 3
            if self._running:
                await self._store_call("renew", self.instance, time.time() + self.lease_seconds)
            watched = list(self._running)
        if watched:
            self._look_at(watched, await self._store_call("states", watched))
        return next_lease

    def _look_at(self, task_ids: list[str], states: dict[str, tuple[str, bool, float]]) -> None:
        """Stop the work of tasks gone, ended or cancelled elsewhere; wake work whose task changed."""
        for task_id in task_ids:
            state = states.get(task_id)
            if state is None or state[0] in TERMINAL:
                self._expired(task_id)  # deleted, or ended by another instance: nobody waits for it
            elif state[1]:
                self._cancel_here(task_id)
            elif task_id in self._wakeups and state != self._seen.get(task_id):
                self._wakeups[task_id].set()

    async def _ask(
        self, task_id: str, requests: dict[str, dict[str, Any]], message: str | None
    ) -> dict[str, dict[str, Any]]:
        needed: dict[str, Any] = {}
        for request in requests.values():
            needed.update(required_capability(request))
        record = await self._store_call("get", task_id)
        require_capabilities(needed, record.client_capabilities if record else {})
        wakeup = self._wakeups.setdefault(task_id, asyncio.Event())
        if not await self._store_call("ask", task_id, requests, message):
            raise asyncio.CancelledError  # no longer working: cancelled, or failed by another instance
        self._beat()
        try:
            while True:
                wakeup.clear()  # before reading, so an answer arriving meanwhile still wakes the wait
                record = await self._store_call("get", task_id)
                if record is None or record.status in TERMINAL:
                    raise asyncio.CancelledError
                if record.cancel_requested:
                    self._cancel_here(task_id)
                if all(key in record.input_responses for key in requests):
                    await self._store_call("move", task_id, WORKING, status_message=None)
                    return {key: record.input_responses[key] for key in requests}
                self._seen[task_id] = (record.status, record.cancel_requested, record.updated_at)
                # No thread, no polling: an answer or a cancel on this instance sets the event at
                # once, the heartbeat when one reaches another instance (within `watch_seconds`).
                await wakeup.wait()
        finally:
            self._wakeups.pop(task_id, None)
            self._seen.pop(task_id, None)

    def _cancel_here(self, task_id: str) -> None:
        runner = self._running.get(task_id)
        if runner is not None:
            self._cancelling.add(task_id)
            runner.cancel()

    # -- the methods ---------------------------------------------------------------------------

    async def _get(self, ctx: RequestContext) -> dict[str, Any]:
        if "inputResponses" in ctx.params:
            raise MCPError(INVALID_PARAMS, "Invalid params: tasks/get only reads; answer with tasks/update")
        record = await self._load(ctx)
        return record.detailed()

    async def _update(self, ctx: RequestContext) -> dict[str, Any]:
        responses = read_input_responses(ctx.params)
        if "inputResponses" not in ctx.params:
            raise MCPError(INVALID_PARAMS, "Invalid params: tasks/update needs inputResponses")
        record = await self._load(ctx)
        if responses and record.status not in TERMINAL:
            self._check_kept_size(record, responses)
            await self._store_call("answer", record.task_id, responses)
            wakeup = self._wakeups.get(record.task_id)
            if wakeup is not None:
                wakeup.set()
        return {}

    def _check_kept_size(self, record: TaskRecord, responses: dict[str, Any]) -> None:
        """-32602 if keeping these answers would take the task past `max_task_bytes`. Only the
        answers it would keep count: those to outstanding requests, as `TaskStore.answer` keeps."""
        fresh = {key: value for key, value in responses.items() if key in record.outstanding}
        if not fresh:
            return
        request = self._kept.get(record.task_id)
        if request is None:  # run by another instance: what the store holds of the request
            request = len(encode(record.client_capabilities))
        kept = request + len(encode({**record.input_responses, **fresh}))
        if kept > self.max_task_bytes:
            raise MCPError(
                INVALID_PARAMS,
                f"Invalid params: a task keeps at most {self.max_task_bytes} bytes of its request and "
                f"answers; these answers would make it {kept}",
            )

    async def _cancel(self, ctx: RequestContext) -> dict[str, Any]:
        record = await self._load(ctx)
        if record.status in TERMINAL:
            return {}  # idempotent: a finished task stays as it finished
        # The instance running the work stops it: this one at once, another within a lease tick.
        # (A task nobody runs any more was reported failed by `_load`.)
        await self._store_call("touch", record.task_id, cancel_requested=True)
        self._cancel_here(record.task_id)
        return {}

    async def _load(self, ctx: RequestContext) -> TaskRecord:
        """The task this request names, if it exists, is alive and belongs to the caller; else -32602.

        Another principal's task is "not found", never "forbidden": its existence is not theirs to learn.
        """
        if "requestState" in ctx.params:
            raise MCPError(INVALID_PARAMS, f"Invalid params: {ctx.method} does not take requestState")
        task_id = ctx.params.get("taskId")
        if not isinstance(task_id, str):
            raise MCPError(INVALID_PARAMS, f"Invalid params: {ctx.method} needs taskId, a string")
        record: TaskRecord | None = await self._store_call("get", task_id)
        if record is None or record.principal != ctx.principal:
            raise MCPError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        telemetry.link(record.trace_context)  # this request's span, to the trace that made the task
        if record.expired():
            await self._store_call("purge", time.time())
            raise MCPError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        if record.status in ACTIVE and record.lease_until < time.time() and record.task_id not in self._running:
            error = MCPError(INTERNAL_ERROR, "The server instance running this task stopped before it finished")
            await self._store_call("move", task_id, FAILED, error=error.to_error_object(), status_message=error.message)
            record = await self._store_call("get", task_id) or record
        return record

    async def _store_call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call the store in a worker thread: a database round trip must not stall the event loop."""
        return await asyncio.to_thread(getattr(self.store, name), *args, **kwargs)
