"""A page's shared servers: one app per endpoint, one event loop, and streams left open between blocks.

Frames normally go to a fresh app each. A page asks for a shared one when a flow needs the same
instance twice: for every request (`<!-- frames: shared-server — why -->` in its prose) or for
one request (`<!-- shared-server: why -->` right above it). Everything sent to a page's shared
apps runs on one event loop that lives as long as the page, so a `subscriptions/listen` stream
opened by one block can still be running when a later block changes the server, and a later
```` ```sse ```` block can read what arrived on it.

Python blocks reach the same instance through `shared_server("/mcp")`, which the harness puts in
every page's namespace: it returns the `mcpref.Server` behind that endpoint.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from typing import Any, TypeVar
from unittest import mock

from .exchange import Exchange

#: Every app the harness builds gets this `MCP_STATE_KEY`, as every instance of a deployment would.
DOCS_STATE_KEY = "mcpref-docs-harness-state-key"
NAMESPACE_KEY = "_frames_servers"

T = TypeVar("T")


def build(path: str) -> Any:
    """A fresh app for the endpoint at `path`, built with the deployment's shared state key."""
    from mcpref.demo import FACTORIES

    if path not in FACTORIES:
        raise LookupError(f"no MCP endpoint at {path} (mcpref.demo FACTORIES: {sorted(FACTORIES)})")
    # A requestState sealed by one fresh app must open in the next (basic/patterns/mrtr.mdx).
    with mock.patch.dict(os.environ, {"MCP_STATE_KEY": DOCS_STATE_KEY}):
        return FACTORIES[path]()


class PageServers:
    """The shared apps of one page, the loop they run on, and the stream a block left open."""

    def __init__(self) -> None:
        self.apps: dict[str, Any] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        #: The stream the last block ended with ': (stream still open, continued below)'.
        self.open_stream: Exchange | None = None
        self.open_stream_where: str | None = None

    def app(self, path: str) -> Any:
        if path not in self.apps:
            self.apps[path] = build(path)
        return self.apps[path]

    def server(self, path: str = "/mcp") -> Any:
        """The `mcpref.Server` behind the shared app at `path`, for a page's python blocks."""
        return self.app(path).server

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run on the page's loop. Between two calls the loop is idle, and whatever a python block
        does to a shared server (a tool added, a subscription ended) is picked up by the next."""
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        return self._loop.run_until_complete(coroutine)

    def keep(self, exchange: Exchange, where: str) -> None:
        self.open_stream, self.open_stream_where = exchange, where

    def close(self) -> list[str]:
        """Close what the page left behind; what was left open by mistake is a problem to report."""
        problems = []
        if self.open_stream is not None:
            problems.append(
                f"{self.open_stream_where}: the stream says it is continued below, but no ```sse block continues it"
            )
            self.run(self.open_stream.close())
            self.open_stream = None
        if self._loop is not None:
            self._loop.run_until_complete(_cancel(asyncio.all_tasks(self._loop)))
            self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()
            self._loop = None
        return problems


async def _cancel(tasks: set[asyncio.Task[Any]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def of(namespace: dict[str, Any]) -> PageServers:
    servers = namespace.get(NAMESPACE_KEY)
    if servers is None:
        servers = namespace[NAMESPACE_KEY] = PageServers()
    return servers


def setup(namespace: dict[str, Any]) -> None:
    """Called by sybil before a page's first block."""
    namespace["shared_server"] = of(namespace).server


def teardown(namespace: dict[str, Any]) -> None:
    """Called by sybil after a page's last block."""
    servers = namespace.pop(NAMESPACE_KEY, None)
    problems = servers.close() if servers is not None else []
    if problems:
        raise AssertionError("\n".join(problems))
