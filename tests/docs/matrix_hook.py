"""mkdocs hook: renders the compliance matrix into docs/reference/compliance.md at build time.

The page holds the marker `<!-- compliance-matrix -->`; the tables replace it. A matrix with problems
(see `tests.docs.matrix.problems`) is a warning, so `mkdocs build --strict` stops on it too.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `mkdocs serve` runs from its own script

from tests.docs import matrix  # noqa: E402

MARKER = "<!-- compliance-matrix -->"
PAGE = "reference/compliance.md"
log = logging.getLogger("mkdocs.hooks.compliance")


def on_page_markdown(markdown: str, page: Any, config: Any, **_: Any) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if MARKER not in markdown:
        log.warning("%s lost its %s marker: the matrix has nowhere to go", PAGE, MARKER)
        return markdown
    raw, pages = matrix.load_raw(), matrix.load_pages()
    for problem in matrix.problems(raw, pages):
        log.warning("compliance matrix: %s", problem)
    rendered = matrix.render(matrix.entries(raw), pages, str(Path(PAGE).parent), config.get("repo_url"))
    return markdown.replace(MARKER, rendered)
