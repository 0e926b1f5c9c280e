"""Client ID metadata documents, fetched without lending the authorization server to an attacker.

A client that has no registration names itself by an HTTPS URL, and the authorization server
fetches the document there (client-registration.mdx, Client ID Metadata Documents). Whoever sends
`client_id` chooses that URL, so each fetch is a request the server makes for a stranger:
security-considerations.mdx (Authorization Server Abuse Protection) asks servers to weigh
server-side request forgery. `MetadataDocuments` fetches:

- over `https` only, from a URL with a path and no fragment, credentials or dot segments (the
  client ID metadata document draft, §3);
- from public addresses only: the host is resolved once, every address it has must be public
  (`is_global`), and the connection goes to an address so checked, so a second DNS answer cannot
  point it inward; TLS is still verified against the host's name. Loopback and private hosts, and
  plain `http`, only for the names in `insecure_hosts` (tests on loopback);
- within one deadline for everything (resolving, connecting, every byte): a document sent a byte
  at a time holds a request `TIMEOUT` seconds at most, not that long per read;
- `MAX_BYTES` at most;
- once per URL at a time, `MAX_CONCURRENT` URLs at once and `MAX_PER_CALLER` for one caller
  (the peer address the server gives); past that, `Busy` (503) at once rather than a queue an
  attacker could fill, and one peer naming slow URLs cannot hold every slot;
- into a cache (`CACHE_SECONDS`, or the document's `Cache-Control: max-age` up to
  `CACHE_MAX_SECONDS`; `no-store` and `no-cache` are honoured), failures too for
  `FAILURE_CACHE_SECONDS`, `MAX_CACHED` URLs at most: a URL asked for again costs no request.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import re
import socket
import ssl
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

import httpx

#: One deadline for a whole fetch, in seconds: resolving, connecting, and every byte of the answer.
TIMEOUT = 5.0
#: The largest document read, in bytes (a document is a few hundred).
MAX_BYTES = 5 * 1024
#: Different URLs fetched at once, at most; one more is `Busy`.
MAX_CONCURRENT = 8
#: Different URLs one caller (a peer address) has fetched at once, at most.
MAX_PER_CALLER = 2
#: How long a document is kept without a `Cache-Control: max-age`, and the most it is kept with one.
CACHE_SECONDS = 300
CACHE_MAX_SECONDS = 3600
#: How long a URL that gave no document is answered from the cache (no new request for it).
FAILURE_CACHE_SECONDS = 30
#: URLs kept in the cache, at most; the oldest goes first.
MAX_CACHED = 256


class Refused(Exception):
    """No document from this URL; the message says why, in words a user may read."""


class Busy(Refused):
    """Too many documents are being fetched at once: try again shortly."""


@dataclass(frozen=True)
class Document:
    """A document fetched and checked: the fields the server uses."""

    client_id: str
    client_name: str
    redirect_uris: tuple[str, ...]


class MetadataDocuments:
    """Fetches, checks and caches client ID metadata documents (see the module's docstring)."""

    def __init__(
        self,
        *,
        insecure_hosts: Sequence[str] = (),
        timeout: float = TIMEOUT,
        max_bytes: int = MAX_BYTES,
        max_concurrent: int = MAX_CONCURRENT,
        max_per_caller: int = MAX_PER_CALLER,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.insecure_hosts = frozenset(host.lower() for host in insecure_hosts)
        #: How certificates are checked: httpx's default (certifi), or a context of your own CAs.
        self.verify = verify
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.max_concurrent = max_concurrent
        self.max_per_caller = max_per_caller
        #: The fetches each caller started that are still under way.
        self._started_by: dict[str, int] = {}
        #: URL → (the document, or why there is none; when that stops being true).
        self._cache: OrderedDict[str, tuple[Document | Refused, float]] = OrderedDict()
        #: The fetches under way, by URL: a second request for one waits for it.
        self._fetching: dict[str, asyncio.Future[Document]] = {}

    async def get(self, client_id: str, caller: str = "") -> Document:
        """The document `client_id` names, or `Refused` (`Busy` when too many are in flight, or
        `caller`, whoever asks, has `max_per_caller` under way)."""
        parts = _checked_url(client_id, self.insecure_hosts)
        cached = self._cache.get(client_id)
        if cached is not None and time.monotonic() < cached[1]:
            if isinstance(cached[0], Refused):
                raise Refused(str(cached[0]))  # a new one: the cached one keeps no traceback
            return cached[0]
        under_way = self._fetching.get(client_id)
        if under_way is not None:
            return await asyncio.shield(under_way)
        started = self._started_by.get(caller, 0)
        if len(self._fetching) >= self.max_concurrent or started >= self.max_per_caller:
            raise Busy("too many client metadata documents are being fetched; try again shortly")
        future: asyncio.Future[Document] = asyncio.get_running_loop().create_future()
        self._fetching[client_id] = future
        self._started_by[caller] = started + 1
        try:
            document, keep_for = await self._fetch(client_id, parts)
        except Refused as refused:
            self._remember(client_id, refused, FAILURE_CACHE_SECONDS)
            _settle(future, refused)
            raise
        except BaseException:  # cancelled, or a bug: whoever waits is refused, not left waiting
            _settle(future, Refused("the document could not be fetched"))
            raise
        finally:
            del self._fetching[client_id]
            if self._started_by[caller] == 1:
                del self._started_by[caller]
            else:
                self._started_by[caller] -= 1
        self._remember(client_id, document, keep_for)
        future.set_result(document)
        return document

    def _remember(self, client_id: str, outcome: Document | Refused, seconds: float) -> None:
        self._cache.pop(client_id, None)
        if seconds <= 0:
            return
        if len(self._cache) >= MAX_CACHED:
            self._cache.popitem(last=False)
        self._cache[client_id] = (outcome, time.monotonic() + seconds)

    async def _fetch(self, client_id: str, parts: SplitResult) -> tuple[Document, float]:
        """The document and how long to keep it, all within `timeout`."""
        try:
            async with asyncio.timeout(self.timeout):
                return await self._fetch_from(client_id, parts)
        except TimeoutError:
            raise Refused(f"the document took longer than {self.timeout:g} s") from None

    async def _fetch_from(self, client_id: str, parts: SplitResult) -> tuple[Document, float]:
        host = str(parts.hostname)
        port = parts.port or (443 if parts.scheme == "https" else 80)
        insecure = host in self.insecure_hosts
        addresses = await _addresses(host, port)
        if not insecure and not all(_public(address) for address in addresses):
            raise Refused(f"{host} has an address that is not public")
        netloc = host if ":" not in host else f"[{host}]"
        netloc += f":{parts.port}" if parts.port else ""
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        # Identity: what is read is what is counted, no compressed bomb inflating past the bound.
        headers = {"Accept": "application/json", "Accept-Encoding": "identity", "Host": netloc}
        client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False, trust_env=False, verify=self.verify)
        async with client as http:
            for address in addresses:
                shown = str(address) if address.version == 4 else f"[{address}]"
                pinned = f"{parts.scheme}://{shown}:{port}{path}"
                extensions = {"sni_hostname": host} if parts.scheme == "https" else {}
                try:
                    return await self._read(client_id, http, pinned, headers, extensions)
                except httpx.ConnectError:
                    continue  # the next address, within the same deadline
                except httpx.HTTPError as exc:
                    raise Refused(f"fetching the document failed ({type(exc).__name__})") from None
        raise Refused(f"{host} could not be reached")

    async def _read(
        self, client_id: str, http: httpx.AsyncClient, url: str, headers: dict[str, str], extensions: dict[str, Any]
    ) -> tuple[Document, float]:
        request = http.build_request("GET", url, headers=headers, extensions=extensions)
        response = await http.send(request, stream=True)
        try:
            if response.status_code != 200:
                raise Refused(f"the document's URL answered {response.status_code}")
            length = response.headers.get("content-length", "0")
            if not length.isdigit() or int(length) > self.max_bytes:
                raise Refused(f"the document is larger than {self.max_bytes} bytes")
            body = b""
            async for chunk in response.aiter_raw():
                body += chunk
                if len(body) > self.max_bytes:
                    raise Refused(f"the document is larger than {self.max_bytes} bytes")
        finally:
            await response.aclose()
        return _document(client_id, body), _keep_for(response.headers.get("cache-control", ""))


def _settle(future: asyncio.Future[Document], refused: Refused) -> None:
    future.set_exception(refused)
    future.exception()  # retrieved: nobody may be waiting for it, and asyncio would say so


def _checked_url(client_id: str, insecure_hosts: frozenset[str]) -> SplitResult:
    """The parts of a URL that may name a document, or `Refused`."""
    try:
        parts = urlsplit(client_id)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        raise Refused("the client_id is not a URL") from None
    host = parts.hostname
    if host is None or not (parts.scheme == "https" or (parts.scheme == "http" and host in insecure_hosts)):
        raise Refused("a client_id URL must use https")
    if parts.path in ("", "/") or "#" in client_id or parts.username is not None or parts.password is not None:
        raise Refused("a client_id URL has a path, and no fragment nor credentials")
    if any(segment in (".", "..") for segment in parts.path.split("/")):
        raise Refused("a client_id URL has no dot segments")
    return parts


async def _addresses(host: str, port: int) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    try:
        found = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise Refused(f"{host} could not be resolved") from None
    addresses = []
    for *_, sockaddr in found:
        try:
            address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        except ValueError:
            continue
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise Refused(f"{host} could not be resolved")
    return addresses


def _public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """A unicast address on the public internet: not loopback, private, link-local, shared,
    reserved or multicast (an IPv4 address mapped into IPv6 is judged as itself)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_global and not address.is_multicast


def _document(client_id: str, body: bytes) -> Document:
    """The document checked (client-registration.mdx): JSON naming itself exactly, with a
    `client_name` and the `redirect_uris`."""
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise Refused("the document is not JSON") from None
    if not isinstance(document, dict) or document.get("client_id") != client_id:
        raise Refused("the document does not name its own URL as client_id")
    name, uris = document.get("client_name"), document.get("redirect_uris")
    if not isinstance(name, str) or not name.strip():
        raise Refused("the document has no client_name")
    if not isinstance(uris, list) or not uris or not all(isinstance(uri, str) for uri in uris):
        raise Refused("the document has no redirect_uris")
    return Document(client_id, name, tuple(uris))


_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*\"?(\d+)\"?\s*(?:,|$)")


def _keep_for(cache_control: str) -> float:
    """How long a document may be kept, from its `Cache-Control` (RFC 9111 §5.2.2)."""
    directives = cache_control.lower()
    if re.search(r"(?:^|,)\s*(?:no-store|no-cache)\s*(?:[,=]|$)", directives):
        return 0
    max_age = _MAX_AGE.search(directives)
    return min(int(max_age[1]), CACHE_MAX_SECONDS) if max_age else CACHE_SECONDS
