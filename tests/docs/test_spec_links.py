"""Every spec citation on the site is a link to the published spec section (docs/contributing.md,
"Citing the spec"), and every such link names a real page and heading of the revision."""

from __future__ import annotations

import re
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


REFERENCE_DEFINITION = re.compile(r"^\s*\[(?P<ref>[\w-]+)\]:\s*(?P<url>\S+)\s*$", re.MULTILINE)
INLINE_LINK = re.compile(r"\[[^\]]*\]\([^)\s]*\)")


def spec_citation_problems(doc: str, where: str) -> list[str]:
    """A docstring cites the spec as the pages do: by a link (inline, or by reference), to a real
    page and heading; a bare `page.mdx` is no link a reader of the API reference can follow."""
    refs = {m["ref"]: m["url"] for m in REFERENCE_DEFINITION.finditer(doc)}
    text = REFERENCE_DEFINITION.sub("", doc)
    text = re.sub(r"\]\[(?P<ref>[\w-]+)\]", lambda m: f"]({refs.get(m['ref'], '#missing-' + m['ref'])})", text)
    found = matrix.citation_problems(text, where, PAGES)
    found += [
        f"{where}: {m[0]} is cited without a link" for m in re.finditer(r"[\w/-]+\.mdx", INLINE_LINK.sub("", text))
    ]
    return found


def test_public_docstrings_cite_the_spec_by_links() -> None:
    """Was: the API reference showed citations such as "(server/resources.mdx §Error Handling)" as
    plain text."""
    import inspect

    from tests.docs.test_docstrings import public_objects

    problems = []
    for name, value in public_objects():
        documented = callable(value) or inspect.ismodule(value) or isinstance(value, property)
        doc = getattr(value, "__doc__", None) if documented else None
        if doc and isinstance(doc, str):
            problems += spec_citation_problems(doc, name)
    assert problems == []


def test_a_bare_citation_in_a_docstring_is_found() -> None:
    assert spec_citation_problems("See server/tools.mdx §Tool.", "x") == ["x: server/tools.mdx is cited without a link"]
    linked = f"See [`server/tools.mdx` §Tool][t].\n\n[t]: {BASE}/server/tools#tool\n"
    assert spec_citation_problems(linked, "x") == []
    assert spec_citation_problems(linked.replace("#tool", "#tools"), "x")
