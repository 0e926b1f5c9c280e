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
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ..catchall import log_bug
from ..context import RequestContext
from ..extensions import CallNext, Extension, declared, requirement
from ..jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY, MCPError
from ..meta import require_capabilities
from ..mrtr import InputRequired, read_input_responses, required_capability
from ..tools import ToolError, ToolResult, text
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

CANCELLED_MESSAGE = "Cancelled at the client's request"

logger = logging.getLogger("mcpref.tasks")

Work = Callable[["Task"], Awaitable[Any]]


class Task:
    """What a task's work sees of its task: report, ask, sleep, and whether it was cancelled."""

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
        """Set the task's `statusMessage` (progress, in words)."""
        if self._tasks is not None and self.task_id is not None:
            await self._tasks._store_call("touch", self.task_id, status_message=message)

    async def ask(self, requests: dict[str, dict[str, Any]], message: str | None = None) -> dict[str, dict[str, Any]]:
        """Ask the client for input (`elicit_form`, `create_message`, ...) and wait for every answer.

        Keys must be unique over the task's lifetime. The task is `input_required` until
        `tasks/update` has answered every key, then `working` again.
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
        """Sleep; a `tasks/cancel` on this instance interrupts it at once (others within a lease tick)."""
        await asyncio.sleep(seconds)


class TasksExtension(Extension):
    """Serve SEP-2663 tasks from `store` (SQLite in `mcp-tasks.sqlite3` by default)."""

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
    ) -> None:
        self.store: TaskStore = store if store is not None else SQLiteTaskStore()
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.lease_seconds = lease_seconds
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

    def added_to(self, server: Any) -> None:
        self._server = server

    # -- handing work off --------------------------------------------------------------------

    async def hand_off(self, ctx: RequestContext, work: Work, *, required: bool = False) -> Any:
        """Run `work` as a task if this request declared the extension, else within the request.

        Return what this returns from the tool. `required=True`: the work cannot run within a
        request, so a client that did not declare tasks gets -32021 naming the extension.
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
        record = await self._create(ctx)
        self._handed_off[id(ctx)] = record
        background = dataclasses.replace(ctx, notify=None)
        runner = asyncio.create_task(self._run(record.task_id, background, work))
        self._running[record.task_id] = runner
        # A placeholder the core turns into a result that `around` then replaces by the task.
        return ToolResult(content=[], is_error=True)

    async def around(self, ctx: RequestContext, call_next: CallNext) -> Any:
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

    async def _create(self, ctx: RequestContext) -> TaskRecord:
        now = time.time()
        record = TaskRecord(
            task_id=secrets.token_urlsafe(24),  # 192 random bits: the id is a bearer handle
            principal=ctx.principal,
            status=WORKING,
            created_at=now,
            updated_at=now,
            ttl_ms=self.ttl_ms,
            poll_interval_ms=self.poll_interval_ms,
            client_capabilities=ctx.client_capabilities,
            owner=self.instance,
            lease_until=now + self.lease_seconds,
        )
        await self._store_call("purge", now)
        await self._store_call("create", record)  # durable before the CreateTaskResult leaves
        return record

    # -- running work ------------------------------------------------------------------------

    async def _run(self, task_id: str, ctx: RequestContext, work: Work) -> None:
        lease = asyncio.create_task(self._keep_lease(task_id))
        try:
            status, fields = await self._outcome(ctx, work, task_id)
            await self._store_call("move", task_id, status, **fields)
        except asyncio.CancelledError:
            if task_id in self._cancelling:
                await self._store_call("move", task_id, CANCELLED, status_message=CANCELLED_MESSAGE)
            # Otherwise the server is shutting down: the lease runs out and others report the task failed.
        finally:
            lease.cancel()
            self._running.pop(task_id, None)
            self._wakeups.pop(task_id, None)
            self._cancelling.discard(task_id)

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

    async def _keep_lease(self, task_id: str) -> None:
        """Renew this instance's lease, and notice a cancel asked for on another instance."""
        while True:
            await asyncio.sleep(self.lease_seconds / 3)
            record = await self._store_call("get", task_id)
            if record is None or record.status in TERMINAL:
                return
            if record.cancel_requested:
                self._cancel_here(task_id)
                return
            await self._store_call("touch", task_id, lease_until=time.time() + self.lease_seconds)

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
        while True:
            record = await self._store_call("get", task_id)
            if record is None or record.status in TERMINAL:
                raise asyncio.CancelledError
            if record.cancel_requested:
                self._cancel_here(task_id)
            if all(key in record.input_responses for key in requests):
                await self._store_call("move", task_id, WORKING, status_message=None)
                return {key: record.input_responses[key] for key in requests}
            wakeup.clear()
            # An answer on this instance wakes the work at once; one on another within half a second.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    await wakeup.wait()

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
            await self._store_call("answer", record.task_id, responses)
            wakeup = self._wakeups.get(record.task_id)
            if wakeup is not None:
                wakeup.set()
        return {}

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
