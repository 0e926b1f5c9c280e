"""No module of `mcpref` imports, directly or through others, a module that imports it back.

Read from the source, not by importing: an import under `if TYPE_CHECKING:` counts, since a cycle
hidden there is still two modules that each need the other to be understood (issue 11: the
client's `_listen` and `_tasks` reached back into `_client` that way).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import ROOT

Graph = dict[str, set[str]]


def module_names(package: Path) -> dict[str, Path]:
    """Dotted module name → file, for every module and package under `package`."""
    names = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The package's modules that `name` imports, at any depth of its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                # `from . import jsonrpc` imports a module; `from .jsonrpc import encode`, a name.
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in modules else source)
    return (found & set(modules)) - {name}


def cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            if component:
                found.append(sorted([node, *component]))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_graph(package: Path) -> Graph:
    modules = module_names(package)
    return {name: imports(name, path, modules) for name, path in modules.items()}


def test_the_package_has_no_import_cycle() -> None:
    assert cycles(import_graph(ROOT / "mcpref")) == []


def test_a_cycle_under_type_checking_is_found(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from .b import B\n")
    (package / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\nB = 1\n")
    (package / "c.py").write_text("from pkg import a\n")
    assert cycles(import_graph(package)) == [["pkg.a", "pkg.b"]]
