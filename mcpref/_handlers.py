"""Calling user handlers the same way everywhere: sync or async, with or without `ctx`."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .context import RequestContext


def wants_context(fn: Callable[..., Any]) -> bool:
    """A handler receives the request context when it has a parameter named `ctx`."""
    return "ctx" in inspect.signature(fn).parameters


_PLAIN_RESULTS = frozenset({str, dict, list})


async def call_handler(fn: Callable[..., Any], kwargs: dict[str, Any], ctx: RequestContext, with_ctx: bool) -> Any:
    if with_ctx:
        kwargs = {**kwargs, "ctx": ctx}
    result = fn(**kwargs)
    # inspect.isawaitable is slow to say no; the usual plain results skip it.
    if type(result) not in _PLAIN_RESULTS and inspect.isawaitable(result):
        result = await result
    return result
