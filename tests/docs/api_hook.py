"""mkdocs hook: each object of the API reference links to its source in the repository.

mkdocstrings renders an object's heading with its path as the id (`id="mcpref.client.Client"`);
griffe, which it reads the code with, knows the file and line of each, aliases followed to where
they are defined. The link goes to `repo_url` at the commit the site is built from (the one its
footer names, `overrides/published.py`), so that its line stays the object's as `main` moves on;
`main` only when the site is not built from a git clone. Without a `repo_url` there is nowhere to
link, and the headings stay as they are.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import griffe

FOLDER = "reference/api/"
_HEADING_END = re.compile(
    r'(?P<open><h(?P<level>[2-6]) id="(?P<path>mcpref(?:\.\w+)*)" class="doc doc-heading">.*?)'
    r"(?P<close></h(?P=level)>)",
    re.DOTALL,
)


@cache
def _package() -> Any:
    return griffe.load("mcpref", search_paths=["."])


def source_of(path: str) -> tuple[str, int] | None:
    """(file relative to the repository, first line) of the object at `path`, if griffe finds it."""
    try:
        found = _package()[path.removeprefix("mcpref.")] if path != "mcpref" else _package()
        target = found.final_target if found.is_alias else found
        return str(target.relative_package_filepath), int(target.lineno or 1)
    except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError, AttributeError):
        return None


def linked(html: str, repo_url: str, ref: str = "main") -> str:
    def add(match: re.Match[str]) -> str:
        found = source_of(match["path"])
        if found is None:
            return match.group(0)
        file, line = found
        href = f"{repo_url.rstrip('/')}/blob/{ref}/{file}#L{line}"
        link = f'<a class="mcpref-source" href="{href}" title="{file}, line {line}" data-search-exclude>source</a>'
        return match["open"] + link + match["close"]

    return _HEADING_END.sub(add, html)


def on_page_content(html: str, page: Any, config: Any, **_: Any) -> str:
    repo_url = config.get("repo_url")
    if not repo_url or not page.file.src_uri.startswith(FOLDER):
        return html
    return linked(html, repo_url, config.extra.get("verified", {}).get("sha") or "main")
