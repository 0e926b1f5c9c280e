"""The README's layout table matches the tree: every module of the package has a row that names
it, and every path the table names exists.

A module is named by its path (`mcpref/meta.py`), or by its file name in a row whose first cell
names its folder or a file in it (`mcpref/transports/http.py`, `stdio.py`; `mcpref/client/` with
`_era.py` in the description). A module of an example (`mcpref/examples/host/consent.py`) is
named by its example's folder (`host/`) in the row of `mcpref/examples/`: an example is read as a
whole, from its own docstring.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
CODE = re.compile(r"`([^`]+)`")


def layout_rows() -> list[tuple[list[PurePosixPath], list[str]]]:
    """Each row of the Layout table: the paths of its first cell (a bare file name is in the folder
    of the path before it), and every code span of the row."""
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = line.strip().strip("|").split("|")
        if not line.startswith("|") or len(cells) < 2 or set(cells[0].strip()) <= set("-"):
            continue
        paths: list[PurePosixPath] = []
        for span in CODE.findall(cells[0]):
            if "/" in span or not paths:
                paths.append(PurePosixPath(span))
            else:
                paths.append(paths[-1].parent / span)
        rows.append((paths, CODE.findall(line)))
    return rows


EXAMPLES = PurePosixPath("mcpref/examples")


def named(module: PurePosixPath, rows: list[tuple[list[PurePosixPath], list[str]]]) -> bool:
    """Is `module` in a first cell, or named by file name in a row whose first cell is in its folder
    (by its example's folder in the examples' row, for a module of an example)?"""
    if module.is_relative_to(EXAMPLES) and len(module.parts) > len(EXAMPLES.parts) + 1:
        folder = module.parts[len(EXAMPLES.parts)]
        return any(EXAMPLES in paths and f"{folder}/" in spans for paths, spans in rows)
    return any(
        module in paths or (module.name in spans and any(module.parent in (path, path.parent) for path in paths))
        for paths, spans in rows
    )


def test_every_module_of_the_package_is_in_the_layout_table() -> None:
    rows = layout_rows()
    modules = sorted(
        PurePosixPath(path.relative_to(ROOT).as_posix())
        for path in (ROOT / "mcpref").rglob("*.py")
        if path.name != "__init__.py"
    )
    missing = [str(module) for module in modules if not named(module, rows)]
    assert not missing, f"README.md's layout table does not name: {missing}"


def test_every_path_in_the_layout_table_exists() -> None:
    rows = layout_rows()
    assert len(rows) > 10
    gone = [str(path) for paths, _ in rows for path in paths if not (ROOT / path).exists()]
    assert not gone, f"README.md's layout table names paths that are not there: {gone}"
