"""Every line a reader copies from a page fits its code block at 1280 px, without scrolling sideways:
the Python, every file a page shows whole, and its HTML, shell, nginx and markdown blocks. (Frames,
consoles and output wrap instead: site.css, reference.css.)

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


#: The languages of the blocks a reader copies that keep their layout (and so scroll) rather
#: than wrap.
COPIED = {"python", "html", "bash", "shell", "sh", "nginx", "markdown", "md"}


def copied_lines_too_long(text: str, name: str) -> list[str]:
    """The lines too wide in a page's copied blocks: one of `COPIED`, or a file shown whole."""
    document = Document(text, name)
    found = []
    for block in blocks(document):
        if block.language in COPIED or (block.title or "").startswith("File — "):
            first = document.text.count("\n", 0, block.source_start) + 1
            where = f"{document.path} ({block.language or 'a'} block)"
            found += too_long(block.source.splitlines(), where, first)
    return found


def test_every_copied_line_on_a_page_fits_the_code_column() -> None:
    found = []
    for page in pages():
        found += copied_lines_too_long(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
    assert found == [], f"{len(found)} lines wider than {CODE_COLUMN} characters:\n" + "\n".join(found)


def test_a_wide_shell_line_or_file_block_is_found() -> None:
    """The check sees each kind it holds, titled or not (a block it skipped would pass silently)."""
    wide = "x" * (CODE_COLUMN + 1)
    text = "".join(
        f'```{language} title="{title}"\n{wide}\n```\n\n'
        for language, title in [
            ("bash", "Illustration — a shell line"),
            ("text", "File — deploy/run, shown whole"),
            ("nginx", "Illustration — a proxy"),
            ("html", "Illustration — a view"),
            ("markdown", "Illustration — a directive"),
            ("text", "Output"),
        ]
    )
    found = copied_lines_too_long(text, "probe.md")
    assert [line.split(":")[0] for line in found] == [
        f"probe.md ({language} block), line {4 * n + 2}"
        for n, language in enumerate(["bash", "text", "nginx", "html", "markdown"])
    ]


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


def test_every_line_of_a_file_a_page_shows_fits_the_code_column() -> None:
    """Named by the file's own lines too, where whoever edits it looks."""
    files = sorted({match["path"] for page in pages() for match in shown(page.read_text(encoding="utf-8"))})
    assert len([path for path in files if path.endswith(".py")]) >= 8, files
    assert {"deploy/run", "deploy/haproxy.cfg"} <= set(files), files
    assert any(path.endswith(".html") for path in files), files
    found = []
    for path in files:
        found += too_long((ROOT / path).read_text(encoding="utf-8").splitlines(), path, 1)
    assert found == [], f"{len(found)} lines wider than {CODE_COLUMN} characters:\n" + "\n".join(found)
