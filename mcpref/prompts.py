"""Prompts: message templates behind `prompts/list` and `prompts/get` (server/prompts.mdx).

A prompt's arguments come from its function's signature: a parameter without a default is a
required argument. Prompt arguments are always strings on the wire.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from ._handlers import Completer, call_handler, wants_context
from .context import RequestContext
from .jsonrpc import INVALID_PARAMS, MCPError
from .mrtr import InputRequired
from .registry import Registry


@dataclass
class Prompt:
    name: str
    fn: Callable[..., Any]
    title: str | None = None
    description: str | None = None
    #: Descriptions of arguments, by name, shown in `prompts/list`.
    argument_descriptions: dict[str, str] = field(default_factory=dict)
    #: Completion functions by argument name, for `completion/complete` with a `ref/prompt`.
    complete: dict[str, Completer] = field(default_factory=dict)
    #: Who may see the prompt: called with the principal; None shows it to everyone.
    visible: Callable[[str | None], bool] | None = None

    def __post_init__(self) -> None:
        self._with_ctx = wants_context(self.fn)
        self.arguments = [
            (name, parameter.default is inspect.Parameter.empty)
            for name, parameter in inspect.signature(self.fn).parameters.items()
            if name != "ctx"
        ]

    def definition(self) -> dict[str, Any]:
        prompt: dict[str, Any] = {"name": self.name}
        if self.title is not None:
            prompt["title"] = self.title
        if self.description is not None:
            prompt["description"] = self.description
        if self.arguments:
            prompt["arguments"] = [self._argument(name, required) for name, required in self.arguments]
        return prompt

    def _argument(self, name: str, required: bool) -> dict[str, Any]:
        argument: dict[str, Any] = {"name": name}
        if name in self.argument_descriptions:
            argument["description"] = self.argument_descriptions[name]
        argument["required"] = required
        return argument

    async def get(self, arguments: Any, ctx: RequestContext) -> dict[str, Any] | InputRequired:
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise MCPError(INVALID_PARAMS, "Invalid params: prompt arguments must be an object of strings")
        known = {name for name, _ in self.arguments}
        unknown = sorted(set(arguments) - known)
        if unknown:
            raise MCPError(
                INVALID_PARAMS, f"Invalid params: unknown argument(s) for prompt {self.name!r}: {', '.join(unknown)}"
            )
        missing = [name for name, required in self.arguments if required and name not in arguments]
        if missing:
            raise MCPError(
                INVALID_PARAMS, f"Invalid params: prompt {self.name!r} needs argument(s): {', '.join(missing)}"
            )
        returned = await call_handler(self.fn, dict(arguments), ctx, self._with_ctx)
        return _to_result(returned, self.description)


def user_message(text: str) -> dict[str, Any]:
    return {"role": "user", "content": {"type": "text", "text": text}}


def _to_result(returned: Any, description: str | None) -> dict[str, Any] | InputRequired:
    """str → one user message; list → messages; dict → a whole `GetPromptResult`."""
    if isinstance(returned, InputRequired):
        return returned
    if isinstance(returned, dict):
        result = returned
    else:
        result = {} if description is None else {"description": description}
        result["messages"] = [user_message(returned)] if isinstance(returned, str) else returned
    # Checked, not trusted: messages that are anything else make a result no client can read.
    messages = result.get("messages")
    if not isinstance(messages, list) or not all(
        isinstance(message, dict) and "role" in message and "content" in message for message in messages
    ):
        raise TypeError("a prompt returns str, a list of messages, or a GetPromptResult dict")
    return result


class PromptRegistry(Registry[Prompt]):
    """Prompts by name, listed in the order they were registered."""

    def __init__(self) -> None:
        super().__init__("prompt", attrgetter("name"))
