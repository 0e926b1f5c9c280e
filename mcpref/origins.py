"""Origin and Host checks against DNS rebinding (basic/transports/streamable-http.mdx §Security Warning).

A browser page on an attacker's site can be made to POST to a server on your loopback. The
browser still says where the page came from in `Origin`, so the server refuses any Origin that
is present and not on its allowlist. Requests without `Origin` (curl, SDK clients, other
servers) are not browser-driven and pass. By default only loopback pages are allowed; set
`MCP_ALLOWED_ORIGINS` to a comma-separated list of origins (`*` allows all) to change that.

The Host header is the second line. A rebinding page reaches 127.0.0.1 under the attacker's own
name, so its requests say `Host: evil.example`; a server bound to loopback expects only loopback
names there. `HostPolicy` refuses any other (421), unless `MCP_ALLOWED_HOSTS` lists it (a name
that really points at this machine). It reads the header whole (`split_host`): a name, then an
optional port of digits, nothing else; `127.0.0.1:8000@evil.example` is no loopback name, and
whoever writes the Host into a URL (the authorization demo's issuer) gets only well-formed ones.
A server bound elsewhere does not check Host: a reverse proxy in front of it decides which names
reach it.
"""

from __future__ import annotations

import ipaddress
import os
import re
from urllib.parse import urlsplit

ENV_VAR = "MCP_ALLOWED_ORIGINS"
HOSTS_ENV_VAR = "MCP_ALLOWED_HOSTS"
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})


class OriginPolicy:
    """Which browser origins may call the endpoint: `allowed` (`"*"` for any), plus loopback pages
    unless `allow_loopback=False`. A request without `Origin` is not from a browser and passes.

    Args:
        allowed: Origins allowed besides loopback ones (`https://app.example`), compared without
            a trailing slash and case; `"*"` allows any.
        allow_loopback: Also allow pages served from `localhost`, `127.0.0.1` or `[::1]`.
    """

    def __init__(self, allowed: list[str] | None = None, *, allow_loopback: bool = True) -> None:
        self.allowed = frozenset(origin.rstrip("/").lower() for origin in (allowed or []))
        self.allow_loopback = allow_loopback

    @classmethod
    def from_env(cls) -> OriginPolicy:
        """The policy `MCP_ALLOWED_ORIGINS` describes: comma-separated origins, or `*`.

        Returns:
            The policy; with the variable unset, loopback pages only.
        """
        configured = os.environ.get(ENV_VAR, "")
        return cls([origin.strip() for origin in configured.split(",") if origin.strip()])

    def allows(self, origin: str | None) -> bool:
        """Whether a request with this `Origin` header may be served; if not, 403.

        Args:
            origin: The `Origin` header's value; None when absent (not a browser), which passes.

        Returns:
            True if the request may be served.
        """
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


class HostPolicy:
    """Which `Host` names a server bound to loopback answers: loopback names, plus `allowed`.

    Args:
        allowed: Host names (without port) that really point at this machine; `"*"` allows any.
    """

    def __init__(self, allowed: list[str] | None = None) -> None:
        self.allowed = frozenset(host.lower() for host in (allowed or []))
        #: Host values already judged good, so the usual request costs one set lookup.
        self.known_good: set[str] = set()
        #: Whether each local address this server answers on is a loopback one.
        self._loopback: dict[str, bool] = {}

    @classmethod
    def from_env(cls) -> HostPolicy:
        """The policy `MCP_ALLOWED_HOSTS` describes: comma-separated host names, or `*`.

        Returns:
            The policy; with the variable unset, loopback names only.
        """
        configured = os.environ.get(HOSTS_ENV_VAR, "")
        return cls([host.strip() for host in configured.split(",") if host.strip()])

    def allows(self, host: str | None, server: tuple[str, int] | None) -> bool:
        """Whether a request with this `Host`, received on the local address `server`, may be
        served; if not, 421.

        Args:
            host: The `Host` header's value; None when absent.
            server: The local address and port the request came in on (ASGI's `server`); None
                when the server does not say, which passes.

        Returns:
            True if the request may be served: always, on an address that is not loopback.
        """
        if host is None or host in self.known_good or not server:
            return True
        loopback = self._loopback.get(server[0])
        if loopback is None:
            loopback = self._loopback[server[0]] = _is_loopback(server[0])
        if not loopback:
            return True
        parts = split_host(host)
        name = parts[0] if parts is not None else None
        if name in LOOPBACK_HOSTS or name in self.allowed or (name is not None and "*" in self.allowed):
            if len(self.known_good) < 64:
                self.known_good.add(host)
            return True
        return False


#: `Host` as RFC 9110 §7.2 has it, `uri-host [":" port]`: a bracketed IPv6 literal or a name of
#: letters, digits, dots, hyphens and underscores (an IPv4 address is one), then a decimal port.
#: The rest of what RFC 3986 allows in a reg-name (percent-escapes, sub-delims) no client sends.
_HOST = re.compile(r"(?:\[(?P<literal>[0-9a-f:.]+)\]|(?P<name>[a-z0-9._-]+))(?::(?P<port>[0-9]{0,5}))?")


def split_host(host: str) -> tuple[str, int | None] | None:
    """A `Host` value read whole: its name in lower case (an IPv6 address without brackets) and
    its port (None when it names none), or None when it is not one name and one port.
    `[::1]:8000` → `("::1", 8000)`; `127.0.0.1:8000@evil.example` → None. A bare IPv6 address
    (`::1`) is taken as a name without a port.

    Args:
        host: A `Host` header's value.

    Returns:
        The name and port, or None for a value that is not one name and one port.
    """
    host = host.lower()
    if _is_ipv6(host):
        return host, None
    match = _HOST.fullmatch(host)
    if match is None or (match["literal"] is not None and not _is_ipv6(match["literal"])):
        return None
    port = int(match["port"]) if match["port"] else None
    if port is not None and port > 65535:
        return None
    return match["literal"] or match["name"], port


def _is_ipv6(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 6
    except ValueError:
        return False


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


__all__ = ["ENV_VAR", "HOSTS_ENV_VAR", "LOOPBACK_HOSTS", "HostPolicy", "OriginPolicy", "split_host"]
