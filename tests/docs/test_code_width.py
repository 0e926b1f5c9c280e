"""Every line of Python a page shows fits its code block at 1280 px, without scrolling sideways.

At 1280 px a code block holds `CODE_COLUMN` characters of the monospace font: its 688 px column,
less its padding and the copy button's gutter (site.css), measured in Chromium
(tests/browser/test_pages.py holds that true if the CSS changes). A phone scrolls code anyway.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from sybil import Document

from tests.docs.pages import blocks
from tests.docs.shown_files import ROOT, shown

#: The characters a code block shows at 1280 px (DejaVu Sans Mono, the widest common fallback of
#: the site's system monospace fonts, at 13.6 px: 618 px of column, 8.18 px a character).
CODE_COLUMN = 75


def pages() -> list[Path]:
    return sorted((ROOT / "docs").rglob("*.md"))


def too_long(lines: list[str], where: str, first: int) -> list[str]:
    return [
        f"{where}, line {first + n}: {len(line)} characters: {line.strip()[:50]}"
        for n, line in enumerate(lines)
        if len(line) > CODE_COLUMN
    ]


def test_every_python_line_on_a_page_fits_the_code_column() -> None:
    found = []
    for page in pages():
        document = Document(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
        for block in blocks(document):
            if block.language == "python":
                first = document.text.count("\n", 0, block.source_start) + 1
                found += too_long(block.source.splitlines(), document.path, first)
    assert found == [], f"{len(found)} lines wider than {CODE_COLUMN} characters:\n" + "\n".join(found)


#: A ```python block in a docstring, as the API reference pages render it (mkdocstrings).
DOCSTRING_BLOCK = re.compile(
    r"^(?P<indent>[ \t]*)```python[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.MULTILINE | re.DOTALL
)


def test_every_python_line_in_a_docstring_fits_the_code_column() -> None:
    """The API reference shows the docstrings' examples in the same code blocks as the pages."""
    found = []
    for path in sorted((ROOT / "mcpref").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        if "```python" not in source:
            continue
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for block in DOCSTRING_BLOCK.finditer(ast.get_docstring(node) or ""):
                lines = [line[len(block["indent"]) :] for line in block["body"].splitlines()]
                where = f"{name}, a python block in {getattr(node, 'name', 'the module')}'s docstring"
                found += too_long(lines, where, 1)
    assert found == [], f"{len(found)} lines wider than {CODE_COLUMN} characters:\n" + "\n".join(found)


def test_ruff_holds_the_guide_server_to_the_code_column() -> None:
    """The files a guide shows whole are checked by ruff too, where their editor sees it."""
    config = tomllib.loads((ROOT / "mcpref/examples/guide_server/ruff.toml").read_text())
    assert config["line-length"] == CODE_COLUMN


def test_every_line_of_a_python_file_a_page_shows_fits_the_code_column() -> None:
    files = {match["path"] for page in pages() for match in shown(page.read_text(encoding="utf-8"))}
    python = sorted(path for path in files if path.endswith(".py"))
    assert len(python) >= 8, python
    found = []
    for path in python:
        found += too_long((ROOT / path).read_text(encoding="utf-8").splitlines(), path, 1)
    assert found == [], f"{len(found)} lines wider than {CODE_COLUMN} characters:\n" + "\n".join(found)
