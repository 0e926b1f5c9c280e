"""Cursors: opaque, bound to their list, one spelling, refused when forged."""

from __future__ import annotations

import hashlib
import string

import pytest

from mcpref.jsonrpc import INVALID_PARAMS, MCPError
from mcpref.mrtr import StateSealer
from mcpref.pagination import paginate
from mcpref.sealing import b64url_encode

ITEMS = list(range(5))


def test_without_a_page_size_everything_comes_at_once() -> None:
    assert paginate(ITEMS, None, None, "tools/list") == (ITEMS, None)


def test_pages_walk_the_whole_list() -> None:
    seen, cursor = [], None
    while True:
        page, cursor = paginate(ITEMS, cursor, 2, "tools/list")
        seen += page
        if cursor is None:
            break
    assert seen == ITEMS


@pytest.mark.parametrize("cursor", ["", "garbage", "dG9vbHMvbGlzdDoyOmJhZA", 3, {"offset": 2}])
def test_forged_cursors_are_invalid_params(cursor: object) -> None:
    with pytest.raises(MCPError) as caught:
        paginate(ITEMS, cursor, 2, "tools/list")
    assert caught.value.code == INVALID_PARAMS


def test_a_cursor_from_another_list_is_refused() -> None:
    _, cursor = paginate(ITEMS, None, 2, "prompts/list")
    with pytest.raises(MCPError):
        paginate(ITEMS, cursor, 2, "tools/list")


def test_each_page_holds_page_size_items_and_the_last_has_no_cursor() -> None:
    first, cursor = paginate(ITEMS, None, 2, "tools/list")
    second, cursor2 = paginate(ITEMS, cursor, 2, "tools/list")
    last, end = paginate(ITEMS, cursor2, 2, "tools/list")
    assert (first, second, last, end) == ([0, 1], [2, 3], [4], None)
    assert paginate(ITEMS[:4], cursor, 2, "tools/list") == ([2, 3], None)


def test_a_cursor_is_url_safe_text_without_padding() -> None:
    for size in range(1, 5):
        _, cursor = paginate(list(range(100)), None, size, "resources/templates/list")
        assert cursor and "=" not in cursor and "+" not in cursor and "/" not in cursor


def test_a_cursor_beyond_the_list_is_refused_but_one_at_its_end_is_an_empty_page() -> None:
    _, at_five = paginate(list(range(10)), None, 5, "tools/list")
    assert paginate(ITEMS, at_five, 2, "tools/list") == ([], None)
    _, at_six = paginate(list(range(10)), None, 6, "tools/list")
    with pytest.raises(MCPError) as caught:
        paginate(ITEMS, at_six, 2, "tools/list")
    assert caught.value.message == f"Invalid params: unknown cursor {at_six!r}"


@pytest.mark.parametrize("size", [1, 2, 3, 7])
def test_every_cursor_of_a_long_walk_reads_back(size: int) -> None:
    """Cursors have every length modulo 4: each is unpadded and padded again when read."""
    items, seen, cursor = list(range(60)), [], None
    while True:
        page, cursor = paginate(items, cursor, size, "tools/list")
        seen += page
        if cursor is None:
            break
    assert seen == items


@pytest.mark.parametrize("cursor", [3, "garbage", "dG9vbHMvbGlzdDoyOmJhZA"])
def test_a_refused_cursor_is_quoted_in_the_error(cursor: object) -> None:
    with pytest.raises(MCPError) as caught:
        paginate(ITEMS, cursor, 2, "tools/list")
    assert caught.value.message == f"Invalid params: unknown cursor {cursor!r}"


def test_a_negative_offset_is_refused_even_with_a_well_formed_check() -> None:
    """The check is no secret (a client can compute it); the offset itself is bounded too."""
    check = hashlib.sha256(b"mcpref-cursor:tools/list:-1").hexdigest()[:8]
    forged = b64url_encode(f"tools/list:-1:{check}".encode())
    with pytest.raises(MCPError) as caught:
        paginate(ITEMS, forged, 2, "tools/list")
    assert caught.value.code == INVALID_PARAMS


def cursor_for(text: str) -> str:
    """A cursor for `text` with the check a client could compute: the check is no secret."""
    name, offset = text.rsplit(":", 1)
    check = hashlib.sha256(f"mcpref-cursor:{name}:{int(offset)}".encode()).hexdigest()[:8]
    return b64url_encode(f"{text}:{check}".encode())


def test_the_cursor_is_the_list_and_the_offset_with_a_check() -> None:
    """The wire form the pages show (docs/guides/build-a-server.md): stable across runs and instances."""
    _, cursor = paginate(list(range(9)), None, 3, "tools/list")
    assert cursor == "dG9vbHMvbGlzdDozOjAyN2Y5NDQ4" == cursor_for("tools/list:3")


@pytest.mark.parametrize("offset", ["+2", "02", " 2", "2_0", "\u0662", "-0"])
def test_an_offset_has_one_spelling(offset: str) -> None:
    with pytest.raises(MCPError) as caught:
        paginate(ITEMS, cursor_for(f"tools/list:{offset}"), 2, "tools/list")
    assert caught.value.code == INVALID_PARAMS
    assert paginate(ITEMS, cursor_for("tools/list:2"), 2, "tools/list") == ([2, 3], cursor_for("tools/list:4"))


def test_a_cursor_has_one_spelling() -> None:
    """Read in the one base64url spelling sealed tokens use (mcpref/sealing.py): no padding, no
    stray characters, no other trailing bits."""
    good = cursor_for("tools/list:20")  # 30 characters: the last one carries 4 unused bits
    alphabet = string.ascii_uppercase + string.ascii_lowercase + string.digits + "-_"
    other_bits = good[:-1] + alphabet[alphabet.index(good[-1]) + 1]
    assert paginate(list(range(30)), good, 2, "tools/list")[0] == [20, 21]
    for variant in (good + "=", good + "==", good[:4] + "!" + good[4:], good + "\n", other_bits):
        with pytest.raises(MCPError):
            paginate(list(range(30)), variant, 2, "tools/list")


def test_a_sealed_token_is_no_cursor() -> None:
    state = StateSealer(b"k" * 32).seal({"offset": 2}, method="tools/list", digest="d", principal=None)
    with pytest.raises(MCPError) as caught:
        paginate(ITEMS, state, 2, "tools/list")
    assert caught.value.message == f"Invalid params: unknown cursor {state!r}"
