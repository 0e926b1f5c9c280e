"""How many live tasks a caller may have, and all callers together: the tasks extension's fair share.

A live task is one whose work runs (`working` or `input_required`). Each holds what its work
needs in the instance running it and is watched by that instance, so a caller that could start
tasks without end would spend the server's memory and attention on its own (3,000 anonymous tasks
kept a server at 82% CPU). `TaskQuota` bounds them per caller (`context.fair_share_caller`: the
verified principal, or the peer) and in all; past either, starting one more is refused like a
listen slot past its bound: -32603, HTTP 503, `Retry-After`.

It counts the tasks this process runs. Instances sharing a store each run their own, so each
bounds its own; a count over all of them (`mcpref.shares.PostgresShares`) plugs in as `shared`,
and the larger of the two counts is the one compared with the limit: the process's own count is
the floor, whatever the shared one says.
"""

from __future__ import annotations

from typing import Protocol

from ..jsonrpc import INTERNAL_ERROR, MCPError

#: Defaults: live tasks one caller may have, and all callers together, in one process.
DEFAULT_MAX_PER_CALLER = 16
DEFAULT_MAX_TASKS = 1000
#: What a refused client is told to wait before trying again, in seconds.
RETRY_AFTER_SECONDS = 5


class SharedTaskCount(Protocol):
    """Live tasks counted over every instance sharing a store (issue 28 provides one).

    `admit` calls it on the event loop, twice per task created: an implementation answers from
    a count it keeps (refreshed in the background, or by its own instance's admissions), never
    with a database round trip per call."""

    def live_tasks(self, caller: str | None) -> int:
        """Live tasks of `caller`, or of every caller when None, on every instance."""


class TaskQuota:
    """Live tasks per caller and in all: a task past either gets -32603 with HTTP 503 and `Retry-After`.

    Args:
        max_per_caller: The most live tasks one caller (`context.fair_share_caller`) may have.
        max_tasks: The most live tasks of every caller together.
        shared: The count over every instance sharing a store (`mcpref.shares`); None counts this
            process alone.
    """

    def __init__(
        self,
        max_per_caller: int = DEFAULT_MAX_PER_CALLER,
        max_tasks: int = DEFAULT_MAX_TASKS,
        *,
        shared: SharedTaskCount | None = None,
    ) -> None:
        self.max_per_caller = max_per_caller
        self.max_tasks = max_tasks
        self.shared = shared
        #: Live tasks of this process: task id -> its caller, and how many each caller has.
        self._callers: dict[str, str] = {}
        self._by_caller: dict[str, int] = {}

    def live(self, caller: str | None = None) -> int:
        """Live tasks of `caller`: this process's count, or the shared count if that is larger.

        Args:
            caller: Whose tasks; None counts every caller's.

        Returns:
            The count.
        """
        local = len(self._callers) if caller is None else self._by_caller.get(caller, 0)
        return max(local, self.shared.live_tasks(caller)) if self.shared is not None else local

    def counts(self) -> dict[str, int]:
        """Live tasks of this process by caller (what `mcpref.shares` publishes).

        Returns:
            A copy: caller to count.
        """
        return dict(self._by_caller)

    def admit(self, caller: str, task_id: str) -> None:
        """Count `task_id` against `caller`'s share.

        Args:
            caller: Whose share it counts against.
            task_id: The new task.

        Raises:
            MCPError: -32603 with HTTP 503 and `Retry-After` if there is no room.
        """
        if self.live() >= self.max_tasks:
            raise _no_room(f"Too many tasks running (limit {self.max_tasks}); retry later")
        if self.live(caller) >= self.max_per_caller:
            raise _no_room(
                f"Too many tasks running for one caller (limit {self.max_per_caller}); retry when one has finished"
            )
        self._callers[task_id] = caller
        self._by_caller[caller] = self._by_caller.get(caller, 0) + 1

    def release(self, task_id: str) -> None:
        """The task's work has ended (or it was never started): its slot is free again.

        Args:
            task_id: The task; one not counted is ignored.
        """
        caller = self._callers.pop(task_id, None)
        if caller is None:
            return
        left = self._by_caller[caller] - 1
        if left:
            self._by_caller[caller] = left
        else:
            del self._by_caller[caller]


def _no_room(message: str) -> MCPError:
    return MCPError(
        INTERNAL_ERROR, message, http_status=503, http_headers=[(b"retry-after", str(RETRY_AFTER_SECONDS).encode())]
    )
