"""What tools, prompts and resources share: a registry of entries by key, gated by who asks.

Entries are kept in registration order, so a list comes out the same every time (pagination
needs a stable order). A key is registered once. Every change calls `on_change`, so the server
can tell listening clients. An entry's `visible` predicate decides which principals see it;
one they may not see is unknown to them, with the very error an unknown key gets, so neither a
list nor an error betrays what another caller can see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from .jsonrpc import INVALID_PARAMS, MCPError


class Gated(Protocol):
    """An entry: `visible(principal)` says who may see it; None shows it to everyone."""

    @property
    def visible(self) -> Callable[[str | None], bool] | None: ...


E = TypeVar("E", bound=Gated)


def shown(entry: Gated, principal: str | None) -> bool:
    """Whether `principal` may see `entry`."""
    return entry.visible is None or entry.visible(principal)


class Registry(Generic[E]):
    """Entries of one `kind` ("tool", "prompt", "resource") by the key `key_of` gives."""

    def __init__(self, kind: str, key_of: Callable[[E], str]) -> None:
        self.kind = kind
        self._key_of = key_of
        self._entries: dict[str, E] = {}
        #: How many have a `visible` predicate: with none, every list is the same for everyone.
        self._gated = 0
        #: Called after every change, so the server can tell listening clients.
        self.on_change: Callable[[], None] = lambda: None

    def add(self, entry: E) -> E:
        key = self._key_of(entry)
        if key in self._entries:
            raise ValueError(f"{self.kind} {key!r} is already registered")
        self._entries[key] = entry
        self._gated += entry.visible is not None
        self.on_change()
        return entry

    def remove(self, key: str) -> None:
        self._gated -= self._entries.pop(key).visible is not None
        self.on_change()

    def get(self, key: Any) -> E | None:
        """The entry under `key`, whoever may see it; a key that is not a string is none."""
        return self._entries.get(key) if isinstance(key, str) else None

    def find(self, key: Any, principal: str | None) -> E | None:
        """The entry under `key` if `principal` may see it, else None (as if there were none)."""
        entry = self._entries.get(key) if isinstance(key, str) else None
        if entry is None or not shown(entry, principal):
            return None
        return entry

    def require(self, key: Any, principal: str | None = None) -> E:
        """The entry under `key`; one the principal may not see is unknown, with the same error."""
        entry = self.find(key, principal)
        if entry is None:
            raise MCPError(INVALID_PARAMS, f"Unknown {self.kind}: {key}")
        return entry

    def visible_to(self, principal: str | None) -> tuple[Iterable[E], bool]:
        """The entries this principal may see, and whether that list depends on who asks."""
        if not self._gated:
            return self._entries.values(), False
        return [e for e in self._entries.values() if shown(e, principal)], True

    def __iter__(self) -> Iterator[E]:
        return iter(self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)
