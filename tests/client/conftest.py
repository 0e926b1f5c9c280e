"""Client tests run the client against our real server under a real uvicorn on loopback.

`Traffic` records each HTTP request the client puts on the wire (an httpx event hook): the
tests observe real traffic, nothing is stubbed. A test module declares its server's `app`; the
`url` fixture serves it once for the module.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

import httpx
import pytest

from mcpref.client import Client, EraCache
from mcpref.client._http import default_ssl_context
from tests.conftest import running


class Traffic:
    """The requests a client sent, in order."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    async def hook(self, request: httpx.Request) -> None:
        self.requests.append(request)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [json.loads(request.content) for request in self.requests if request.content]

    @property
    def methods(self) -> list[str]:
        return [body.get("method", "(response)") for body in self.bodies]

    def clear(self) -> None:
        self.requests.clear()


@asynccontextmanager
async def connect(url: str, **options: Any) -> AsyncIterator[tuple[Client, Traffic]]:
    """A `Client` for `url` whose traffic is recorded; a fresh era cache unless one is given."""
    traffic = Traffic()
    options.setdefault("era_cache", EraCache())
    headers = options.pop("headers", None)
    extra_hooks = options.pop("hooks", [])
    hooks = {"request": [traffic.hook, *extra_hooks]}
    http = httpx.AsyncClient(headers=headers, timeout=10, event_hooks=hooks, verify=default_ssl_context())
    async with http, Client(url, http=http, **options) as client:
        yield client, traffic


@contextmanager
def endpoint(app: Any) -> Iterator[str]:
    """The MCP endpoint URL of `app` served by a real uvicorn."""
    with running(app) as base:
        yield base + "/mcp"


@pytest.fixture(scope="module")
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The MCP endpoint of the test module's own `app`, served by one real uvicorn for the module."""
    with endpoint(request.module.app) as url:
        yield url


def authorization_server_metadata(base: str) -> dict[str, Any]:
    """RFC 8414 metadata for a stand-in authorization server at `base`: code flow with PKCE S256,
    dynamic registration, public clients."""
    return {
        "issuer": base,
        "authorization_endpoint": f"{base}/authorize",
        "token_endpoint": f"{base}/token",
        "registration_endpoint": f"{base}/register",
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }
