from __future__ import annotations

import pytest

from mcpref.origins import OriginPolicy


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),
        ("http://localhost", True),
        ("https://127.0.0.1:8443", True),
        ("http://[::1]:8000", True),
        ("https://evil.example", False),
        ("null", False),
        ("file://localhost", False),
        ("http://localhost:99999", False),
        ("http://127.0.0.1.nip.io", False),
    ],
)
def test_default_policy_allows_loopback_only(origin: str | None, allowed: bool) -> None:
    assert OriginPolicy().allows(origin) is allowed


def test_listed_origins_are_compared_without_case_or_trailing_slash() -> None:
    policy = OriginPolicy(["https://App.example/"], allow_loopback=False)
    assert policy.allows("https://app.example")
    assert not policy.allows("http://localhost")


def test_star_allows_everything() -> None:
    assert OriginPolicy(["*"]).allows("https://anything.example")
