"""mkdocs hook: renders the compliance matrix into Reference → Compliance at build time.

The overview, docs/reference/compliance/index.md, holds `<!-- compliance-summary -->`; each area's
page, docs/reference/compliance/<area>.md, holds `<!-- compliance-matrix: <area> -->`, which its
entries replace (`tests.docs.matrix.AREAS`). A matrix with problems (see `tests.docs.matrix.problems`)
is a warning, so `mkdocs build --strict` stops on it too.
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # `mkdocs serve` runs from its own script

from tests.docs import matrix  # noqa: E402

SUMMARY = "<!-- compliance-summary -->"
MARKER = re.compile(r"<!-- compliance-matrix: (?P<area>[a-z-]+) -->")
FOLDER = "reference/compliance"
log = logging.getLogger("mkdocs.hooks.compliance")


def on_page_markdown(markdown: str, page: Any, config: Any, **_: Any) -> str:
    if not page.file.src_uri.startswith(FOLDER + "/"):
        return markdown
    found = MARKER.search(markdown)
    if SUMMARY not in markdown and found is None:
        log.warning("%s has no matrix marker: nothing to render there", page.file.src_uri)
        return markdown
    raw, pages = matrix.load_raw(), matrix.load_pages()
    good = matrix.entries(raw)
    if SUMMARY in markdown:
        for problem in matrix.problems(raw, pages):
            log.warning("compliance matrix: %s", problem)
        return markdown.replace(SUMMARY, matrix.render_summary(good, pages))
    assert found is not None
    if found["area"] not in {slug for slug, _, _ in matrix.AREAS}:
        log.warning("%s: no area %r in tests/docs/matrix.py AREAS", page.file.src_uri, found["area"])
        return markdown
    rendered = matrix.render(good, pages, FOLDER, config.get("repo_url"), area=found["area"])
    return markdown.replace(found.group(0), rendered)
