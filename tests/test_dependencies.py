"""The package's runtime dependencies are exactly what mcpref/ imports.

A module imported from a distribution nobody declared breaks `pip install mcpref` on a machine
without the dev extras; a declared dependency nothing imports is weight every user installs
for nothing (starlette was one: only the examples' authorization server, the docs site and the
tests use it; it is the `demo` extra now).
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import files, packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]

#: Modules of the package that need an optional extra, and the extra (installed with it); a path
#: ending in `/` stands for every module under it.
EXTRA_MODULES = {
    "mcpref/tasks/postgres.py": "postgres",
    "mcpref/relay.py": "postgres",
    "mcpref/shares.py": "postgres",
    "mcpref/examples/": "demo",
    "mcpref/telemetry.py": "otel",
}


def _extra(file: str) -> str:
    """The extra a module of the package may import from besides the runtime dependencies."""
    return next((extra for path, extra in EXTRA_MODULES.items() if file == path or file.startswith(path)), "")


def _name(requirement: str) -> str:
    """`httpx-sse>=0.4` -> `httpx-sse`, normalized as PyPI does (PEP 503)."""
    bare = re.match(r"[A-Za-z0-9._-]+", requirement)
    assert bare is not None, requirement
    return re.sub(r"[-_.]+", "-", bare.group()).lower()


def _imported(path: Path) -> set[str]:
    """The full names of the absolute imports in one file, wherever they are (functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.update(f"{node.module}.{alias.name}" for alias in node.names)  # a submodule, or a name in one
    ignored = set(sys.stdlib_module_names) | {"mcpref", "__future__"}
    return {name for name in names if name.split(".")[0] not in ignored}


def _owners(module: str, owners: dict[str, list[str]]) -> list[str]:
    """The distributions that provide `module`. A namespace package (`opentelemetry`, shared by
    the API and the SDK) is told apart by which distribution holds the module's own files."""
    candidates = owners[module.split(".")[0]]
    if len(candidates) < 2:
        return candidates
    parts = module.split(".")
    while len(parts) > 1:  # the longest prefix of the name that is a module some of them hold
        path = "/".join(parts)
        holders = [
            candidate
            for candidate in candidates
            if any(str(file).startswith(path + "/") or str(file) == path + ".py" for file in files(candidate) or ())
        ]
        if holders:
            return holders
        parts.pop()
    return candidates


def _distributions_imported() -> dict[str, set[str]]:
    """Each distribution the package imports from, with the files importing it."""
    owners = packages_distributions()
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "mcpref").rglob("*.py")):
        file = path.relative_to(ROOT).as_posix()
        for module in _imported(path):
            distributions = _owners(module, owners) if module.split(".")[0] in owners else []
            assert distributions, f"{file} imports {module}, which no installed distribution provides"
            for distribution in distributions:
                found.setdefault(_name(distribution), set()).add(file)
    return found


def test_every_import_is_a_declared_dependency() -> None:
    runtime = {_name(requirement) for requirement in PYPROJECT["dependencies"]}
    extras = {
        extra: {_name(requirement) for requirement in PYPROJECT["optional-dependencies"][extra]}
        for extra in set(EXTRA_MODULES.values())
    }
    undeclared = {
        distribution: files
        for distribution, files in _distributions_imported().items()
        if distribution not in runtime
        and not all(distribution in extras.get(_extra(file), set()) for file in files)
    }
    assert not undeclared, f"imported by mcpref/ but not in [project].dependencies: {undeclared}"


def test_the_demo_extra_is_what_the_examples_import() -> None:
    """starlette is imported by the examples only, and the `demo` extra declares it."""
    imported = _distributions_imported()
    assert imported["starlette"] and all(file.startswith("mcpref/examples/") for file in imported["starlette"])
    assert {_name(requirement) for requirement in PYPROJECT["optional-dependencies"]["demo"]} == {"starlette"}


def test_every_dependency_is_imported() -> None:
    imported = _distributions_imported()
    unused = sorted(_name(r) for r in PYPROJECT["dependencies"] if _name(r) not in imported)
    assert not unused, f"[project].dependencies that mcpref/ never imports (move them to an extra): {unused}"


def test_the_checks_that_run_before_the_tests_are_pinned() -> None:
    """`./scripts/test` runs ruff and mypy on the code before any test: an unpinned release of
    either (or of the stubs mypy reads) could turn a clean clone red with no change of ours."""
    dev = PYPROJECT["optional-dependencies"]["dev"]
    pinned = {_name(requirement) for requirement in dev if "==" in requirement}
    assert {"ruff", "mypy", "types-jsonschema", "types-authlib"} <= pinned, dev


def test_mypy_checks_the_whole_package_strictly() -> None:
    """The examples ship in the wheel and readers copy them from the pages, so `mypy` (which
    `./scripts/test` runs before any test) holds them to the core's strict typing: no module of
    mcpref/ is excluded, silenced or let off its errors."""
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["mypy"]
    assert mypy["files"] == ["mcpref"] and mypy["strict"] is True and not mypy.get("exclude"), mypy
    let_off = [
        override["module"]
        for override in mypy.get("overrides", [])
        if any(str(module).startswith("mcpref") for module in override["module"])
        and (override.get("follow_imports") in {"silent", "skip"} or override.get("ignore_errors"))
    ]
    assert not let_off, f"mypy overrides that hide errors in mcpref/: {let_off}"


def test_the_dev_extra_brings_every_extra() -> None:
    """mypy runs where the dev extra is installed: with every extra there, each optional module
    (telemetry.py against OpenTelemetry's typed API, the examples against Starlette's) is checked
    against what it really imports, not read as Any because the distribution is missing."""
    extras = set(PYPROJECT["optional-dependencies"]) - {"dev", "mutation"}
    itself = [r for r in PYPROJECT["optional-dependencies"]["dev"] if _name(r) == "mcpref"]
    brought = {extra.strip() for r in itself for extra in re.findall(r"\[([^\]]*)\]", r)[0].split(",")}
    assert set(EXTRA_MODULES.values()) <= extras <= brought, (extras, brought)


def test_the_migrating_page_installs_the_sdk_version_the_dev_extra_pins() -> None:
    """Was: the page's "old way, run for real" block failed in a fresh venv (no module named `mcp`)
    and said only "pinned in the dev extras"; it shows the install, of the version its run used."""
    pins = [r for r in PYPROJECT["optional-dependencies"]["dev"] if _name(r) == "mcp"]
    assert len(pins) == 1 and "==" in pins[0], pins
    page = (ROOT / "docs" / "guides" / "migrating.md").read_text("utf-8")
    shown = re.findall(r'^\$ pip install "(mcp[^"]*)"$', page, re.MULTILINE)
    assert shown == [pins[0]]
    assert page.index(f'$ pip install "{pins[0]}"') < page.index("from mcp.server.mcpserver import")
