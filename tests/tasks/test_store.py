"""The task stores, SQLite and PostgreSQL, against the one interface the extension uses."""

from __future__ import annotations

import dataclasses
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from mcpref.tasks import SQLiteTaskStore, TaskRecord, TaskStore
from mcpref.tasks.record import CANCELLED, COMPLETED, FAILED, INPUT_REQUIRED, WORKING


def record(task_id: str = "t1", *, ttl_ms: int | None = 60_000, created_at: float | None = None) -> TaskRecord:
    now = time.time() if created_at is None else created_at
    return TaskRecord(
        task_id=task_id,
        principal="alice",
        status=WORKING,
        created_at=now,
        updated_at=now,
        ttl_ms=ttl_ms,
        poll_interval_ms=500,
        client_capabilities={"elicitation": {}},
    )


def test_a_created_task_is_found_as_it_was_stored(store: TaskStore) -> None:
    store.create(record())
    found = store.get("t1")
    assert found == record(created_at=found.created_at)
    assert store.get("nope") is None


def test_only_legal_transitions_happen(store: TaskStore) -> None:
    store.create(record())
    assert store.move("t1", WORKING) is False  # working -> working is no transition
    assert store.move("t1", COMPLETED, result={"content": []}) is True
    for status in (WORKING, INPUT_REQUIRED, FAILED, CANCELLED, COMPLETED):
        assert store.move("t1", status) is False, f"a completed task moved to {status}"
    assert store.get("t1").result == {"content": []}


def test_touch_changes_only_active_tasks(store: TaskStore) -> None:
    store.create(record())
    assert store.touch("t1", status_message="half way") is True
    assert store.get("t1").status_message == "half way"
    store.move("t1", CANCELLED)
    assert store.touch("t1", status_message="too late") is False


def test_input_is_asked_and_answered_key_by_key(store: TaskStore) -> None:
    store.create(record())
    assert store.ask("t1", {"a": {"method": "elicitation/create"}, "b": {"method": "elicitation/create"}}, "waiting")
    store.answer("t1", {"a": {"action": "accept"}, "zzz": {"action": "accept"}})  # an unknown key is ignored
    task = store.get("t1")
    assert task.status == INPUT_REQUIRED and list(task.outstanding) == ["b"]
    assert task.input_responses == {"a": {"action": "accept"}}
    store.answer("t1", {"a": {"action": "decline"}})  # an answered key keeps its first answer
    assert store.get("t1").input_responses["a"] == {"action": "accept"}


def test_a_key_is_never_reused_in_one_task(store: TaskStore) -> None:
    store.create(record())
    store.ask("t1", {"a": {"method": "roots/list"}}, None)
    store.answer("t1", {"a": {"roots": []}})
    store.move("t1", WORKING)
    with pytest.raises(ValueError, match="unique"):
        store.ask("t1", {"a": {"method": "roots/list"}}, None)


def test_expired_tasks_are_purged_and_unlimited_ones_kept(store: TaskStore) -> None:
    store.create(record("old", ttl_ms=1000, created_at=time.time() - 5))
    store.create(record("forever", ttl_ms=None))
    assert store.purge(time.time()) == 1
    assert store.get("old") is None and store.get("forever") is not None


