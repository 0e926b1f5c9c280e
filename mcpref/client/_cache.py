"""Reusing list and read results for as long as the server says they stay fresh.

Complete results of `server/discover`, the list methods and `resources/read` carry `ttlMs` and
`cacheScope` (server/utilities/caching.mdx). The rules this cache keeps:

- The key is the endpoint, the method, the protocol version and the parameters that change the
  answer (`cursor`, `uri`); a request that differs in any of them is never served from another.
- `public` results may be served to anyone; `private` ones only to the same principal (the
  authorization context: one access token, one cache).
- `ttlMs` 0, negative, missing or not an integer means "do not reuse"; a result is fresh while
  `now < received + ttlMs`. The clock is injectable, so tests move time instead of sleeping.
- Interim (`input_required`) results and results of MRTR retries are never offered to it: the
  client decides that, since only it knows whether a request was a retry.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from ..caching import CACHEABLE_METHODS

#: The params that change a cacheable result, so its key holds them (caching.mdx §Cache Key):
#: the URI of a read, nothing for discovery, the cursor of a page of a list.
_SHAPING_PARAMS: dict[str, tuple[str, ...]] = {"server/discover": (), "resources/read": ("uri",)}
CACHE_PARAMS = {method: _SHAPING_PARAMS.get(method, ("cursor",)) for method in sorted(CACHEABLE_METHODS)}

#: Seconds on a monotonic scale, like `time.monotonic`.
Clock = Callable[[], float]


@dataclass(frozen=True)
class CacheKey:
    """What identifies one request for caching
    ([`server/utilities/caching.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching)).

    Args:
        endpoint: The server: its URL, or the stdio command line.
        method: The request's method.
        version: The protocol version it was asked in.
        params: The params that shape the result, as (name, value) pairs: the `uri` of a read,
            the `cursor` of a page.
    """

    endpoint: str
    method: str
    version: str
    params: tuple[tuple[str, Hashable], ...] = ()


def cache_key(endpoint: str, method: str, version: str, params: dict[str, Any]) -> CacheKey | None:
    """The key of a request whose result may be cached, `None` for any other request."""
    names = CACHE_PARAMS.get(method)
    if names is None:
        return None
    return CacheKey(endpoint, method, version, tuple((name, params[name]) for name in names if name in params))


@dataclass
class _Entry:
    result: dict[str, Any]
    expires: float


class ResultCache:
    """An in-memory cache of cacheable results. Share one between clients to share public results.

    A result is kept only if its `ttlMs` is positive; anything but `cacheScope: "public"` is
    kept for its principal alone.

    Args:
        clock: Seconds on a monotonic scale, what expiry is judged by.
        max_entries: Bounds memory: past it, expired entries go first, then the oldest.

    Raises:
        ValueError: `max_entries` below 1.
    """

    def __init__(self, *, clock: Clock = time.monotonic, max_entries: int = 1024) -> None:
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.clock = clock
        self.max_entries = max_entries
        self._entries: dict[tuple[CacheKey, str | None], _Entry] = {}

    def get(self, key: CacheKey, principal: str) -> dict[str, Any] | None:
        """A fresh result for this request as seen by `principal`.

        Args:
            key: The request's key.
            principal: Who asks: their private results, and everyone's public ones, match.

        Returns:
            A copy of the result, or None if none is fresh.
        """
        now = self.clock()
        for slot in ((key, principal), (key, None)):
            entry = self._entries.get(slot)
            if entry is None:
                continue
            if now < entry.expires:
                return copy.deepcopy(entry.result)
            del self._entries[slot]
        return None

    def put(self, key: CacheKey, principal: str, result: dict[str, Any]) -> bool:
        """Keep `result` if its hints allow it.

        Args:
            key: The request's key.
            principal: Who asked, for a private result.
            result: The complete result, with its `ttlMs` and `cacheScope`.

        Returns:
            Whether it was kept.
        """
        ttl_ms = result.get("ttlMs")
        if not isinstance(ttl_ms, int) or isinstance(ttl_ms, bool) or ttl_ms <= 0:
            return False
        # Anything but an explicit "public" stays with its principal: the safe reading of a bad hint.
        owner = None if result.get("cacheScope") == "public" else principal
        self._entries.pop((key, owner), None)
        self._make_room()
        self._entries[(key, owner)] = _Entry(copy.deepcopy(result), self.clock() + ttl_ms / 1000)
        return True

    def invalidate(self, *, endpoint: str | None = None, method: str | None = None, **params: Hashable) -> int:
        """Drop every entry matching the given fields (all of them when none is given); return how many.

        A change notification calls this: `notifications/tools/list_changed` drops `tools/list`,
        `notifications/resources/updated` drops `resources/read` for its `uri`.

        Args:
            endpoint: Only entries of this server.
            method: Only entries of this method.
            **params: Only entries whose key holds these params (`uri=...`).

        Returns:
            How many entries were dropped.
        """
        doomed = [
            slot
            for slot in self._entries
            if (endpoint is None or slot[0].endpoint == endpoint)
            and (method is None or slot[0].method == method)
            and all((name, value) in slot[0].params for name, value in params.items())
        ]
        for slot in doomed:
            del self._entries[slot]
        return len(doomed)

    def clear(self) -> None:
        """Drop every cached result."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def _make_room(self) -> None:
        if len(self._entries) < self.max_entries:
            return
        now = self.clock()
        for slot in [slot for slot, entry in self._entries.items() if entry.expires <= now]:
            del self._entries[slot]
        while len(self._entries) >= self.max_entries:
            del self._entries[next(iter(self._entries))]
