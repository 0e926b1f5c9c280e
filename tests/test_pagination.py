"""Cursors: opaque, bound to their list, refused when forged."""

from __future__ import annotations

import hashlib

import pytest

from mcpref.jsonrpc import INVALID_PARAMS, MCPError
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
