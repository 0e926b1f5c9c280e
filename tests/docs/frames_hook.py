"""mkdocs hook: folds the boilerplate of each frame in the built page (see `tests.docs.folds`).

Frames, commands, code and outputs (```http, ```sse, ```json, ```console, ```python, ```text) are
also kept out of the search index, so that a result's preview is the prose around a frame rather
than its JSON.

A fold is presentation only: the lines stay in the page's `<code>`, whole and in order, so the text
of the block (what the try-it console sends, what a test reads) is the frame as written; they are
hidden by docs/assets/frames.css behind a button that says what they hold, and docs/assets/frames.js
opens them in place. Copying a block copies every line, folded or not (frames.css shows the folded
lines while Material copies).

An SSE stream (`tests.docs.streams`) is shown the same way: its wire lines stay in the `<code>`,
hidden but for Copy, and each event is shown after the block's `<pre>` as a block of its own, its
`event:` line as a label and its data pretty-printed and highlighted (folded like any JSON).
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `mkdocs serve` runs from its own script

from pygments import highlight  # noqa: E402
from pygments.formatters import HtmlFormatter  # noqa: E402
from pygments.lexers import JsonLexer  # noqa: E402

from tests.docs import streams  # noqa: E402
from tests.docs.folds import Fold, folds  # noqa: E402

_BLOCK = re.compile(
    r'(?P<open><div class="language-(?:http|json|sse|console|text|python) highlight">'
    r'(?:<span class="filename">.*?</span>)?'
    r"<pre><span></span><code>)(?P<code>.*?)(?P<close></code></pre>)",
    re.DOTALL,
)
_TAG = re.compile(r"<[^>]+>")
_INDENT = re.compile(r"^(?P<tags>(?:<span[^>]*>)?)(?P<spaces> *)")


def plain(code_html: str) -> str:
    """The text a block's highlighted HTML shows."""
    return html.unescape(_TAG.sub("", code_html))


def folded(code_html: str) -> str:
    """The block's HTML with each fold's lines wrapped (Pygments closes its spans at each line end,
    so a line of HTML is a line of text)."""
    lines = code_html.split("\n")
    for fold in sorted(folds(plain(code_html)), key=lambda f: f.first, reverse=True):
        lines[fold.first : fold.last + 1] = [_wrap(lines[fold.first : fold.last + 1], fold)]
    return "\n".join(lines)


def _wrap(lines: list[str], fold: Fold) -> str:
    """The first line's indentation stays outside the fold, so the sign sits where the lines were."""
    first = lines[0]
    indent = ""
    if match := _INDENT.match(first):
        if match["tags"] and match["spaces"] and first[match.end() :].startswith("</span>"):
            indent = first[: match.end() + len("</span>")]  # Pygments' whitespace span
        elif not match["tags"]:
            indent = match["spaces"]
    body = "\n".join([first[len(indent) :], *lines[1:]])
    label = html.escape(fold.label, quote=True)
    return (
        f'{indent}<span class="mcpref-fold"><button type="button" class="mcpref-fold__toggle" '
        f'aria-expanded="false" aria-label="{label} (show)" data-label="{label}"></button>'
        f'<span class="mcpref-fold__body">{body}</span></span>'
    )


def _shown(match: re.Match[str]) -> str:
    # Frames stay out of the search index: a result's preview is the prose that explains them.
    opening = match["open"].replace(' highlight">', ' highlight" data-search-exclude>', 1)
    text = plain(match["code"])
    start = streams.stream_start(text)
    if start is None:
        return opening + folded(match["code"]) + match["close"]
    return opening + _stream_code(match["code"], start) + match["close"] + _events(streams.events(text))


def _stream_code(code_html: str, start: int) -> str:
    """The block's lines, the stream's (and the blank line before it) wrapped to be hidden: the
    text is unchanged, so the console sends and compares, and Copy copies, the wire."""
    lines = code_html.split("\n")
    if start == 0:
        return f'<span class="mcpref-sse__wire mcpref-sse__wire--all">{code_html}</span>'
    head = folded("\n".join(lines[: start - 1]))
    wire = "\n".join(lines[start - 1 :])
    return f'{head}<span class="mcpref-sse__wire">\n{wire}</span>'


_JSON = JsonLexer()
_FORMAT = HtmlFormatter(nowrap=True)


def _events(found: list[streams.Event]) -> str:
    """Each event as a block: its fields as a label, its data pretty-printed, its comments."""
    shown = []
    for event in found:
        parts = []
        if event.fields:
            label = " ".join(
                f'<span class="na">{html.escape(name)}</span><span class="o">:</span> '
                f'<span class="l">{html.escape(value)}</span>'
                for name, value in event.fields
            )
            parts.append(f'<div class="mcpref-sse__label">{label}</div>')
        if event.data:
            pretty = event.json
            data = (
                folded(highlight(pretty, _JSON, _FORMAT).rstrip("\n")) if pretty else html.escape("\n".join(event.data))
            )
            # A <pre>: the diagrams plugin re-parses pages with BeautifulSoup, which collapses
            # whitespace-only text (Pygments' indentation) anywhere else.
            parts.append(f'<pre class="mcpref-sse__data">{data}</pre>')
        parts.extend(
            f'<div class="mcpref-sse__note"><span class="c">{html.escape(c)}</span></div>' for c in event.comments
        )
        shown.append(f'<div class="mcpref-sse__event">{"".join(parts)}</div>')
    return f'<div class="mcpref-sse">{"".join(shown)}</div>'


def on_page_content(html_text: str, **_: Any) -> str:
    return _BLOCK.sub(_shown, html_text)
