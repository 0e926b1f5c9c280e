"""Blocks that show a repository file: a fenced block titled `File — <path>, <why>`, where the path
is a Python file (or `.html`: an MCP Apps view) under `mcpref/examples/` or `tests/`, or a file
under `deploy/`. (Not "Illustration": that word means nothing runs or checks a block.)

The guides show each example file and run it in the next block; the shown block must be the file,
byte for byte (the harness compares it, `pages._shown_file`; `tests/docs/test_shown_files.py`).
After changing a file, refresh the pages with
`python -m tests.docs.shown_files docs/guides/*.md`, then review the diff.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The files a page may show whole.
SHOWN_PATH = re.compile(r"(?:mcpref/examples|tests)/[\w/.-]+\.(?:py|html)|deploy/[\w.-]+")
SHOWN = re.compile(
    r'^(?P<fence>```+)\w+ title="File — '
    r'(?P<path>(?:mcpref/examples|tests)/[\w/.-]+\.(?:py|html)|deploy/[\w.-]+),[^"]*"\n'
    r"(?P<body>.*?)^(?P=fence)$",
    re.MULTILINE | re.DOTALL,
)


def shown(text: str) -> Iterator[re.Match[str]]:
    return SHOWN.finditer(text)


def refreshed(text: str) -> str:
    """The page with every shown block replaced by the file it names."""

    def fill(match: re.Match[str]) -> str:
        head = match.group(0)[: match.start("body") - match.start()]
        return head + (ROOT / match["path"]).read_text() + match["fence"]

    return SHOWN.sub(fill, text)


if __name__ == "__main__":
    for name in sys.argv[1:]:
        page = Path(name)
        page.write_text(refreshed(page.read_text()))
