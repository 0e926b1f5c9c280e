"""`completion/complete`: suggestions for a prompt argument or a resource-template variable
(server/utilities/completion.mdx).

Completers are plain functions registered on the prompt or template (`mcpref._handlers.Completer`);
they receive the partial `value` and, if they ask for it, `context` (the other arguments already
chosen). They are called as every handler is: a plain `def` in a worker thread.
"""

from __future__ import annotations

from typing import Any

from ._handlers import call_handler, takes
from .jsonrpc import INVALID_PARAMS, MCPError
from .prompts import PromptRegistry
from .resources import ResourceRegistry

MAX_VALUES = 100


async def complete(
    params: dict[str, Any], prompts: PromptRegistry, resources: ResourceRegistry, principal: str | None = None
) -> dict[str, Any]:
    ref = params.get("ref")
    argument = params.get("argument")
    if not isinstance(ref, dict) or not isinstance(argument, dict):
        raise MCPError(INVALID_PARAMS, "Invalid params: completion/complete needs `ref` and `argument` objects")
    name, value = argument.get("name"), argument.get("value")
    if not isinstance(name, str) or not isinstance(value, str):
        raise MCPError(INVALID_PARAMS, "Invalid params: argument.name and argument.value must be strings")
    context = _context_arguments(params.get("context"))
    if ref.get("type") == "ref/prompt":
        prompt = prompts.require(ref.get("name"), principal)
        completers = prompt.complete
    elif ref.get("type") == "ref/resource":
        template = resources.template_named(ref.get("uri"), principal)
        if template is None:
            raise MCPError(INVALID_PARAMS, f"Invalid params: no resource template {ref.get('uri')!r}")
        completers = template.complete
    else:
        raise MCPError(INVALID_PARAMS, f"Invalid params: unknown ref type {ref.get('type')!r}")

    completer = completers.get(name)
    values: list[str] = []
    if completer is not None:
        kwargs: dict[str, Any] = {"value": value}
        if takes(completer, "context"):
            kwargs["context"] = context
        values = list(await call_handler(completer, kwargs))
    completion: dict[str, Any] = {
        "values": values[:MAX_VALUES],
        "total": len(values),
        "hasMore": len(values) > MAX_VALUES,
    }
    return {"completion": completion}


def _context_arguments(context: Any) -> dict[str, str]:
    """`context.arguments`: the values already chosen, an object of strings; absent is none."""
    if context is None:
        return {}
    if isinstance(context, dict):
        arguments = context.get("arguments", {})
        if isinstance(arguments, dict) and all(isinstance(value, str) for value in arguments.values()):
            return arguments
    raise MCPError(INVALID_PARAMS, "Invalid params: context must be an object whose arguments map names to strings")
