"""The registry: which servers a host may use, under which labels, for whom, with what trust.

Labels are the host's, never a server's: a server's `serverInfo.name`, its instructions and its
tool names have no say in them. A label is what prefixes the server's tools in the catalogue
(`<label>.<tool>`), so it must not contain the separator: no label can then be read as another
label plus a tool name.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field

import httpx

from mcpref.client import EraCache, ResultCache

LABEL = re.compile(r"[a-z][a-z0-9_-]{0,31}")
SEPARATOR = "."


@dataclass
class ServerEntry:
    """One server the host knows.

    - `auth`: a factory for this server's `httpx.Auth` (e.g. `mcpref.client.OAuth`), called once
      per host: each server gets its own instance, so its own token store.
    - `trust_annotations`: whether `readOnlyHint`/`destructiveHint` from this server may spare
      the user a consent question. Off by default: annotations are the server's claims.
    - `users`: the principals allowed to use it (`None`: everyone).
    - `timeout`: seconds to wait for any one answer before the server counts as down.
    - `cache`: its results, shared by every host made from this registry; the client keys
      private ones by principal, so only `public` answers are ever shared.
    - `era_cache`: the era and version it speaks, learned once, for this server alone.
    """

    label: str
    url: str
    auth: Callable[[], httpx.Auth] | None = None
    trust_annotations: bool = False
    users: frozenset[str] | None = None
    timeout: float = 10.0
    cache: ResultCache = field(default_factory=ResultCache)
    era_cache: EraCache = field(default_factory=EraCache)


class Registry:
    """Servers by label, in the order they were added."""

    def __init__(self) -> None:
        self._entries: dict[str, ServerEntry] = {}

    def add(
        self,
        label: str,
        url: str,
        *,
        auth: Callable[[], httpx.Auth] | None = None,
        trust_annotations: bool = False,
        users: Collection[str] | None = None,
        timeout: float = 10.0,
    ) -> ServerEntry:
        if not LABEL.fullmatch(label):
            raise ValueError(
                f"label {label!r} must match {LABEL.pattern} (no {SEPARATOR!r}: it separates label and tool)"
            )
        if label in self._entries:
            raise ValueError(f"label {label!r} is taken by {self._entries[label].url}")
        if auth is not None and not callable(auth):
            raise TypeError("auth must be a factory (a fresh httpx.Auth per server), not a shared instance")
        entry = ServerEntry(
            label, url, auth, trust_annotations, frozenset(users) if users is not None else None, timeout
        )
        self._entries[label] = entry
        return entry

    def for_principal(self, principal: str) -> list[ServerEntry]:
        """The servers `principal` may use."""
        return [entry for entry in self._entries.values() if entry.users is None or principal in entry.users]

    def __iter__(self) -> Iterator[ServerEntry]:
        return iter(self._entries.values())

    def __getitem__(self, label: str) -> ServerEntry:
        return self._entries[label]
