"""mkdocs hook: an HTTP frame's body is highlighted as what it holds.

Pygments' HTTP lexer picks the body's lexer by the frame's `Content-Type` alone, so a JSON body
sent as `text/plain` (the frame Transports shows refused with 415) came out as plain text while
every other frame's body was coloured. Here a body whose `Content-Type` has no lexer with colours
of its own (plain text, or none named) and which parses as JSON is highlighted as JSON. Nothing
else changes: the bytes of the block are the frame as written, highlighting only colours them.

pymdownx.highlight asks Pygments for a lexer by name, and Pygments gives its own HTTP lexer before
any plugin's, so the hook hands pymdownx this one for `http` (and only for it) at config time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pymdownx.highlight
from pygments.lexer import Lexer
from pygments.lexers import JsonLexer, get_lexer_by_name
from pygments.lexers.textfmts import HttpLexer

#: Content types whose body Pygments would leave uncoloured.
PLAIN = {None, "text/plain"}


class FrameHttpLexer(HttpLexer):
    """Pygments' HTTP lexer, with a JSON body under a plain Content-Type highlighted as JSON."""

    def json_or_declared(self, match: Any) -> Iterator[tuple[int, Any, str]]:
        content = match.group()
        if getattr(self, "content_type", None) in PLAIN and _is_json(content):
            for index, token, value in JsonLexer().get_tokens_unprocessed(content):
                yield match.start() + index, token, value
        else:
            yield from HttpLexer.content_callback(self, match)

    tokens = {**HttpLexer.tokens, "content": [(r".+", json_or_declared)]}


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def lexer_by_name(alias: str, **options: Any) -> Lexer:
    if alias.lower() == "http":
        return FrameHttpLexer(**options)
    return get_lexer_by_name(alias, **options)


def on_config(config: Any, **_: Any) -> Any:
    pymdownx.highlight.get_lexer_by_name = lexer_by_name  # type: ignore[attr-defined]
    return config
