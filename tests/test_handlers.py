"""How every user function is called: sync in a worker thread, async on the loop, `ctx` on request."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from mcpref._handlers import call_handler, takes, wants_context

CTX: Any = object()


def test_a_handler_asks_for_the_context_by_naming_a_parameter_ctx() -> None:
    assert wants_context(lambda a, ctx: None) and not wants_context(lambda a, context: None)
    assert takes(lambda value, context: None, "context") and not takes(lambda value: None, "context")


def test_the_context_is_passed_only_when_asked_for() -> None:
    assert asyncio.run(call_handler(lambda **kw: sorted(kw), {"a": 1}, CTX, True)) == ["a", "ctx"]
    assert asyncio.run(call_handler(lambda **kw: sorted(kw), {"a": 1}, CTX)) == ["a"]
    assert asyncio.run(call_handler(lambda ctx: ctx, {}, CTX, True)) is CTX


def test_a_plain_def_runs_in_a_worker_thread_and_an_async_def_on_the_loop() -> None:
    def where() -> str:
        return threading.current_thread().name

    async def where_async() -> str:
        return threading.current_thread().name

    async def both() -> tuple[str, str, str]:
        return await call_handler(where, {}), await call_handler(where_async, {}), threading.current_thread().name

    in_thread, on_loop, loop = asyncio.run(both())
    assert on_loop == loop and in_thread != loop


class AsyncCallable:
    """An object whose `__call__` is a coroutine function: async, though not a function itself."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    async def __call__(self, value: str) -> str:
        self.threads.append(threading.current_thread().name)
        return value.upper()


def test_an_object_with_an_async_call_runs_on_the_loop() -> None:
    handler = AsyncCallable()

    async def run() -> tuple[str, str]:
        return await call_handler(handler, {"value": "a"}), threading.current_thread().name

    result, loop = asyncio.run(run())
    assert result == "A" and handler.threads == [loop]


def test_an_awaitable_returned_by_a_plain_def_is_awaited() -> None:
    async def later() -> list[str]:
        return ["done"]

    assert asyncio.run(call_handler(lambda: later(), {})) == ["done"]
    assert asyncio.run(call_handler(lambda: {"plain": True}, {})) == {"plain": True}


class NoThreads(ThreadPoolExecutor):
    """A default executor that refuses work: what runs anyway never left the loop."""

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no thread for this")


def test_an_async_handler_never_hops_to_a_thread() -> None:
    async def quick(value: str) -> str:
        return value

    async def run() -> Any:
        asyncio.get_running_loop().set_default_executor(NoThreads())
        return await call_handler(quick, {"value": "on the loop"}), await call_handler(AsyncCallable(), {"value": "b"})

    assert asyncio.run(run()) == ("on the loop", "B")
