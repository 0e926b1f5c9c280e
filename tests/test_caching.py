from __future__ import annotations

import pytest

from mcpref.caching import CacheHints


def test_defaults_mean_do_not_reuse() -> None:
    assert CacheHints().apply({}) == {"ttlMs": 0, "cacheScope": "private"}


def test_public_hints() -> None:
    assert CacheHints(60_000, "public").apply({"tools": []}) == {"tools": [], "ttlMs": 60_000, "cacheScope": "public"}


@pytest.mark.parametrize(
    ("ttl", "scope", "says"),
    [(-1, "private", "ttl_ms must be 0 or more"), (0, "shared", 'scope must be "public" or "private"')],
)
def test_a_refused_hint_says_what_is_allowed(ttl: int, scope: str, says: str) -> None:
    with pytest.raises(ValueError) as refused:
        CacheHints(ttl, scope)  # type: ignore[arg-type]
    assert str(refused.value) == says
