"""Sealed tokens: one format, one key per purpose, claims and expiry checked, one spelling."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable

import pytest

from mcpref.sealing import (
    EXPIRES,
    ISSUER,
    MALFORMED,
    PRINCIPAL,
    SIGNATURE,
    Refused,
    Sealer,
    b64url_decode,
    b64url_encode,
)

KEY = b"k" * 32


def sealed(sealer: Sealer, now: float = 1000, **claims: object) -> str:
    return sealer.seal({ISSUER: "desk", PRINCIPAL: "alice", **claims, EXPIRES: sealer.expiry(now), "s": [1, "x"]})


def refusal(sealer: Sealer, token: object, now: float = 1000, **claims: object) -> str:
    with pytest.raises(Refused) as refused:
        sealer.open(token, claims, now=now)
    assert isinstance(refused.value, ValueError) and str(refused.value) == refused.value.reason
    return refused.value.reason


def test_a_sealed_payload_comes_back_whole_once_its_claims_check() -> None:
    sealer = Sealer("test", KEY)
    token = sealed(sealer)
    opened = sealer.open(token, {ISSUER: "desk", PRINCIPAL: "alice"}, now=1000)
    assert opened == {"i": "desk", "p": "alice", "exp": 1600, "s": [1, "x"]}
    assert list(opened) == ["i", "p", "exp", "s"]  # in the order the caller laid it out


def test_the_format_is_fixed_so_every_instance_and_version_reads_it() -> None:
    """A known answer: instances of one deployment, old and new, must open each other's tokens.
    base64url(payload) "." base64url(HMAC-SHA256(HMAC-SHA256(key, "mcpref-seal:" purpose), payload))."""
    token = Sealer("test", b"key").seal({"p": None, "exp": 1})
    assert token == "eyJwIjpudWxsLCJleHAiOjF9.iPRhE1fMhvp0QwbzFsamTyviCE4Eh47Mj7ooploC8sc"
    body, _ = token.split(".")
    assert b64url_decode(body) == b'{"p":null,"exp":1}'  # compact JSON


def test_client_text_with_a_lone_surrogate_still_seals() -> None:
    sealer = Sealer("test", KEY)
    token = sealer.seal({"s": "\ud800", EXPIRES: sealer.expiry(1000)})
    assert sealer.open(token, {}, now=1000)["s"] == "\ud800"


def test_a_payload_without_its_expiry_is_not_sealed() -> None:
    with pytest.raises(ValueError) as caught:
        Sealer("test", KEY).seal({PRINCIPAL: None})
    assert str(caught.value) == "a sealed payload holds its expiry: add exp=sealer.expiry()"


def test_each_expected_claim_is_checked_and_the_first_that_differs_is_named() -> None:
    sealer = Sealer("test", KEY)
    token = sealed(sealer)
    assert refusal(sealer, token, i="tides", p="alice") == ISSUER
    assert refusal(sealer, token, i="desk", p="bob") == PRINCIPAL
    assert refusal(sealer, token, i="tides", p="bob") == ISSUER
    assert refusal(sealer, token, p="bob", i="tides") == PRINCIPAL
    assert refusal(sealer, token, i="desk", p=None) == PRINCIPAL


def test_a_claim_the_payload_does_not_hold_is_refused_even_when_none_is_expected() -> None:
    sealer = Sealer("test", KEY)
    token = sealer.seal({"s": 1, EXPIRES: sealer.expiry(1000)})
    assert refusal(sealer, token, p=None) == PRINCIPAL


def test_a_token_is_good_until_its_expiry_second_and_refused_after() -> None:
    sealer = Sealer("test", KEY, ttl_seconds=10)
    assert sealer.expiry(1000.9) == 1010
    token = sealed(sealer, now=1000)
    assert sealer.open(token, {}, now=1010)["s"] == [1, "x"]
    assert refusal(sealer, token, now=1010.5) == EXPIRES
    assert refusal(sealer, token, now=1010.5, p="bob") == PRINCIPAL  # the claims come first


def test_without_a_clock_the_time_is_now() -> None:
    alive, dead = Sealer("test", KEY), Sealer("test", KEY, ttl_seconds=-2)
    assert alive.ttl_seconds == 600
    assert alive.open(alive.seal({EXPIRES: alive.expiry()}), {}) == {EXPIRES: alive.expiry()}
    assert refusal(dead, dead.seal({EXPIRES: dead.expiry()}), now=None) == EXPIRES


def test_a_token_sealed_for_one_purpose_never_opens_for_another() -> None:
    """The key is derived from the deployment key and the purpose: a handle is no requestState."""
    token = sealed(Sealer("handle:draft", KEY))
    assert Sealer("handle:draft", KEY).purpose == "handle:draft"
    assert refusal(Sealer("requestState", KEY), token) == SIGNATURE
    assert refusal(Sealer("handle:draft", b"other key"), token) == SIGNATURE


def test_a_tampered_payload_is_refused_before_it_is_read() -> None:
    sealer = Sealer("test", KEY)
    body, mac = sealed(sealer).split(".")
    for payload in (b'{"i":"desk","p":"mallory","exp":1600,"s":[1,"x"]}', b"not json"):
        assert refusal(sealer, f"{b64url_encode(payload)}.{mac}") == SIGNATURE


@pytest.mark.parametrize("token", [None, 12, "", "abc", "a.b.c", "QQ.A", "QQ==.QQ", "a+b.QQ", "Zm9v.QQ="])
def test_what_is_no_token_is_malformed(token: object) -> None:
    assert refusal(Sealer("test", KEY), token) == MALFORMED


@pytest.mark.parametrize("token", [".", "Zm9v."])
def test_an_empty_part_is_a_signature_that_does_not_match(token: str) -> None:
    assert refusal(Sealer("test", KEY), token) == SIGNATURE


#: Other spellings of a token's part, each of which must be refused.
SPELLINGS: list[Callable[[str], str]] = [
    lambda part: part + "=",  # appended padding
    lambda part: part.replace("-", "+").replace("_", "/"),  # the standard alphabet
    lambda part: part + "A",  # an impossible length
    lambda part: part[:-1] + chr(ord(part[-1]) + 1),  # same bytes, other trailing bits (mostly)
    lambda part: part + "\n",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_a_token_has_one_spelling(spelling: Callable[[str], str]) -> None:
    sealer = Sealer("test", KEY)
    token = sealed(sealer)
    body, mac = token.split(".")
    for variant in (f"{spelling(body)}.{mac}", f"{body}.{spelling(mac)}"):
        if variant != token:
            assert refusal(sealer, variant) in (MALFORMED, SIGNATURE)


def test_the_key_comes_from_mcp_state_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_STATE_KEY", "one deployment")
    token = sealed(Sealer("test"))
    assert Sealer("test").open(token, {}, now=1000)["s"] == [1, "x"]
    assert Sealer("test", b"one deployment").open(token, {}, now=1000)["s"] == [1, "x"]
    assert refusal(Sealer("test", b"an explicit key wins"), token) == SIGNATURE


@pytest.mark.parametrize("configured", [None, ""])
def test_without_mcp_state_key_each_sealer_makes_up_its_own_key(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, configured: str | None
) -> None:
    if configured is None:
        monkeypatch.delenv("MCP_STATE_KEY", raising=False)
    else:
        monkeypatch.setenv("MCP_STATE_KEY", configured)
    with caplog.at_level(logging.INFO, logger="mcpref.sealing"):
        token = sealed(Sealer("requestState"))
    assert refusal(Sealer("requestState"), token) == SIGNATURE
    assert [record.getMessage() for record in caplog.records][0] == (
        "MCP_STATE_KEY is not set: requestState is sealed with a per-process key"
    )


def test_an_empty_key_is_refused_rather_than_used() -> None:
    """HMAC takes an empty key, and then anyone can seal: a configuration mistake, said at once."""
    with pytest.raises(ValueError) as caught:
        Sealer("requestState", b"")
    assert str(caught.value) == "an empty key seals nothing: anyone could sign with it"


def test_base64url_round_trips_only_its_own_spelling() -> None:
    for data in [bytes(range(size)) for size in range(20)] + [bytes(range(256))]:
        encoded = b64url_encode(data)
        assert b64url_decode(encoded) == data and "=" not in encoded
    assert b64url_encode(b"\xfb\xff") == "-_8"  # the URL alphabet
    assert b64url_encode(b"\x00\x00\x17") == "AAAX"  # only padding is cut off the end
    for bad in ("QQ==", "QR", "a+b/", "ab c", "A", "QQ\n", "Zm9v!", "-_9", "QQ==QQ", "é", "QQ\x00"):
        with pytest.raises(ValueError):
            b64url_decode(bad)
    with pytest.raises(ValueError) as caught:
        b64url_decode("QR")
    assert str(caught.value) == "not the canonical base64url spelling"


def test_a_payload_is_compact_json() -> None:
    sealer = Sealer("test", KEY)
    body = sealed(sealer).split(".")[0]
    assert json.loads(b64url_decode(body)) == {"i": "desk", "p": "alice", "exp": 1600, "s": [1, "x"]}
    assert b" " not in b64url_decode(body)
