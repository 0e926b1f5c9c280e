"""Opaque cursors for the list methods (server/utilities/pagination.mdx).

A cursor is the position of the next page, signed with the list it belongs to so that a
cursor made up by the client, or one from another list, is refused with -32602 rather
than silently giving a wrong page. Clients must treat it as opaque.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any, TypeVar

from .jsonrpc import INVALID_PARAMS, MCPError

T = TypeVar("T")


def paginate(items: Sequence[T], cursor: Any, page_size: int | None, list_name: str) -> tuple[Sequence[T], str | None]:
    """One page of `items` starting at `cursor`, and the cursor of the next page if there is one."""
    start = 0 if cursor is None else _decode(cursor, list_name)
    if start > len(items):
        raise _bad_cursor(cursor)
    if page_size is None:
        return items[start:], None
    end = start + page_size
    return items[start:end], (_encode(end, list_name) if end < len(items) else None)


def _encode(offset: int, list_name: str) -> str:
    raw = f"{list_name}:{offset}:{_check(list_name, offset)}"
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode(cursor: Any, list_name: str) -> int:
    if not isinstance(cursor, str):
        raise _bad_cursor(cursor)
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        name, offset_text, check = base64.urlsafe_b64decode(padded.encode()).decode().split(":")
        offset = int(offset_text)
    except ValueError:
        raise _bad_cursor(cursor) from None
    if name != list_name or offset < 0 or check != _check(list_name, offset):
        raise _bad_cursor(cursor)
    return offset


def _check(list_name: str, offset: int) -> str:
    return hashlib.sha256(f"mcpref-cursor:{list_name}:{offset}".encode()).hexdigest()[:8]


def _bad_cursor(cursor: Any) -> MCPError:
    return MCPError(INVALID_PARAMS, f"Invalid params: unknown cursor {cursor!r}")
