"""Cache hints on paginated lists (server/utilities/caching.mdx §Interaction with Pagination):
every page of one list carries the same cacheScope, so a private first page never turns public."""

from __future__ import annotations

import pytest

from mcpref import CacheHints, Server
from tests.test_server import call


@pytest.mark.parametrize("scope", ["private", "public"])
def test_every_page_of_a_list_has_the_same_cache_scope(scope: str) -> None:
    server = Server("unit", "1", page_size=1, cache_for={"tools/list": CacheHints(60_000, scope)})
    for name in ("a", "b", "c"):
        server.tool(name=name)(lambda: "")
    scopes, cursor = [], None
    while True:
        page = call(server, "tools/list", {} if cursor is None else {"cursor": cursor})
        scopes.append(page["cacheScope"])
        cursor = page.get("nextCursor")
        if cursor is None:
            break
    assert scopes == [scope] * 3
