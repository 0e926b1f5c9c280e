"""The examples in the public API's docstrings run, as every block on the site does.

The API reference (docs/reference/api/) is generated from these docstrings, so their ```python
blocks are page examples like any other: each runs against a real uvicorn serving the site app, with
`http://127.0.0.1:8000` replaced by its address (as `tests/docs/pages.py` does for the pages), in a
namespace holding the module's exported names (as a doctest would). Top-level `await` is allowed,
since the client's examples are written the way they are used inside a coroutine.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import re
import textwrap
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import griffe
import pytest
import yaml
from griffe import DocstringSectionKind as Kind

import mcpref
import mcpref.apps
import mcpref.auth
import mcpref.client
import mcpref.extensions
import mcpref.relay
import mcpref.run
import mcpref.sealing
import mcpref.shares
import mcpref.tasks
import mcpref.telemetry
from tests.conftest import ROOT, running
from tests.docs import matrix
from tests.docs.pages import PAGE_ORIGIN

MODULES = (
    mcpref,
    mcpref.client,
    mcpref.extensions,
    mcpref.tasks,
    mcpref.relay,
    mcpref.shares,
    mcpref.apps,
    mcpref.sealing,
    mcpref.run,
    mcpref.auth,
    mcpref.telemetry,
)
FENCE = re.compile(r"```python\n(?P<code>.*?)```", re.DOTALL)


def public_objects() -> Iterator[tuple[str, Any]]:
    """Each module, each name in its `__all__`, and each public method or property of a class."""
    for module in MODULES:
        yield module.__name__, module
        for name in module.__all__:
            value = getattr(module, name)
            yield f"{module.__name__}.{name}", value
            if inspect.isclass(value):
                for member, attribute in vars(value).items():
                    documented = inspect.isfunction(attribute) or isinstance(attribute, property)
                    if documented and not member.startswith("_"):
                        yield f"{module.__name__}.{name}.{member}", attribute


def examples() -> list[tuple[str, str]]:
    found = []
    for where, value in public_objects():
        for number, match in enumerate(FENCE.finditer(inspect.getdoc(value) or ""), start=1):
            found.append((f"{where} #{number}", match["code"]))
    return found


def namespace(where: str) -> dict[str, Any]:
    module: ModuleType = mcpref.client if where.startswith("mcpref.client") else mcpref
    return {name: getattr(module, name) for name in module.__all__}


@pytest.fixture(scope="module")
def site_url() -> Iterator[str]:
    """What `mcpref demo` serves: the endpoints the examples call, without the built pages."""
    from mcpref.demo import make_app

    with running(make_app()) as url:
        yield url


def test_the_public_api_has_examples():
    assert len(examples()) >= 4


@pytest.mark.parametrize(("where", "code"), examples(), ids=[where for where, _ in examples()])
def test_a_docstring_example_runs(where: str, code: str, site_url: str) -> None:
    source = code.replace(PAGE_ORIGIN, site_url)
    compiled = compile(source, where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    returned = eval(compiled, namespace(where))
    if inspect.iscoroutine(returned):
        asyncio.run(returned)


@pytest.mark.parametrize("module", MODULES, ids=lambda module: module.__name__)
def test_every_exported_name_says_what_it_is(module: ModuleType) -> None:
    """mkdocstrings shows a name only if it has a docstring (a constant's is the string below it)."""
    source_docs = {}
    for name in module.__all__:
        value = getattr(module, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            source_docs[name] = value.__doc__
    missing = [name for name, doc in source_docs.items() if not doc or doc.startswith(f"{name}(")]
    assert not missing, f"{module.__name__}: no docstring for {missing}"


# The API reference's Parameters, Returns and Raises sections. mkdocstrings reads the code with
# griffe and renders a Google-style docstring's `Args:`, `Returns:` (or `Yields:`) and `Raises:` as
# those tables, so the check reads the code with griffe too: what it parses is what the pages show.
API_PAGES = ROOT / "docs" / "reference" / "api"
DIRECTIVE = re.compile(r"^::: (?P<path>[\w.]+)\n(?P<options>(?:(?: {4}.*)?\n)*)", re.MULTILINE)


@cache
def package() -> griffe.Module:
    return cast(griffe.Module, griffe.load("mcpref", search_paths=[str(ROOT)], docstring_parser="google"))


def resolved(path: str) -> griffe.Object:
    found = package() if path == "mcpref" else package()[path.removeprefix("mcpref.")]
    return cast(griffe.Object, found.final_target if found.is_alias else found)


def public_names(obj: griffe.Object) -> list[str]:
    """What the `public` filter of mkdocs.yml shows: a module's `__all__`, a class's own members
    without a leading underscore (inherited ones are not shown)."""
    if obj.is_module and obj.exports is not None:
        return [str(name) for name in obj.exports]
    return [name for name, member in obj.members.items() if not name.startswith("_") and not member.is_alias]


def shown_on(path: str, obj: griffe.Object) -> Iterator[tuple[str, griffe.Object]]:
    yield path, obj
    if obj.is_class:
        for name in public_names(obj):
            yield from shown_on(f"{path}.{name}", resolved(f"{path}.{name}"))


@cache
def rendered() -> dict[str, griffe.Object]:
    """Each object the pages of docs/reference/api/ render, by path: each `::: path` directive's
    object (a module's docstring is shown even without its heading), its `members` or else its
    public names, and the public members of each class among them."""
    found: dict[str, griffe.Object] = {}
    for page in sorted(API_PAGES.rglob("*.md")):
        for directive in DIRECTIVE.finditer(page.read_text(encoding="utf-8")):
            options = (yaml.safe_load(textwrap.dedent(directive["options"])) or {}).get("options", {})
            root = resolved(directive["path"])
            found.update(shown_on(directive["path"], root))
            if root.is_class:
                continue
            for name in options.get("members") or public_names(root):
                found.update(shown_on(f"{directive['path']}.{name}", resolved(f"{directive['path']}.{name}")))
    return found


def signature_of(path: str, obj: griffe.Object) -> griffe.Function | None:
    """The function whose parameters the object's heading shows: the function itself, or the class's
    `__init__` (merged into the class, as mkdocs.yml has it). None for a class whose `__init__` is
    inherited from one the pages render (its parameters are documented there) or has none."""
    if isinstance(obj, griffe.Function):
        return obj
    if not isinstance(obj, griffe.Class):
        return None
    init = obj.members.get("__init__") or obj.all_members.get("__init__")
    if not isinstance(init, griffe.Function) or init.parent is None:
        return None
    if init.parent is not obj and any(shown is init.parent for shown in rendered().values()):
        return None
    return init


def parameters_of(function: griffe.Function) -> list[str]:
    names = [parameter.name for parameter in function.parameters]
    bound = isinstance(function.parent, griffe.Class) and "staticmethod" not in function.labels
    return names[1:] if bound and names else names


def sections_of(obj: griffe.Object, function: griffe.Function) -> list[griffe.DocstringSection]:
    found = list(obj.docstring.parsed) if obj.docstring else []
    if function is not obj and function.parent is obj and function.docstring:
        found += function.docstring.parsed
    return found


def raised_by(function: griffe.Object) -> set[str]:
    """The exception classes the function's own body raises by name (`raise ValueError(...)`),
    not those of the functions it calls or defines; a helper that builds the exception (lower
    case, `raise _no_room(...)`) is left to the Raises entry of what it returns."""
    source = textwrap.dedent(function.source) if function.source.strip() else ""
    if not source:  # a dataclass's generated __init__
        return set()
    body = ast.parse(source).body[0]
    found = set()
    pending: list[ast.AST] = [body]
    while pending:
        for node in ast.iter_child_nodes(pending.pop()):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(node, ast.Raise) and node.exc is not None:
                raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                name = raised.id if isinstance(raised, ast.Name) else getattr(raised, "attr", "")
                if name[:1].isupper():
                    found.add(name)
            pending.append(node)
    return found


def docstring_problems(path: str, obj: griffe.Object) -> list[str]:
    if obj.is_attribute or obj.is_module:
        return []
    if not obj.docstring:
        return ["no docstring (mkdocstrings leaves it off the page)"]
    function = signature_of(path, obj)
    if function is None:
        return []
    sections = sections_of(obj, function)
    kinds = {section.kind for section in sections}
    documented = [item.name.lstrip("*") for s in sections if s.kind is Kind.parameters for item in s.value]
    taken = [name.lstrip("*") for name in parameters_of(function)]
    problems = []
    if missing := [name for name in taken if name not in documented]:
        problems.append(f"Args: does not name {missing}")
    if stale := [name for name in documented if name not in taken]:
        problems.append(f"Args: names {stale}, which it does not take")
    if any(len(section.value) > 1 for section in sections if section.kind in (Kind.returns, Kind.yields)):
        # griffe reads each line at the items' indentation as one more value returned (a tuple)
        problems.append("Returns: splits into several values (indent the description's next lines)")
    named = [item.name for s in sections if s.kind in (Kind.returns, Kind.yields) for item in s.value if item.name]
    if named:
        # `word: text` names the value: the page shows `word` as its name, the rest as its text
        problems.append(f"Returns: names the value {named} (say it in the description)")
    raised = [str(item.annotation) for s in sections if s.kind is Kind.raises for item in s.value]
    if odd := [name for name in raised if not re.fullmatch(r"[A-Za-z_][\w.]*", name)]:
        problems.append(f"Raises: {odd} are not exception names (indent the description's next lines)")
    checks = [function, *([obj.members["__post_init__"]] if "__post_init__" in obj.members else [])]
    named = {name.rpartition(".")[2] for name in raised}
    if unnamed := sorted({name for check in checks for name in raised_by(check)} - named):
        problems.append(f"Raises: does not name {unnamed}, which it raises")
    returns = str(function.returns) if function.returns is not None else "None"
    if obj is function and returns != "None" and not kinds & {Kind.returns, Kind.yields}:
        problems.append(f"no Returns: (it returns {returns})")
    return problems


def test_the_api_pages_render_the_public_callables() -> None:
    """The walk below sees what the pages show: a page's directive that stopped resolving, or a
    walk that lost the classes' members, would make the docstring check pass on nothing."""
    shown = rendered()
    assert {"mcpref.Server.tool", "mcpref.StreamableHTTP", "mcpref.auth.JWTValidator.validate"} <= set(shown)
    assert {"mcpref.tasks.TasksExtension.hand_off", "mcpref.client.Client.call_tool"} <= set(shown)
    assert sum(1 for obj in shown.values() if obj.is_function) > 100


def test_every_callable_on_the_api_pages_has_args_and_returns_sections() -> None:
    """Google-style sections for what the reference renders: `Args:` naming exactly the parameters
    (none missing, none the signature no longer has), `Returns:` unless it returns None, and
    `Raises:` naming each exception the body raises itself."""
    problems = {path: found for path, obj in rendered().items() if (found := docstring_problems(path, obj))}
    assert not problems, "\n".join(f"{path}: {'; '.join(found)}" for path, found in problems.items())


def test_the_docstring_check_sees_a_missing_and_a_stale_name() -> None:
    module = griffe.temporary_visited_module(
        'def f(a: int, b: int) -> int:\n    """F.\n\n    Args:\n        a: A.\n        c: C.\n    """\n',
        docstring_parser="google",
    )
    with module as visited:
        problems = docstring_problems("f", visited["f"])
    assert problems == [
        "Args: does not name ['b']",
        "Args: names ['c'], which it does not take",
        "no Returns: (it returns int)",
    ]
    raises = 'def h(a: int) -> None:\n    """H.\n\n    Args:\n        a: A.\n    """\n    raise ValueError(a)\n'
    with griffe.temporary_visited_module(raises, docstring_parser="google") as visited:
        assert docstring_problems("h", visited["h"]) == ["Raises: does not name ['ValueError'], which it raises"]
    split = 'def g() -> int:\n    """G.\n\n    Returns:\n        One line,\n        and the next.\n    """\n'
    with griffe.temporary_visited_module(split, docstring_parser="google") as visited:
        assert docstring_problems("g", visited["g"]) == [
            "Returns: splits into several values (indent the description's next lines)"
        ]


def test_the_docstrings_on_the_api_pages_link_their_spec_citations() -> None:
    """As every page does (tests/docs/test_spec_links.py): a spec page cited in a docstring is a
    link to the published section, and the section exists."""
    pages = matrix.load_pages()
    problems = [
        problem
        for path, obj in rendered().items()
        if obj.docstring
        for problem in matrix.citation_problems(obj.docstring.value, path, pages)
    ]
    assert not problems, "\n".join(problems)


_HEADING = re.compile(r'<h[2-6] id="mcpref[\w.]*" class="doc doc-heading"')
_TABLE = re.compile(
    r'<span class="doc-section-title">(?P<title>\w+):</span></p>\s*'
    r'(?:<div class="mcpref-stacked">)?<table>(?P<rows>.*?)</table>',
    re.DOTALL,
)
_FIRST_CELL = re.compile(r'<tr class="doc-section-item">\s*<td\b[^>]*>(?P<cell>.*?)</td>', re.DOTALL)


def section_tables(site: Path, path: str) -> dict[str, list[str]]:
    """The docstring tables under one object's heading on the built API pages (whichever page
    holds it): each table's title ("Parameters", "Returns", "Raises") and the text of its rows'
    first cells."""
    heading = f'id="{path}"'
    pages = [html.read_text(encoding="utf-8") for html in sorted((site / "reference" / "api").rglob("index.html"))]
    page = next(page for page in pages if heading in page)
    start = page.index(heading)
    following = _HEADING.search(page, start + 1)
    section = page[start : following.start() if following else len(page)]
    return {
        table["title"]: [re.sub(r"<[^>]+>|\s+", "", cell["cell"]) for cell in _FIRST_CELL.finditer(table["rows"])]
        for table in _TABLE.finditer(section)
    }


def test_the_built_api_pages_show_parameters_returns_and_raises_tables(built_site: Path) -> None:
    """mkdocstrings renders the sections as tables (Google style, as mkdocs.yml says): a method's
    parameters by name, what it returns, what it raises; a class's constructor merged into it."""
    tool = section_tables(built_site, "mcpref.Server.tool")
    assert tool["Parameters"] == parameters_of(cast(griffe.Function, resolved("mcpref.Server.tool")))
    assert len(tool["Returns"]) == 1 and tool["Raises"] == ["ValueError"]
    server = section_tables(built_site, "mcpref.Server")
    assert server["Parameters"] == parameters_of(cast(griffe.Function, resolved("mcpref.Server").members["__init__"]))
    assert section_tables(built_site, "mcpref.client.HTTPTransport.exchange")["Yields"]
