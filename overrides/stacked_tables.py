"""mkdocs hook: each table reads on a phone as a stack of rows, each cell under its column's name,
instead of a grid wider than the screen whose right-hand columns are off it with no sign
(docs/assets/reference.css draws it). A page whose front matter says `stacked_tables: false` keeps
its tables as grids that scroll sideways. A table put in `<div class="mcpref-stack-always"
markdown>` is stacked at desktop width too (reference.css): for one whose columns cannot all fit
the page's column at 1280 px.

At build time each body cell gets its column's heading as `data-label`, and the table a wrapper
`<div class="mcpref-stacked">`; the table itself keeps no class, so Material styles it as any other
at desktop width, and the page's Markdown stays plain Markdown. Inline code in any table that has
a space in it (a command, `Callable[[Callable[..., Any]], ...]`) is marked `mcpref-wraps`: at any
width it may break at its spaces, while a name without one (`x-mcp-header`) stays whole.
mkdocstrings' Parameters/Returns/Raises tables are stacked the same way, so an API page's cell
reads under its column's name ("Default") as any other table's does, by one set of rules.
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


_ANY_TABLE = re.compile(r"<table>.*?</table>", re.DOTALL)
#: Inline code, not a code block's (`<pre><span></span><code>`), and what it shows.
_INLINE_CODE = re.compile(r"(?<!<span></span>)<code>(?P<inner>.*?)</code>", re.DOTALL)


def wrappable(page_html: str) -> str:
    """Each table's inline code with a space in it, marked `mcpref-wraps`."""

    def mark(match: re.Match[str]) -> str:
        if not any(c.isspace() for c in _TAG.sub("", match["inner"])):
            return match.group(0)
        return f'<code class="mcpref-wraps">{match["inner"]}</code>'

    return _ANY_TABLE.sub(lambda table: _INLINE_CODE.sub(mark, table.group(0)), page_html)


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
    page_html = wrappable(page_html)
    return stacked(page_html) if page.meta.get("stacked_tables", True) else page_html
