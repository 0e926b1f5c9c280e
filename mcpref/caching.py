"""Cache hints: how long, and for whom, a list or read result may be reused.

Complete results of `server/discover`, the four list methods and `resources/read` carry
`ttlMs` and `cacheScope` (server/utilities/caching.mdx). `private` means the answer may depend
on who asked, so a cache must not share it between principals; `public` means any client may
reuse it. The safe default is `0` / `private`: do not reuse, do not share.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

CacheScope = Literal["public", "private"]

#: Methods whose complete results carry cache hints (the server adds them, the client keeps them).
CACHEABLE_METHODS = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)


@dataclass(frozen=True)
class CacheHints:
    """`ttlMs` and `cacheScope` for cacheable results: pass to `Server(cache=..., cache_for=...)`
    ([`server/utilities/caching.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/caching)).

    Args:
        ttl_ms: How long a client may reuse the result, in milliseconds; 0 (the default) means
            not at all.
        scope: `"private"` (the default) if the result may depend on who asked, so a cache must not
            share it between principals; `"public"` if any client may reuse it.

    Raises:
        ValueError: A negative `ttl_ms`, or another `scope`.
    """

    ttl_ms: int = 0
    scope: CacheScope = "private"

    def __post_init__(self) -> None:
        if self.ttl_ms < 0:
            raise ValueError("ttl_ms must be 0 or more")
        if self.scope not in ("public", "private"):
            raise ValueError('scope must be "public" or "private"')

    def apply(self, result: dict[str, Any]) -> dict[str, Any]:
        """Add `ttlMs` and `cacheScope` to a complete result, in place.

        Args:
            result: A complete result object.

        Returns:
            The same `result`.
        """
        result["ttlMs"] = self.ttl_ms
        result["cacheScope"] = self.scope
        return result
