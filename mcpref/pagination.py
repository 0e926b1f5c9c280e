"""Opaque cursors for the list methods (server/utilities/pagination.mdx).

A cursor is the position of the next page, checked against the list it belongs to so that a
cursor made up by the client, or one from another list, is refused with -32602 rather than
silently giving a wrong page. Clients must treat it as opaque.

A cursor is not sealed (sealing.py): it holds no secret and binds no one, since it only points
into the caller's own list, where paging would lead anyway. So it needs no key, reads the same on
every instance and across restarts and key rotations, and does not vary from run to run (the
pages show real cursors). It is written in the one base64url spelling sealed tokens use, and read
in that spelling only; a sealed token, which holds a `.`, is never a cursor, nor a cursor a token.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, TypeVar

from .jsonrpc import INVALID_PARAMS, MCPError
from .sealing import b64url_decode, b64url_encode

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
    return b64url_encode(f"{list_name}:{offset}:{_check(list_name, offset)}".encode())


def _decode(cursor: Any, list_name: str) -> int:
    if not isinstance(cursor, str):
        raise _bad_cursor(cursor)
    try:
        name, offset_text, check = b64url_decode(cursor).decode().split(":")
        offset = int(offset_text)
    except ValueError:
        raise _bad_cursor(cursor) from None
    # One position, one spelling: "+3", "03" or "٣" are no offset this module writes.
    if name != list_name or offset_text != str(offset) or offset < 0 or check != _check(list_name, offset):
        raise _bad_cursor(cursor)
    return offset


def _check(list_name: str, offset: int) -> str:
    return hashlib.sha256(f"mcpref-cursor:{list_name}:{offset}".encode()).hexdigest()[:8]


def _bad_cursor(cursor: Any) -> MCPError:
    return MCPError(INVALID_PARAMS, f"Invalid params: unknown cursor {cursor!r}")
