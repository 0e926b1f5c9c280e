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
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest

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
from tests.conftest import running
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