def test_of_two_racing_endings_exactly_one_wins(store: TaskStore) -> None:
    """A worker completing and a cancel landing at once: the task ends once, never twice."""
    for n in range(20):
        store.create(record(f"race{n}"))
    wins: list[str] = []
    lock = threading.Lock()

    def end(status: str) -> None:
        for n in range(20):
            if store.move(f"race{n}", status):
                with lock:
                    wins.append(status)

    threads = [threading.Thread(target=end, args=(status,)) for status in (COMPLETED, CANCELLED)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(wins) == 20


def test_a_task_is_kept_until_its_ttl_has_run_out_and_not_a_moment_less(store: TaskStore) -> None:
    """SEP-2663 §Task Polling: the TTL counts from `createdAt`; purging before it would lose a task."""
    created = time.time() - 100
    store.create(record("second", ttl_ms=1000, created_at=created))
    store.create(record("fresh", ttl_ms=60_000))
    assert store.purge(created + 0.9995) == 0
    assert store.purge(created + 1.0005) == 1
    assert store.get("second") is None and store.get("fresh") is not None


def test_a_status_message_moves_last_updated_at_and_a_lease_renewal_does_not(store: TaskStore) -> None:
    """`lastUpdatedAt` is when the client-visible task last changed; the lease is not visible."""
    store.create(record(created_at=time.time() - 100))
    before = store.get("t1").updated_at
    assert store.touch("t1", lease_until=time.time() + 15, cancel_requested=True) is True
    renewed = store.get("t1")
    assert renewed.updated_at == before and renewed.cancel_requested is True
    store.touch("t1", status_message="half way")
    assert store.get("t1").updated_at > before + 99


def test_input_is_asked_only_of_a_working_task_and_answered_only_while_asked(store: TaskStore) -> None:
    """A task that ended (or never existed) takes no input requests and no answers."""
    assert store.ask("nope", {"a": {"method": "roots/list"}}, None) is False
    store.answer("nope", {"a": {"roots": []}})  # ignored, not an error
    store.create(record())
    store.ask("t1", {"a": {"method": "roots/list"}}, "waiting")
    store.move("t1", CANCELLED)
    store.answer("t1", {"a": {"roots": []}})
    assert store.ask("t1", {"b": {"method": "roots/list"}}, None) is False
    cancelled = store.get("t1")
    assert cancelled.status == CANCELLED and cancelled.input_responses == {}
    assert list(cancelled.input_requests) == ["a"]


def test_only_task_columns_can_be_set(store: TaskStore) -> None:
    """Field names become SQL: a name that is no column is refused before any SQL is built."""
    store.create(record())
    with pytest.raises(ValueError, match=r"^not a task column: \['owner; DROP TABLE mcp_tasks'\]$"):
        store.touch("t1", **{"owner; DROP TABLE mcp_tasks": "x"})
    assert store.get("t1") is not None


def test_the_default_store_is_a_file_in_the_working_directory_in_wal_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`SQLiteTaskStore()` keeps tasks in `mcp-tasks.sqlite3`, in WAL mode (readers never wait for
    the writer, and several processes may share the file)."""
    monkeypatch.chdir(tmp_path)
    store = SQLiteTaskStore()
    store.create(record())
    store.close()
    assert (tmp_path / "mcp-tasks.sqlite3").is_file()
    with closing(sqlite3.connect(tmp_path / "mcp-tasks.sqlite3")) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    with closing(SQLiteTaskStore(tmp_path / "mcp-tasks.sqlite3")) as reopened:
        assert reopened.get("t1") is not None  # the tasks outlive the store that wrote them


def test_what_one_store_writes_another_on_the_same_database_reads_at_once(store: TaskStore) -> None:
    """SEP-2663 §Task Creation: once `create` returns, `tasks/get` through any instance finds the
    task; so every write is committed when its method returns, not left in an open transaction."""
    if isinstance(store, SQLiteTaskStore):
        other: Any = SQLiteTaskStore(store.path)
    else:
        from mcpref.tasks.postgres import PostgresTaskStore

        other = PostgresTaskStore(store.dsn)  # type: ignore[attr-defined]
    with closing(other):
        store.create(record())
        assert other.get("t1") is not None
        store.ask("t1", {"a": {"method": "roots/list"}}, "waiting")
        other.answer("t1", {"a": {"roots": []}})
        assert store.get("t1").input_responses == {"a": {"roots": []}}
        assert other.move("t1", CANCELLED) is True
        assert store.get("t1").status == CANCELLED


def test_renew_extends_the_leases_of_one_owners_active_tasks_in_one_call(store: TaskStore) -> None:
    for task_id, owner in (("a", "me"), ("b", "me"), ("c", "other"), ("d", "me")):
        store.create(dataclasses.replace(record(task_id), owner=owner, lease_until=1.0))
    store.move("d", COMPLETED, result={"content": []})
    assert store.renew("me", 99.0) == 2
    assert [store.get(task_id).lease_until for task_id in "abcd"] == [99.0, 99.0, 1.0, 1.0]


def test_states_reads_many_tasks_at_once_and_leaves_out_the_missing(store: TaskStore) -> None:
    ids = [f"t{n}" for n in range(1200)]  # more than one query's worth of parameters
    for task_id in ids[:3]:
        store.create(record(task_id))
    store.touch("t1", cancel_requested=True)
    store.ask("t2", {"k": {"method": "roots/list"}}, None)
    states = store.states(ids)
    assert sorted(states) == ["t0", "t1", "t2"]
    assert [states[task_id][:2] for task_id in ("t0", "t1", "t2")] == [
        (WORKING, False),
        (WORKING, True),
        (INPUT_REQUIRED, False),
    ]
    assert states["t2"][2] == store.get("t2").updated_at


def test_a_task_keeps_the_trace_context_it_was_made_in(store: TaskStore) -> None:
    """So any instance asked about it later can link to that trace (mcpref.telemetry.link)."""
    context = {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "a=b"}
    store.create(dataclasses.replace(record(), trace_context=context))
    found = store.get("t1")
    assert found is not None and found.trace_context == context


def test_a_table_made_before_trace_context_gets_the_column(tmp_path: Path) -> None:
    """A store opened on a database an older mcpref made adds what is missing and keeps its tasks."""
    path = tmp_path / "old.sqlite3"
    old = SQLiteTaskStore(path)
    old.create(record("kept"))
    old.close()
    with closing(sqlite3.connect(path)) as connection:
        connection.execute("ALTER TABLE mcp_tasks DROP COLUMN trace_context")
        connection.commit()
    store = SQLiteTaskStore(path)
    try:
        kept = store.get("kept")
        assert kept is not None and kept.trace_context is None
        store.create(dataclasses.replace(record("new"), trace_context={"traceparent": "x"}))
        assert store.get("new").trace_context == {"traceparent": "x"}  # type: ignore[union-attr]
    finally:
        store.close()
