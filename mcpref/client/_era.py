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
- On stdio, a probe that gets no answer in time also means legacy.

`Negotiation` does this for one `Client`, on its first request: it probes with `server/discover`
(or goes straight to the legacy `initialize` handshake), and keeps what the server said about
itself. It sends through a callable the client gives it, so it needs no client to import.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from ..legacy import LEGACY_VERSIONS
from ..meta import MODERN_VERSIONS, SERVER_INFO_KEY
from ._errors import MODERN_ERROR_CODES, MCPClientError, TransportError, UnsupportedProtocolVersion
from ._transport import Transport

Era = Literal["modern", "legacy"]

#: What `Client(version=...)` accepts besides a version string.
AUTO = "auto"
LEGACY = "legacy"

#: HTTP statuses after which a body without a modern JSON-RPC error means "legacy server".
FALLBACK_STATUSES = frozenset({400, 404, 405})


@dataclass(frozen=True)
class EraInfo:
    """The era a server speaks and the version to use with it
    ([`basic/versioning.mdx`](https://modelcontextprotocol.io/specification/2026-07-28/basic/versioning)).

    Args:
        era: `"modern"` or `"legacy"`.
        version: The version to send: a modern one for `_meta`, or the legacy one to ask for in
            `initialize`.
    """

    era: Era
    version: str


class EraCache:
    """Detected eras by origin (`scheme://host:port`). One module-level instance is the default."""

    def __init__(self) -> None:
        self._eras: dict[str, EraInfo] = {}

    def get(self, origin: str) -> EraInfo | None:
        """The era remembered for `origin`.

        Args:
            origin: `scheme://host:port`, as `origin_of` spells it.

        Returns:
            The era, or None if none is remembered.
        """
        return self._eras.get(origin)

    def set(self, origin: str, info: EraInfo) -> None:
        """Remember the era of `origin`.

        Args:
            origin: `scheme://host:port`.
            info: What was detected.
        """
        self._eras[origin] = info

    def forget(self, origin: str) -> None:
        """Forget `origin`, so the next client probes it again.

        Args:
            origin: `scheme://host:port`; one not remembered is ignored.
        """
        self._eras.pop(origin, None)

    def clear(self) -> None:
        """Forget every origin."""
        self._eras.clear()


#: Shared by every `Client` that is not given its own.
DEFAULT_ERA_CACHE = EraCache()
"""The era cache every `Client` shares unless given its own: an origin is probed once per process."""


def origin_of(url: str | httpx.URL) -> str:
    """An origin, with the scheme's default port spelt out, so equal origins compare equal.

    Args:
        url: Any URL.

    Returns:
        `scheme://host:port`, such as `https://example.com:443`.
    """
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


def check_version(version: str) -> None:
    """Refuse a `Client(version=...)` this client cannot speak: a legacy version it does not know."""
    if version not in (AUTO, LEGACY) and kind_of(version) == "legacy" and version not in LEGACY_VERSIONS:
        raise ValueError(f"legacy version {version!r} is not one this client speaks: {', '.join(LEGACY_VERSIONS)}")


#: Sends one request in a modern version (`None`: a legacy body) and returns its result: the
#: client's `_exchange`, without the era logic that would loop back here.
Exchange = Callable[[str, dict[str, Any], str | None], Awaitable[dict[str, Any]]]
#: Receives a `DiscoverResult` the probe got, and the era it chose, so the client can reuse it.
OnDiscover = Callable[[dict[str, Any], EraInfo], None]


