"""mkdocs hook: folds the boilerplate of each frame in the built page (see `tests.docs.folds`).

Frames, commands, code and outputs (```http, ```sse, ```json, ```console, ```python, ```text) are
also kept out of the search index, so that a result's preview is the prose around a frame rather
than its JSON.

A fold is presentation only: the lines stay in the page's `<code>`, whole and in order, so the text
of the block (what the try-it console sends, what a test reads) is the frame as written; they are
hidden by docs/assets/frames.css behind a button that says what they hold, and docs/assets/frames.js
opens them in place. Copying a block copies every line, folded or not (frames.css shows the folded
lines while Material copies).
"""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `mkdocs serve` runs from its own script

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
    opening = match["open"].replace(" highlight\">", ' highlight" data-search-exclude>', 1)
    return opening + folded(match["code"]) + match["close"]


def on_page_content(html_text: str, **_: Any) -> str:
    return _BLOCK.sub(_shown, html_text)
