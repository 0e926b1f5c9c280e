"""One task as the store keeps it, and as the wire shows it (SEP-2663 §Tasks).

A task is a small state machine:

    working <-> input_required
       |              |
       +--> completed, failed, cancelled   (terminal: nothing changes after)

The record also holds what the wire never shows: who the task belongs to (the principal), the
capabilities the client declared when it started the task (so its input requests ask only for
what that client can answer), every input request and response over the task's lifetime (keys are
unique for the whole lifetime), whether a cancel was asked for, and the lease of the instance
running the work.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
"""The extension's identifier (SEP-2663), under `capabilities.extensions` on both sides."""
#: The extension's methods; `Mcp-Name` mirrors `taskId` on each.
GET, UPDATE, CANCEL = "tasks/get", "tasks/update", "tasks/cancel"
NAME_FIELDS = {GET: "taskId", UPDATE: "taskId", CANCEL: "taskId"}
#: The requests a task may stand in for (SEP-2663 §Supported Methods).
TASK_METHODS = frozenset({"tools/call"})

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"

TERMINAL = frozenset({COMPLETED, FAILED, CANCELLED})
ACTIVE = frozenset({WORKING, INPUT_REQUIRED})
#: status -> the statuses it may move to.
TRANSITIONS = {
    WORKING: frozenset({INPUT_REQUIRED, COMPLETED, FAILED, CANCELLED}),
    INPUT_REQUIRED: frozenset({WORKING, COMPLETED, FAILED, CANCELLED}),
    COMPLETED: frozenset(),
    FAILED: frozenset(),
    CANCELLED: frozenset(),
}


def allowed_from(status: str) -> frozenset[str]:
    """The statuses a task may be in to move to `status`."""
    return frozenset(source for source, targets in TRANSITIONS.items() if status in targets)


@dataclass
class TaskRecord:
    """One task as a `TaskStore` keeps it; `task()` and `detailed()` are what the wire shows.

    Args:
        task_id: The task's id: 192 random bits, a bearer handle.
        principal: Whose task it is; only they may read or change it. None when anonymous.
        status: `working`, `input_required`, `completed`, `failed` or `cancelled`.
        created_at: When it was created, in epoch seconds.
        updated_at: When it last changed, in epoch seconds.
        ttl_ms: How long it is kept from creation, in milliseconds; None: until purged by hand.
        poll_interval_ms: How often the client should poll, in milliseconds.
        status_message: What the work last reported, in words.
        client_capabilities: What the client declared when it started the task, so the work's
            input requests ask only for what that client can answer.
        input_requests: Every input request of the task's lifetime, by key.
        input_responses: Every answer, by key.
        result: The tool's result, once `completed`.
        error: The JSON-RPC error object, once `failed`.
        cancel_requested: A `tasks/cancel` came, for the instance running the work to act on.
        owner: The instance running the work.
        lease_until: When the owner's claim on the work ends unless renewed, in epoch seconds.
        trace_context: The W3C trace context (`traceparent`, `tracestate`) of the request that
            created the task, so every instance that serves it later links its spans to that
            trace; None without telemetry.
    """

    task_id: str
    principal: str | None
    status: str
    created_at: float
    updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int
    status_message: str | None = None
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    input_requests: dict[str, Any] = field(default_factory=dict)
    input_responses: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    cancel_requested: bool = False
    owner: str | None = None
    lease_until: float = 0.0
    trace_context: dict[str, str] | None = None

    @property
    def outstanding(self) -> dict[str, Any]:
        """The input requests not answered yet: what `inputRequests` shows."""
        return {key: value for key, value in self.input_requests.items() if key not in self.input_responses}

    def expired(self, now: float | None = None) -> bool:
        """Whether the task's TTL has run out.

        Args:
            now: The time to judge by, in epoch seconds; None: now.

        Returns:
            True past `created_at` plus `ttl_ms`; never for a task without a TTL.
        """
        if self.ttl_ms is None:
            return False
        return (time.time() if now is None else now) > self.created_at + self.ttl_ms / 1000

    def task(self) -> dict[str, Any]:
        """The `Task` fields: what `CreateTaskResult` carries (with `resultType: "task"`).

        Returns:
            `taskId`, `status`, `statusMessage` if any, the times in ISO 8601, `ttlMs` and
                `pollIntervalMs`.
        """
        task: dict[str, Any] = {"taskId": self.task_id, "status": self.status}
        if self.status_message is not None:
            task["statusMessage"] = self.status_message
        task["createdAt"] = _iso(self.created_at)
        task["lastUpdatedAt"] = _iso(self.updated_at)
        task["ttlMs"] = self.ttl_ms
        task["pollIntervalMs"] = self.poll_interval_ms
        return task

    def detailed(self) -> dict[str, Any]:
        """The `DetailedTask`: the task plus what its status carries, as `tasks/get` answers
        ([SEP-2663](https://modelcontextprotocol.io/seps/2663-tasks-extension)).

        Returns:
            `task()` with the outstanding `inputRequests`, the `result` or the `error`, by status.
        """
        task = self.task()
        if self.status == INPUT_REQUIRED:
            task["inputRequests"] = self.outstanding
        elif self.status == COMPLETED:
            task["result"] = self.result
        elif self.status == FAILED:
            task["error"] = self.error
        return task


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
