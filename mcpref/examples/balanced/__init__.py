"""The everything server as one instance of a deployment of several, behind a load balancer.

Every instance runs this same app with the same two settings:

- `MCPREF_DATABASE_URL`: the PostgreSQL database they share. Tasks live there
  (`PostgresTaskStore`), and change notifications cross instances through it
  (`PostgresRelay`, `LISTEN`/`NOTIFY` on one channel per server), so a listener on any instance
  hears of a change made on any other.
- `MCP_STATE_KEY`: the key that seals `requestState` and handles, so a multi-round-trip request
  may go on at any instance.
- Fair shares counted together (`PostgresShares`, in the same database): a caller's listen slots
  and live tasks are bounded over all the instances, not per instance, each instance's own count
  staying the floor.
- `MCPREF_TASK_LEASE_SECONDS` (optional): how long a task's instance may go silent before the
  others report the task failed (the tasks extension's default if unset).
- `MCPREF_SHARE_LEASE_SECONDS` (optional): how long a killed instance's listen slots and tasks
  still count against their callers (`PostgresShares`' default, 5 s, if unset).

`GET /healthz` is the balancer's health check: 200 while the process serves, its body saying
whether the relay is listening (a relay that reconnects keeps the instance in service: requests
still work, and its streams are told to read everything again once it is back).

`deploy/haproxy.cfg` balances three of them round-robin; `deploy/run` starts the lot.
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from mcpref import StreamableHTTP
from mcpref.examples.everything_server import build_server
from mcpref.relay import PostgresRelay
from mcpref.shares import PostgresShares
from mcpref.tasks import TaskQuota, TasksExtension
from mcpref.tasks.postgres import PostgresTaskStore

# ASGI's three arguments, as in every ASGI app.
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Instance:
    """The MCP endpoint at `/mcp` and the health check at `/healthz`."""

    def __init__(self, dsn: str, task_lease: float | None = None, share_lease: float | None = None) -> None:
        shares = PostgresShares(dsn) if share_lease is None else PostgresShares(dsn, lease_seconds=share_lease)
        quota = TaskQuota()
        quota.shared = shares.track("tasks", quota.counts)
        store = PostgresTaskStore(dsn)
        tasks = (
            TasksExtension(store, quota=quota)
            if task_lease is None
            else TasksExtension(store, quota=quota, lease_seconds=task_lease)
        )
        server = build_server(tasks)
        server.subscriptions.shared = shares.track("listen", server.subscriptions.counts)
        server.services.append(shares)
        self.relay = PostgresRelay(dsn, channel=f"mcpref:{server.info['name']}")
        server.relay = self.relay
        self.endpoint = StreamableHTTP(server)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/healthz":
            relay = "listening" if self.relay.listening.is_set() else "connecting"
            body = json.dumps({"status": "serving", "relay": relay}).encode()
            await send(
                {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
            )
            await send({"type": "http.response.body", "body": body})
            return
        await self.endpoint(scope, receive, send)


def create_app() -> Instance:
    """An instance on the database `MCPREF_DATABASE_URL` names."""
    dsn = os.environ.get("MCPREF_DATABASE_URL")
    if not dsn:
        raise RuntimeError("set MCPREF_DATABASE_URL to the PostgreSQL database the instances share")
    lease = os.environ.get("MCPREF_TASK_LEASE_SECONDS")
    shares = os.environ.get("MCPREF_SHARE_LEASE_SECONDS")
    return Instance(dsn, float(lease) if lease else None, float(shares) if shares else None)


def __getattr__(name: str) -> Instance:
    # `uvicorn mcpref.examples.balanced:app` builds the instance, and connects, only when asked.
    if name == "app":
        globals()["app"] = instance = create_app()
        return instance
    raise AttributeError(name)

__all__ = ["Instance", "app", "create_app"]
