"""Cursors: opaque, bound to their list, refused when forged."""

from __future__ import annotations

import pytest

from mcpref.jsonrpc import INVALID_PARAMS, MCPError
from mcpref.pagination import paginate

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
