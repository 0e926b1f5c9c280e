"""Origin checks against DNS rebinding (basic/transports/streamable-http.mdx §Security Warning).

A browser page on an attacker's site can be made to POST to a server on your loopback. The
browser still says where the page came from in `Origin`, so the server refuses any Origin that
is present and not on its allowlist. Requests without `Origin` (curl, SDK clients, other
servers) are not browser-driven and pass. By default only loopback pages are allowed; set
`MCP_ALLOWED_ORIGINS` to a comma-separated list of origins (`*` allows all) to change that.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

ENV_VAR = "MCP_ALLOWED_ORIGINS"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class OriginPolicy:
    """Which browser origins may call the endpoint: `allowed` (`"*"` for any), plus loopback pages
    unless `allow_loopback=False`. A request without `Origin` is not from a browser and passes."""

    def __init__(self, allowed: list[str] | None = None, *, allow_loopback: bool = True) -> None:
        self.allowed = frozenset(origin.rstrip("/").lower() for origin in (allowed or []))
        self.allow_loopback = allow_loopback

    @classmethod
    def from_env(cls) -> OriginPolicy:
        """The policy `MCP_ALLOWED_ORIGINS` describes: comma-separated origins, or `*`."""
        configured = os.environ.get(ENV_VAR, "")
        return cls([origin.strip() for origin in configured.split(",") if origin.strip()])

    def allows(self, origin: str | None) -> bool:
        """Whether a request with this `Origin` header (None when absent) may be served; if not, 403."""
        if origin is None:
            return True
        normalized = origin.rstrip("/").lower()
        if "*" in self.allowed or normalized in self.allowed:
            return True
        if not self.allow_loopback:
            return False
        try:
            parts = urlsplit(normalized)
            host = parts.hostname
            parts.port  # noqa: B018 - raises ValueError on a malformed port
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and host in LOOPBACK_HOSTS