class Negotiation:
    """The era and version one client speaks with its server, found on first use, and what the
    server said about itself (from its `DiscoverResult` or legacy `InitializeResult`).

    `version` is `Client(version=...)`: `"auto"` detects and remembers the era in `era_cache`
    (per HTTP `origin`; a stdio server has none), `"legacy"` hand-shakes with our newest legacy
    version, and a version string pins it (a pre-2026 one through the handshake).
    """

    def __init__(
        self,
        transport: Transport,
        exchange: Exchange,
        on_discover: OnDiscover,
        *,
        version: str,
        client_info: Mapping[str, Any],
        era_cache: EraCache,
        origin: str | None,
    ) -> None:
        self.transport = transport
        self._exchange = exchange
        self._on_discover = on_discover
        self.version = version
        self.client_info = client_info
        self.era_cache = era_cache
        self.origin = origin
        #: The era and version in use, once known.
        self.era: EraInfo | None = None
        self.server_info: dict[str, Any] | None = None
        self.server_capabilities: dict[str, Any] | None = None
        self.instructions: str | None = None
        #: The legacy handshake's answer: what `discover()` returns for a legacy server.
        self.initialize_result: dict[str, Any] = {}
        self._lock = asyncio.Lock()
        self._generation = transport.generation

    async def ready(self) -> EraInfo:
        """The era and version to speak, negotiated on first use and again after the server restarts."""
        await self.transport.connect()
        if self.era is not None and self._generation == self.transport.generation:
            return self.era
        async with self._lock:
            if self.era is not None and self._generation == self.transport.generation:
                return self.era
            # A restarted stdio server remembers nothing: negotiate (and hand-shake) again.
            self.era, self.transport.legacy_version = None, None
            self._generation = self.transport.generation
            if self.version == LEGACY:
                await self._initialize(LEGACY_VERSIONS[0])
            elif self.version != AUTO:
                if kind_of(self.version) == "legacy":
                    await self._initialize(self.version)
                else:
                    self.era = EraInfo("modern", self.version)
            else:
                await self._detect()
            assert self.era is not None
            return self.era

    async def initialize_again(self, version: str) -> None:
        """Start a new legacy session: a 2025-11-25 server that ended ours answers 404, and the
        client MUST initialize anew."""
        async with self._lock:
            await self._initialize(version)

    def retry_version(self, refused: UnsupportedProtocolVersion) -> str | None:
        """After a -32022, the version to resend with: in `auto` mode a mutual one from the error's
        `supported` (even the one just refused: the spec asks for a retry), which becomes the era."""
        better = mutual_version(refused.supported)
        if self.version != AUTO or better is None:
            return None
        self._set_era(EraInfo("modern", better))
        return better

    # -- detection -------------------------------------------------------------------------

    async def _detect(self) -> None:
        cached = self.era_cache.get(self.origin) if self.origin is not None else None
        if cached is not None and cached.era == "modern":
            self.era = cached
            return
        if cached is not None:
            assert self.origin is not None
            try:
                await self._initialize(cached.version)
                return
            except MCPClientError as error:
                if not _is_modern(error):
                    raise
                # The server became modern since we last looked: forget and probe again.
                self.era_cache.forget(self.origin)
        await self._probe()

    async def _probe(self) -> None:
        """`server/discover` with our preferred version: a `DiscoverResult` (one that lists
        `supportedVersions`) or a modern error means modern (and never a fallback), anything
        else means legacy."""
        version = MODERN_VERSIONS[0]
        for attempt in range(2):
            try:
                result = await self._exchange("server/discover", {}, version)
            except UnsupportedProtocolVersion as error:
                # Retry once with the mutual version, even the one just refused: the spec asks
                # for a retry with a version from `supported`, and a second refusal ends it.
                better = mutual_version(error.supported)
                if better is None or attempt == 1:
                    raise UnsupportedProtocolVersion(
                        f"the server speaks {', '.join(error.supported) or 'no listed version'}; "
                        f"this client speaks {', '.join(MODERN_VERSIONS)}, and {version} was refused "
                        "(the client will not fall back to initialize, since the server answered as a modern one)",
                        code=error.code,
                        data=error.data,
                    ) from error
                version = better
                continue
            except MCPClientError as error:
                # On stdio a probe that gets no answer in time also means legacy (stdio.mdx).
                timed_out = isinstance(error, TransportError) and error.timed_out and not self.transport.uses_headers
                if _is_modern(error) or not (_means_legacy(error) or timed_out):
                    raise
                await self._initialize(LEGACY_VERSIONS[0])
                return
            supported = result.get("supportedVersions")
            if not isinstance(supported, list):
                # Not a DiscoverResult: a legacy server that answers any method it does not
                # know with an empty result. Only a DiscoverResult or a modern error means modern.
                await self._initialize(LEGACY_VERSIONS[0])
                return
            self.server_info = (result.get("_meta") or {}).get(SERVER_INFO_KEY)
            self.server_capabilities = result.get("capabilities")
            self.instructions = result.get("instructions")
            chosen = mutual_version(supported)
            if chosen is None:
                raise UnsupportedProtocolVersion(
                    f"the server lists {supported!r}; this client speaks {', '.join(MODERN_VERSIONS)}",
                    data={"supported": supported, "requested": version},
                )
            era = EraInfo("modern", chosen)
            self._set_era(era)
            if chosen == version:
                self._on_discover(result, era)
            return
        raise AssertionError("unreachable")

    async def _initialize(self, version: str) -> None:
        """The legacy handshake: `initialize`, then `notifications/initialized`.

        It declares no capabilities: a 2025-11-25 server would ask for elicitation, sampling or
        roots with requests of its own on a stream, which this client does not answer (MRTR is
        the 2026-07-28 way, and the only one it speaks)."""
        params = {"protocolVersion": version, "capabilities": {}, "clientInfo": self.client_info}
        result = await self._exchange("initialize", params, None)
        negotiated = result.get("protocolVersion")
        if negotiated not in LEGACY_VERSIONS:
            raise UnsupportedProtocolVersion(
                f"initialize chose protocol version {negotiated!r}, which this client does not speak",
                data={"supported": [negotiated], "requested": version},
            )
        self.transport.legacy_version = negotiated
        await self.transport.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.initialize_result = result
        self.server_info = result.get("serverInfo")
        self.server_capabilities = result.get("capabilities")
        self.instructions = result.get("instructions")
        self._set_era(EraInfo("legacy", negotiated))

    def _set_era(self, era: EraInfo) -> None:
        self.era = era
        if self.version == AUTO and self.origin is not None:
            self.era_cache.set(self.origin, era)


def _is_modern(error: MCPClientError) -> bool:
    return error.code in MODERN_ERROR_CODES


def _means_legacy(error: MCPClientError) -> bool:
    """A JSON-RPC error that is not a modern one, or a 400/404/405 whose body is not MCP at all.
    Other statuses (401, 403, 5xx) and network failures are real failures, not an era signal."""
    if error.status_code is not None and error.status_code not in FALLBACK_STATUSES:
        return False
    return error.code is not None or error.status_code is not None
