"""The consent gate: nothing consequential happens on a server until the user said yes to it.

Two moments need a yes (index.mdx §Security and Trust & Safety: hosts must get the user's
consent before invoking tools and before passing data on):

- `call`: before a tool is dispatched, unless the tool is read-only *and* the host trusts that
  server's annotations (annotations are hints from the server; from an untrusted server they
  say nothing, server/tools.mdx §Tool Annotations).
- `input`: before the answers to a server's input requests (`inputResponses`) leave the host.

A decision is keyed by server label, tool and stage, and by nothing less: a yes for
`weather.get_forecast` says nothing about `tides.get_forecast`. Anything but an explicit `True`
(no rule, the question unanswered, `None`, "yes", an error while asking) is a refusal.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

CALL = "call"
INPUT = "input"


@dataclass(frozen=True)
class ConsentQuestion:
    """What the user is asked: which server, which of its tools, at which stage, with what."""

    server: str
    tool: str
    stage: str
    #: The arguments of a call, or the answers about to be sent back for an input request.
    detail: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        if self.stage == CALL:
            return f"Allow {self.server} to run {self.tool}?"
        return f"Send your answers to {self.server} (for {self.tool})?"


#: Asked for a question no rule decides; only a return of `True` allows.
AskConsent = Callable[[ConsentQuestion], "bool | None | Awaitable[bool | None]"]


class ConsentRefused(Exception):
    """The user did not allow it (or was never asked): nothing was sent."""

    def __init__(self, question: ConsentQuestion, decision: Any) -> None:
        why = "refused" if decision is False else "undecided, which counts as a refusal"
        super().__init__(f"{question.server}.{question.tool} ({question.stage}): {why}")
        self.question = question
        self.decision = decision


class ConsentGate:
    """Standing decisions per (server, tool, stage), and `ask` for everything else.

    ```python
    gate = ConsentGate(ask=prompt_the_user)
    gate.allow("weather", "file_report")  # its calls
    # ... and the answers to its questions:
    gate.allow("weather", "file_report", stage="input")
    ```
    """

    def __init__(self, ask: AskConsent | None = None) -> None:
        self.ask = ask
        self._rules: dict[tuple[str, str, str], bool] = {}
        #: Every question put to the gate and what came of it, in order (for a debugging view).
        self.log: list[tuple[ConsentQuestion, bool]] = []

    def allow(self, server: str, tool: str, *, stage: str = CALL) -> None:
        self._rules[(server, tool, _stage(stage))] = True

    def deny(self, server: str, tool: str, *, stage: str = CALL) -> None:
        self._rules[(server, tool, _stage(stage))] = False

    async def require(self, question: ConsentQuestion) -> None:
        """Return if allowed; raise `ConsentRefused` otherwise."""
        decision: Any = self._rules.get((question.server, question.tool, question.stage))
        if decision is None and self.ask is not None:
            try:
                decision = self.ask(question)
                if inspect.isawaitable(decision):
                    decision = await decision
            except Exception:  # noqa: BLE001 - a failure to ask is no answer, and no answer is no
                decision = None
        allowed = decision is True
        self.log.append((question, allowed))
        if not allowed:
            raise ConsentRefused(question, decision)


def _stage(stage: str) -> str:
    if stage not in (CALL, INPUT):
        raise ValueError(f"stage must be {CALL!r} or {INPUT!r}, got {stage!r}")
    return stage
