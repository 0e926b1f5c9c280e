"""Calling user functions the same way everywhere: sync or async, with or without `ctx`.

Tools, prompts, resources and completers are all called through `call_handler`.

A plain `def` handler runs in a worker thread (asyncio's default executor), as the official SDK
runs them: it may block (a file, a database driver, `time.sleep`) without stalling every other
request on the event loop. An `async def` handler runs on the loop; write quick handlers that
way to skip the hop to a thread.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from .context import RequestContext

#: Suggests values for a prompt argument or a template variable (`completion/complete`): it is
#: called with `value`, what the user has typed so far, and with `context` (the arguments
#: already chosen) when it has a parameter of that name.
Completer = Callable[..., Iterable[str] | Awaitable[Iterable[str]]]


def takes(fn: Callable[..., Any], name: str) -> bool:
    """Does `fn` have a parameter called `name`?"""
    return name in inspect.signature(fn).parameters


def wants_context(fn: Callable[..., Any]) -> bool:
    """A handler receives the request context when it has a parameter named `ctx`."""
    return takes(fn, "ctx")


_PLAIN_RESULTS = frozenset({str, dict, list})


@functools.cache
def _is_async(fn: Callable[..., Any]) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004


async def call_handler(
    fn: Callable[..., Any], kwargs: dict[str, Any], ctx: RequestContext | None = None, with_ctx: bool = False
) -> Any:
    """Call `fn` with `kwargs`, and `ctx` too when `with_ctx` (see `wants_context`)."""
    if with_ctx:
        kwargs = {**kwargs, "ctx": ctx}
    if _is_async(fn):
        result = fn(**kwargs)
    else:
        result = await asyncio.to_thread(functools.partial(fn, **kwargs))
    # inspect.isawaitable is slow to say no; the usual plain results skip it.
    if type(result) not in _PLAIN_RESULTS and inspect.isawaitable(result):
        result = await result
    return result
