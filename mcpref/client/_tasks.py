"""The client side of the tasks extension (SEP-2663): wait for a task, answer it, cancel it.

A `Client(..., tasks=True)` declares `io.modelcontextprotocol/tasks` on every request. The
server may then answer `tools/call` with a task instead of a result; `Client.call_tool` waits for
it and returns the final result as if the call had been synchronous, and `Client.start_tool`
returns whatever came (a result, or the `CreateTaskResult`) for code that wants the task itself.

`TaskWaiter.wait` polls `tasks/get` until the task ends:

- never faster than the task's `pollIntervalMs` (SEP-2663 §Task Polling: clients SHOULD respect
  it), counted from the `CreateTaskResult` for the first poll and from the last poll after a
  `tasks/update`; and slower the longer nothing changes (×1.5 a poll, up to `max_interval`),
  back to the server's pace when something does. A wait resumed from an id alone polls at once:
  there was no poll to count from;
- `on_status(task)` sees every new status or `statusMessage` (the task's progress, in words);
- an `input_required` task's new input requests are answered with the client's handlers and sent
  with `tasks/update`; keys already answered are not answered twice;
- `completed` returns the result, `failed` raises the task's JSON-RPC error, `cancelled` raises
  `TaskCancelled`.

Only the task id is needed to resume: a client restarted after a crash calls `wait_for_task(id)`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from ..jsonrpc import INTERNAL_ERROR
from ..tasks.record import CANCEL, CANCELLED, COMPLETED, FAILED, GET, INPUT_REQUIRED, UPDATE
from ._errors import MCPClientError, ProtocolError, error_from

#: Poll no faster than this when the server gives no `pollIntervalMs` (milliseconds).
DEFAULT_POLL_MS = 1000

StatusCallback = Callable[[dict[str, Any]], Awaitable[None] | None]
#: Sends one request (`tasks/get`, `tasks/update`) and returns its result: the client's `_call`.
Call = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
#: Answers an `inputRequests` map with `inputResponses`: the client's `InputHandlers.respond`.
Respond = Callable[[Any], Awaitable[dict[str, Any]]]


class TaskCancelled(MCPClientError):
    """The task ended `cancelled`: by this client's `tasks/cancel`, another's, or the server."""


class TaskWaiter:
    """Polls one task to its end for a `Client`, through its `call` and `respond`; see the module docstring."""

    def __init__(self, call: Call, respond: Respond, *, max_interval: float = 10.0, backoff: float = 1.5) -> None:
        self.call = call
        self.respond = respond
        self.max_interval = max_interval
        self.backoff = backoff

    async def wait(
        self, task_id: str, *, on_status: StatusCallback | None = None, created: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Poll to the end; `created`, the `CreateTaskResult` just received, paces the first poll."""
        answered: set[str] = set()
        seen: tuple[Any, ...] | None = None
        delay = 0.0
        if created is not None:
            await asyncio.sleep(_pace(created))
        while True:
            task = await self.call(GET, task_params(task_id))
            status = task.get("status")
            pace = _pace(task)
            now_seen = (status, task.get("statusMessage"), tuple(sorted(task.get("inputRequests") or {})))
            if now_seen != seen:
                seen, delay = now_seen, pace
                if on_status is not None:
                    shown = on_status(task)
                    if asyncio.iscoroutine(shown):
                        await shown
            else:
                delay = min(max(delay * self.backoff, pace), max(self.max_interval, pace))
            if status == COMPLETED:
                result = task.get("result")
                if not isinstance(result, dict):
                    raise ProtocolError(f"task {task_id} completed without a result object")
                return result
            if status == FAILED:
                raise error_from(
                    task.get("error") or {"code": INTERNAL_ERROR, "message": "task failed without an error"}
                )
            if status == CANCELLED:
                raise TaskCancelled(task.get("statusMessage") or f"task {task_id} was cancelled")
            if status == INPUT_REQUIRED:
                fresh = {k: v for k, v in (task.get("inputRequests") or {}).items() if k not in answered}
                if fresh:
                    responses = await self.respond(fresh)
                    await self.call(UPDATE, {**task_params(task_id), "inputResponses": responses})
                    answered.update(fresh)
                    delay = pace  # the answer changes what there is to wait for: back to the server's pace
            elif status != "working":
                raise ProtocolError(f"task {task_id} has unknown status {status!r}")
            await asyncio.sleep(delay)


def _pace(task: dict[str, Any]) -> float:
    """The task's `pollIntervalMs`, in seconds (`DEFAULT_POLL_MS` when it gives none)."""
    interval = task.get("pollIntervalMs")
    if not isinstance(interval, int | float) or isinstance(interval, bool):
        interval = DEFAULT_POLL_MS
    return max(interval or DEFAULT_POLL_MS, 1) / 1000


def task_params(task_id: str) -> dict[str, Any]:
    if not isinstance(task_id, str) or not task_id:
        raise ValueError("task_id must be a non-empty string")
    return {"taskId": task_id}


__all__ = ["CANCEL", "GET", "UPDATE", "TaskCancelled", "TaskWaiter", "task_params"]
