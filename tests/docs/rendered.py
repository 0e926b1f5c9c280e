"""What a reader sees as code on a page, against the fenced blocks the harness runs.

The harness finds fenced blocks. A page can show code in two more ways that Markdown renders but
no fence marks: a block indented by four spaces, and raw HTML `<pre>`. Either would be shown to
readers and never executed. So each page is rendered with the site's own Markdown extensions
(read from mkdocs.yml), and every `<pre>` in the result must be one of the page's fenced blocks.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from functools import cache
from pathlib import Path

import markdown

ROOT = Path(__file__).resolve().parents[2]
PRE = re.compile(r"<pre\b[^>]*>(?P<body>.*?)</pre>", re.DOTALL)
TAG = re.compile(r"<[^>]+>")


@cache
def _extensions() -> tuple[list, dict]:
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"))
    return list(config["markdown_extensions"]), dict(config["mdx_configs"])


def shown_code(text: str) -> list[str]:
    """The text of every `<pre>` the site renders for this page's Markdown."""
    extensions, configs = _extensions()
    rendered = markdown.Markdown(extensions=extensions, extension_configs=configs).convert(text)
    return [html.unescape(TAG.sub("", found["body"])) for found in PRE.finditer(rendered)]


def _key(code: str) -> str:
    """A block's text with tags and layout removed: some fences (mermaid) pass HTML through."""
    lines = [line.strip() for line in TAG.sub("", code).strip("\n").splitlines()]
    return "\n".join(line for line in lines if line)


def unseen(text: str, fenced: list[str]) -> list[str]:
    """Code a reader sees that is none of the fenced blocks (`fenced`: their contents)."""
    left = Counter(_key(source) for source in fenced)
    found = []
    for code in shown_code(text):
        key = _key(code)
        if left[key] > 0:
            left[key] -= 1
        else:
            found.append(code)
    return found


def line_of(text: str, code: str) -> int:
    """The page line where `code` (as rendered) starts, or 1 if it cannot be found."""
    first = next((line.strip() for line in code.splitlines() if line.strip()), "")
    position = text.find(first) if first else -1
    return text.count("\n", 0, position) + 1 if position >= 0 else 1
