"""Transport tests run a module's own server: each HTTP test module declares its `app`, which
`base_url` serves with one real uvicorn for the whole module; `client` is a literal `MCPClient`
for it, on a fresh connection per test."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import MCPClient, running


@pytest.fixture(scope="module")
def base_url(request: pytest.FixtureRequest) -> Iterator[str]:
    with running(request.module.app) as url:
        yield url


@pytest.fixture
def client(base_url: str) -> Iterator[MCPClient]:
    with httpx.Client(base_url=base_url, timeout=10) as http:
        yield MCPClient(http)
