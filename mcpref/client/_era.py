"""Which era a server speaks, and remembering it per origin.

"Modern" servers (2026-07-28 and later) take per-request `_meta` and have no handshake;
"legacy" ones (2025-11-25 and earlier) want `initialize` first (basic/versioning.mdx). A client
that speaks both probes once and keeps the answer for the origin (HTTP) or process (stdio),
re-probing only if that assumption later fails.

The rules (streamable-http.mdx and stdio.mdx §Backward Compatibility):

- A `DiscoverResult`, or a recognised modern error such as -32022, means modern. Use the versions
  it lists; never fall back to `initialize` because of it.
- Any other JSON-RPC error, or a 400/404/405 without a recognised modern body, means legacy.
  Fallback is not keyed to one error code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import httpx

from ..meta import MODERN_VERSIONS

Era = Literal["modern", "legacy"]

#: What `Client(version=...)` accepts besides a version string.
AUTO = "auto"
LEGACY = "legacy"

#: HTTP statuses after which a body without a modern JSON-RPC error means "legacy server".
FALLBACK_STATUSES = frozenset({400, 404, 405})


@dataclass(frozen=True)
class EraInfo:
    """The era a server speaks (`"modern"` or `"legacy"`) and the version to use with it."""

    era: Era
    #: The version to send: a modern one for `_meta`, or the legacy one to ask for in `initialize`.
    version: str


class EraCache:
    """Detected eras by origin (`scheme://host:port`). One module-level instance is the default."""

    def __init__(self) -> None:
        self._eras: dict[str, EraInfo] = {}

    def get(self, origin: str) -> EraInfo | None:
        """The era remembered for `origin`, if any."""
        return self._eras.get(origin)

    def set(self, origin: str, info: EraInfo) -> None:
        """Remember the era of `origin`."""
        self._eras[origin] = info

    def forget(self, origin: str) -> None:
        """Forget `origin`, so the next client probes it again."""
        self._eras.pop(origin, None)

    def clear(self) -> None:
        """Forget every origin."""
        self._eras.clear()


#: Shared by every `Client` that is not given its own.
DEFAULT_ERA_CACHE = EraCache()
"""The era cache every `Client` shares unless given its own: an origin is probed once per process."""


def origin_of(url: str | httpx.URL) -> str:
    """`scheme://host:port`, with the scheme's default port spelt out, so equal origins compare equal."""
    parsed = httpx.URL(url)
    port = parsed.port or {"http": 80, "https": 443}.get(parsed.scheme)
    return f"{parsed.scheme}://{parsed.host}:{port}"


def mutual_version(offered: Iterable[str], ours: Iterable[str] = MODERN_VERSIONS) -> str | None:
    """Our most preferred version that the server also speaks (ours are listed newest first)."""
    offered = set(offered)
    return next((version for version in ours if version in offered), None)


#: The first revision without a handshake. Versions are dates, so they compare as strings.
FIRST_MODERN_VERSION = "2026-07-28"


def kind_of(version: str) -> Era:
    """The era a version string belongs to: before 2026-07-28 is legacy."""
    return "legacy" if version < FIRST_MODERN_VERSION else "modern"
