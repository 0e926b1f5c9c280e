from __future__ import annotations

import pytest

from mcpref.caching import CacheHints


def test_defaults_mean_do_not_reuse() -> None:
    assert CacheHints().apply({}) == {"ttlMs": 0, "cacheScope": "private"}


def test_public_hints() -> None:
    assert CacheHints(60_000, "public").apply({"tools": []}) == {"tools": [], "ttlMs": 60_000, "cacheScope": "public"}


@pytest.mark.parametrize(("ttl", "scope"), [(-1, "private"), (0, "shared")])
def test_invalid_hints_are_refused(ttl: int, scope: str) -> None:
    with pytest.raises(ValueError):
        CacheHints(ttl, scope)  # type: ignore[arg-type]
