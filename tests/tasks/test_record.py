"""One task as the store keeps it and the wire shows it (SEP-2663 §Tasks, §Task Polling)."""

from __future__ import annotations

from typing import Any

from mcpref.tasks import TaskRecord
from mcpref.tasks.record import (
    CANCELLED,
    COMPLETED,
    FAILED,
    INPUT_REQUIRED,
    TERMINAL,
    TRANSITIONS,
    WORKING,
    allowed_from,
)


def record(status: str = WORKING, **fields: Any) -> TaskRecord:
    base: dict[str, Any] = {
        "task_id": "t1",
        "principal": "alice",
        "status": status,
        "created_at": 1_700_000_000.0,
        "updated_at": 1_700_000_061.2349,
        "ttl_ms": 60_000,
        "poll_interval_ms": 500,
    }
    return TaskRecord(**{**base, **fields})


def test_the_task_on_the_wire_has_the_schemas_fields_and_no_more() -> None:
    """`Task`: times in ISO 8601 UTC (milliseconds, `Z`); `ttlMs` always present, null when unlimited;
    `statusMessage` only when there is one. Nothing the store keeps for itself leaks out."""
    assert record().task() == {
        "taskId": "t1",
        "status": "working",
        "createdAt": "2023-11-14T22:13:20.000Z",
        "lastUpdatedAt": "2023-11-14T22:14:21.234Z",
        "ttlMs": 60_000,
        "pollIntervalMs": 500,
    }
    unlimited = record(ttl_ms=None, status_message="half way", cancel_requested=True, owner="i1").task()
    assert unlimited["ttlMs"] is None and unlimited["statusMessage"] == "half way"
    wire = {"taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
    assert set(unlimited) == wire


def test_a_detailed_task_carries_what_its_status_carries() -> None:
    """SEP-2663 §Task Polling: `inputRequests` (only the outstanding ones) while input_required,
    `result` once completed, `error` once failed; nothing more for working or cancelled."""
    asked = {"a": {"method": "roots/list"}, "b": {"method": "roots/list"}}
    waiting = record(INPUT_REQUIRED, input_requests=asked, input_responses={"a": {"roots": []}})
    assert waiting.outstanding == {"b": {"method": "roots/list"}}
    assert waiting.detailed() == {**waiting.task(), "inputRequests": {"b": {"method": "roots/list"}}}
    result, error = {"content": []}, {"code": -32603, "message": "Internal error"}
    for status, extra in ((COMPLETED, {"result": result}), (FAILED, {"error": error})):
        ended = record(status, input_requests=asked, result=result, error=error)
        assert ended.detailed() == {**ended.task(), **extra}, status
    for status in (WORKING, CANCELLED):
        other = record(status, input_requests=asked, result=result, error=error)
        assert other.detailed() == other.task(), status


def test_a_task_expires_when_its_ttl_from_creation_has_passed() -> None:
    task = record(ttl_ms=1000)
    assert not task.expired(task.created_at + 0.9995)
    assert task.expired(task.created_at + 1.0005)
    assert task.expired()  # now: long after 2023
    assert not record(ttl_ms=None).expired(task.created_at + 10**9)
    assert not record(created_at=4_000_000_000.0).expired()  # now is before it was created, so far


def test_a_task_moves_only_forward_and_never_out_of_an_end() -> None:
    """SEP-2663 §Task Status: working and input_required move between each other or end;
    completed, failed and cancelled are final."""
    assert allowed_from(WORKING) == {INPUT_REQUIRED}
    assert allowed_from(INPUT_REQUIRED) == {WORKING}
    for status in TERMINAL:
        assert allowed_from(status) == {WORKING, INPUT_REQUIRED}, status
        assert TRANSITIONS[status] == frozenset(), status
