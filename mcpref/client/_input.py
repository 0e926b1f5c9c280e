"""Answering a server's input requests: the client half of multi round-trip requests (MRTR).

When `tools/call`, `prompts/get` or `resources/read` needs something only the client can give
(a user's answer, an LLM completion, the roots), the server returns `resultType: "input_required"`
with `inputRequests`, a map from its own keys to `{method, params}` (basic/patterns/mrtr.mdx).
The client answers each with the handler plugged in for that method and retries; the answers go
back in `inputResponses` under the same keys.

Which handlers are plugged in is also what the client declares in `clientCapabilities`, so a
server never asks for what the client cannot give. `input_rounds` is the loop around one request.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..meta import missing_capabilities
from ..mrtr import MRTR_METHODS, required_capability
from ..tasks.record import TASK_METHODS
from ._errors import ProtocolError

#: A handler gets the input request's `params` and returns the result object (`ElicitResult`,
#: `CreateMessageResult`, `ListRootsResult`); sync or async.
InputHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]
"""A function answering one kind of input request: given its `params`, it returns the result."""

#: Sends one attempt of a request with these params (a new id each time) and returns its result.
Send = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

ELICITATION = "elicitation/create"
SAMPLING = "sampling/createMessage"
ROOTS = "roots/list"


@dataclass
class InputHandlers:
    """The handlers for server input requests, and the capabilities they amount to.

    The client makes one from its arguments ([`basic/patterns/mrtr.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/mrtr)).

    Args:
        elicitation: Answers `elicitation/create`.
        sampling: Answers `sampling/createMessage`.
        roots: Answers `roots/list`: a handler, or a fixed list of `Root` objects.
        elicitation_modes: The elicitation modes declared when an elicitation handler is
            plugged in, of `"form"` and `"url"`.
        declared: Everything the client declares (the client sets it); None means the
            handlers alone.

    Raises:
        ValueError: `elicitation_modes` empty or naming another mode, with an elicitation handler.
    """

    elicitation: InputHandler | None = None
    sampling: InputHandler | None = None
    roots: InputHandler | Sequence[Mapping[str, Any]] | None = None
    elicitation_modes: tuple[str, ...] = ("form", "url")
    declared: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # Declaring elicitation means supporting at least one mode (client/elicitation.mdx
        # §Capabilities); `{}` on the wire would read as form mode, which this client would refuse.
        modes = set(self.elicitation_modes)
        if self.elicitation is not None and (not modes or modes - {"form", "url"}):
            raise ValueError(f"elicitation_modes must name form, url or both, got {self.elicitation_modes!r}")

    def capabilities(self) -> dict[str, Any]:
        """`ClientCapabilities` for exactly the handlers present.

        Returns:
            `elicitation` (with its modes), `sampling` and `roots`, each only with its handler.
        """
        capabilities: dict[str, Any] = {}
        if self.elicitation is not None:
            capabilities["elicitation"] = {mode: {} for mode in self.elicitation_modes}
        if self.sampling is not None:
            capabilities["sampling"] = {}
        if self.roots is not None:
            capabilities["roots"] = {}
        return capabilities

    async def respond(self, input_requests: Any) -> dict[str, Any]:
        """Answer every input request of an `input_required` result.

        Args:
            input_requests: The result's `inputRequests`, as received.

        Returns:
            The `inputResponses` for the retry: one result per key, same keys.

        Raises:
            ProtocolError: A malformed input request, or one for a capability this client never
                declared.
        """
        if not isinstance(input_requests, Mapping):
            raise ProtocolError(f"inputRequests must be an object, got {type(input_requests).__name__}")
        return {key: await self._answer(key, request) for key, request in input_requests.items()}

    async def _answer(self, key: str, request: Any) -> dict[str, Any]:
        if not isinstance(request, Mapping) or not isinstance(request.get("method"), str):
            raise ProtocolError(f"inputRequests[{key!r}] is not a {{method, params}} object: {request!r}")
        method, params = request["method"], request.get("params") or {}
        if not isinstance(params, dict):
            raise ProtocolError(f"inputRequests[{key!r}].params must be an object")
        if method == SAMPLING and self.sampling is not None:
            # Tools in a sampling request need sampling.tools, the deprecated includeContext values
            # sampling.context (client/sampling.mdx); the client errs on what it did not declare.
            declared = self.capabilities() if self.declared is None else self.declared
            missing = missing_capabilities(required_capability(dict(request)), declared).get("sampling", {})
            if missing:
                names = ", ".join(f"sampling.{name}" for name in missing)
                raise ProtocolError(f"inputRequests[{key!r}] needs {names}, which this client never declared")
        handler = self._handler_for(method, params)
        if handler is None:
            # The server must only ask for what the client declared (mrtr.mdx §Server Requirements).
            raise ProtocolError(f"the server asked for {method} (key {key!r}), which this client never declared")
        if not callable(handler):
            return {"roots": _file_roots(handler)}
        answer = handler(params)
        if inspect.isawaitable(answer):
            answer = await answer
        if not isinstance(answer, dict):
            raise TypeError(f"the {method} handler must return a dict (the result object), got {type(answer).__name__}")
        if method == ROOTS:
            roots = answer.get("roots")
            if not isinstance(roots, list):
                raise TypeError(f"the {method} handler must return a ListRootsResult, whose roots is a list")
            _file_roots(roots)
        return answer

    def _handler_for(self, method: str, params: dict[str, Any]) -> Any:
        if method == ELICITATION:
            mode = params.get("mode", "form")
            return self.elicitation if mode in self.elicitation_modes else None
        if method == SAMPLING:
            return self.sampling
        if method == ROOTS:
            return self.roots
        return None


def result_type(method: str, result: dict[str, Any], *, tasks: bool) -> str:
    """The `resultType` of a `method` result (`complete` if absent); a `ProtocolError` if that
    method may not answer with it. `tasks`: as for `input_rounds`."""
    kind: str = result.get("resultType", "complete")
    if kind == "task":
        # Only for a client that declared tasks, and only where a task may stand in (SEP-2663).
        if not tasks or method not in TASK_METHODS:
            raise ProtocolError(f"{method} answered with a task, which this request cannot take")
    elif kind == "input_required":
        if method not in MRTR_METHODS:
            raise ProtocolError(f"{method} must not answer input_required (only {', '.join(sorted(MRTR_METHODS))})")
    elif kind != "complete":
        raise ProtocolError(f"{method} answered with unknown resultType {kind!r}")
    return kind


async def input_rounds(
    method: str, params: dict[str, Any], send: Send, inputs: InputHandlers, *, max_rounds: int, tasks: bool
) -> tuple[dict[str, Any], int]:
    """Send, and while the server answers `input_required`, answer its input requests and retry
    with `inputResponses` and the exact `requestState` (mrtr.mdx). The final result, and how many
    retries it took (a retried result must not be cached: it depends on the answers).

    `tasks`: the client declared the tasks extension, so a `CreateTaskResult` may stand in.
    """
    attempt = params
    for rounds in range(max_rounds + 1):
        result = await send(attempt)
        if result_type(method, result, tasks=tasks) != "input_required":
            return result, rounds
        if rounds == max_rounds:
            break
        attempt = dict(params)
        if "inputRequests" in result:
            attempt["inputResponses"] = await inputs.respond(result["inputRequests"])
        if "requestState" in result:
            attempt["requestState"] = result["requestState"]
    raise ProtocolError(f"{method} still needed input after {max_rounds} rounds; giving up")


def _file_roots(roots: Any) -> list[dict[str, Any]]:
    """The roots as plain dicts, each checked to be a `file://` URI (client/roots.mdx §Root)."""
    checked = [dict(root) for root in roots]
    for root in checked:
        if not str(root.get("uri", "")).startswith("file://"):
            raise ValueError(f"a root must be a file:// URI, got {root.get('uri')!r}")
    return checked
