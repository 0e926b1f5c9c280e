"""The examples use mcpref the way a reader can: only names the API reference documents.

The public surface is what docs/reference/api/ documents (its `::: module` lines, and the modules of its
`::: module.Name` lines): `mcpref` and
a few public modules, each naming its exports in `__all__`. An example that imports from any
other module, or a name a public module does not export, teaches readers to depend on internals
that may move; this fails on it. The docs site app (docsite.py) and the tests are not examples.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "mcpref" / "examples").rglob("*.py"))


def public_modules() -> dict[str, set[str]]:
    """Each module the API reference documents, with the names it exports."""
    modules = set()
    for page in sorted((ROOT / "docs" / "reference" / "api").glob("*.md")):
        for name in re.findall(r"^::: (mcpref[\w.]*)$", page.read_text("utf-8"), re.MULTILINE):
            while not _is_module(name):
                name = name.rpartition(".")[0]  # `::: mcpref.Server`: the module is mcpref
            modules.add(name)
    return {name: set(importlib.import_module(name).__all__) for name in sorted(modules)}


def _is_module(name: str) -> bool:
    try:
        importlib.import_module(name)
    except ImportError:
        return False
    return True


def mcpref_imports(path: Path) -> list[tuple[int, str, str]]:
    """(line, module, name) for each name the file imports from mcpref, wherever the import is;
    one example importing another (`mcpref.examples...`) is not the API's surface."""
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, "") for alias in node.names if alias.name.split(".")[0] == "mcpref"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "mcpref":
            found += [(node.lineno, node.module or "", alias.name) for alias in node.names]
    return [(line, module, name) for line, module, name in found if not module.startswith("mcpref.examples")]


def test_the_api_reference_documents_the_package_and_its_public_modules() -> None:
    assert {"mcpref", "mcpref.client", "mcpref.tasks"} <= set(public_modules())


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_an_example_imports_only_public_names(path: Path) -> None:
    public = public_modules()
    private = [
        f"line {line}: " + (f"from {module} import {name}" if name else f"import {module}")
        for line, module, name in mcpref_imports(path)
        if module not in public or name not in public[module]
    ]
    assert not private, f"{path.relative_to(ROOT)} imports what the API reference does not document: {private}"


def test_the_examples_import_something_from_mcpref() -> None:
    """The check above sees imports at all: most examples import from mcpref."""
    importing = [path for path in EXAMPLES if mcpref_imports(path)]
    assert len(importing) >= len(EXAMPLES) // 2


def test_import_mcpref_brings_no_server_client_or_oauth_library() -> None:
    """Why run, auth and client are modules of their own: `import mcpref` stays light."""
    heavy = ("uvicorn", "httpx", "joserfc", "authlib", "starlette")
    code = f"import sys, mcpref; print(sorted(set({heavy!r}) & set(sys.modules)))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert loaded.stdout.strip() == "[]"
