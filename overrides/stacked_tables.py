"""mkdocs hook: on a page whose front matter says `stacked_tables: true`, each table reads on a
phone as a stack of rows, each cell under its column's name, instead of a grid wider than the
screen whose right-hand columns are off it with no sign (docs/assets/reference.css draws it).

At build time each body cell gets its column's heading as `data-label`, and the table a wrapper
`<div class="mcpref-stacked">`; the table itself keeps no class, so Material styles it as any other
at desktop width, and the page's Markdown stays plain Markdown.
"""

from __future__ import annotations

import html
import re
from typing import Any

_TABLE = re.compile(r"<table>\s*<thead>(?P<head>.*?)</thead>(?P<body>.*?)</table>", re.DOTALL)
_HEADING = re.compile(r"<th\b[^>]*>(?P<text>.*?)</th>", re.DOTALL)
_ROW = re.compile(r"(?P<open><tr\b[^>]*>)(?P<cells>.*?)</tr>", re.DOTALL)
_CELL = re.compile(r"<td\b")
_TAG = re.compile(r"<[^>]+>")


def labels(head: str) -> list[str]:
    """Each column's heading as plain text."""
    return [html.unescape(_TAG.sub("", found["text"])).strip() for found in _HEADING.finditer(head)]


def stacked(page_html: str) -> str:
    def table(match: re.Match[str]) -> str:
        names = labels(match["head"])

        def row(found: re.Match[str]) -> str:
            column = iter(names)
            cells = _CELL.sub(lambda _: f'<td data-label="{html.escape(next(column, ""), quote=True)}"', found["cells"])
            return f"{found['open']}{cells}</tr>"

        body = _ROW.sub(row, match["body"])
        return f'<div class="mcpref-stacked"><table><thead>{match["head"]}</thead>{body}</table></div>'

    return _TABLE.sub(table, page_html)


def on_page_content(page_html: str, page: Any, **_: Any) -> str:
    return stacked(page_html) if page.meta.get("stacked_tables") else page_html
