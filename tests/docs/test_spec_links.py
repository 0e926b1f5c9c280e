"""Every spec citation on the site is a link to the published spec section (docs/contributing.md,
"Citing the spec"), and every such link names a real page and heading of the revision."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs import matrix

PAGES = matrix.load_pages()
DOCS = sorted((matrix.ROOT / "docs").rglob("*.md"))


@pytest.mark.parametrize("page", DOCS, ids=lambda p: str(p.relative_to(matrix.ROOT)))
def test_spec_citations_link_to_the_published_section(page: Path) -> None:
    assert matrix.citation_problems(page.read_text(encoding="utf-8"), str(page), PAGES) == []


BASE = "https://modelcontextprotocol.io/specification/2026-07-28"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("See `basic/index.mdx` §_meta.", "is cited without a link"),
        ("See [`basic/index.mdx`](basic/index.mdx).", "is cited without a link"),
        (f"See [`basic/index.mdx` §Meta]({BASE}/basic#metadata).", "has no heading whose anchor is #metadata"),
        (f"See [`basic/sessions.mdx`]({BASE}/basic/sessions).", "is no page of the 2026-07-28 specification"),
    ],
)
def test_a_bare_or_broken_citation_is_reported(text: str, expected: str) -> None:
    problems = matrix.citation_problems(text, "page.md", PAGES)
    assert any(expected in p for p in problems), problems


def test_linked_citations_and_code_are_fine() -> None:
    text = (
        f"[`basic/index.mdx` §_meta]({BASE}/basic#meta), [§Error Codes]({BASE}/basic#error-codes), "
        f"[the spec]({BASE}), [2025]({BASE.replace('2026-07-28', '2025-11-25')}/basic/lifecycle).\n\n"
        "```python\n# basic/patterns/mrtr.mdx, `basic/index.mdx` in code is not a citation\n```\n"
    )
    assert matrix.citation_problems(text, "page.md", PAGES) == []
