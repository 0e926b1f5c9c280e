"""A block that shows a repository file (titled `File — mcpref/examples/....py, ...`) is that file.

The guides show each step's file, then run it in the next block; this keeps what the reader sees
and what runs from drifting apart.
"""

from pathlib import Path

import pytest

from tests.docs.shown_files import ROOT, shown


def shown_files() -> list[tuple[str, str, str]]:
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for match in shown(page.read_text()):
            found.append((str(page.relative_to(ROOT)), match["path"], match["body"]))
    return found


def test_the_guides_show_files():
    assert len(shown_files()) >= 8


@pytest.mark.parametrize(("page", "path", "body"), shown_files(), ids=lambda value: str(value)[:60])
def test_a_shown_file_is_the_file(page: str, path: str, body: str) -> None:
    file = Path(ROOT / path)
    assert file.is_file(), f"{page} shows {path}, which does not exist"
    refresh = f"python -m tests.docs.shown_files {page}"
    assert body == file.read_text(), f"{page} shows {path}, but the file differs: {refresh}"
