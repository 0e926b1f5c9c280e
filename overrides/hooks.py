"""MkDocs hooks for the site: what the theme and plugins cannot be told in mkdocs.yml.

- Every page goes into /llms.txt, grouped as the nav groups it, each with a one-line summary taken
  from the page's own TL;DR, so a new page needs no second list to keep in step.
- Diagram source stays out of the search index (a result preview showed raw mermaid), and reaches
  the Markdown alternate as a ```mermaid block rather than an anonymous one, and
  mkdocs-mermaid2-plugin as the code block it draws.
- Each page links its Markdown copy (built beside it by the llmstxt plugin) and the llms files.
  Added to the finished page, so neither search nor the Markdown copy picks the link up. An
  <a rel="alternate">, not a <link>: Material takes every <link rel="alternate"> for a language
  version and fetches a sitemap beside it.
"""

from __future__ import annotations

import re

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

#: Where pages that sit at the top of the nav, outside any section, are listed in /llms.txt.
TOP_LEVEL_SECTION = "Start here"

_TLDR = re.compile(r'^!!! \w+ "TL;DR"\n((?:[ ]{4}.*\n|\n)+)', re.MULTILINE)
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_MERMAID = re.compile(r'<pre class="mermaid"><code>(.*?)</code></pre>', re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(])")


def summary(markdown: str) -> str:
    """The first sentence of the page's TL;DR, else of its first paragraph, as plain one-line text."""
    found = _TLDR.search(markdown)
    if found:
        text = found.group(1)
    else:
        paragraphs = [p for p in re.split(r"\n\s*\n", markdown) if p.strip() and p.lstrip()[0] not in "#!<`"]
        text = paragraphs[0] if paragraphs else ""
    text = " ".join(text.split())
    text = _LINK.sub(r"\1", text).replace("**", "")
    return _SENTENCE_END.split(text, maxsplit=1)[0]


@event_priority(100)  # before the llmstxt plugin reads its sections
def on_files(files: Files, *, config: MkDocsConfig) -> Files:
    sections: dict[str, list[dict[str, str]]] = {}
    listed: set[str] = set()

    def add(section: str, src_uri: str) -> None:
        file = files.get_file_from_path(src_uri)
        if file is None or src_uri in listed:
            return
        listed.add(src_uri)
        sections.setdefault(section, []).append({src_uri: summary(file.content_string)})

    def walk(items: list, section: str) -> None:
        for item in items:
            if isinstance(item, dict):
                ((title, value),) = item.items()
                if isinstance(value, list):
                    walk(value, title)
                elif isinstance(value, str) and value.endswith(".md"):
                    add(section, value)
            elif isinstance(item, str) and item.endswith(".md"):
                add(section, item)

    walk(config.nav or [], TOP_LEVEL_SECTION)
    for file in files.documentation_pages():  # pages outside the nav still get a Markdown copy
        add("Other pages", file.src_uri)
    config.plugins["llmstxt"].config.sections = sections
    return files


@event_priority(100)  # before the llmstxt plugin converts the page and search indexes it
def on_page_content(html: str, *, page: Page, config: MkDocsConfig, files: Files) -> str:
    # As a code block of language mermaid, the markup mkdocs-mermaid2-plugin looks for (it makes
    # each a <div class="mermaid"> and puts mermaid on the page), and the llmstxt plugin writes as
    # a ```mermaid block; the source stays escaped, so a label's `<br/>` reaches mermaid as text.
    return _MERMAID.sub(
        r'<div class="language-mermaid" data-search-exclude><pre><code class="language-mermaid">\1</code></pre></div>',
        html,
    )


_ALTERNATE = (
    '<p class="mcpref-alternate"><a href="{page}" rel="alternate" type="text/markdown">This page as Markdown</a>'
    ' · <a href="{root}llms.txt">llms.txt</a> · <a href="{root}llms-full.txt">llms-full.txt</a></p>'
)


#: mkdocs-mermaid2-plugin writes the import of mermaid relative to the page, which for a page at
#: the site's root is a bare `assets/...`: a module specifier a browser refuses ("Relative
#: references must start with either /, ./, or ../"), so the home page drew no diagram.
_BARE_IMPORT = re.compile(r'(<script type="module">import mermaid from ")(?![./])')


def on_post_page(output: str, *, page: Page, config: MkDocsConfig) -> str:
    output = _BARE_IMPORT.sub(r"\1./", output)  # after the plugin's on_post_page: hooks run last
    if not page.file.src_uri.endswith(".md") or "</article>" not in output:
        return output
    depth = page.url.count("/")  # "internals/overview/" -> 2: the site root is ../../
    link = _ALTERNATE.format(page="index.md", root="../" * depth or "./")
    head, _, tail = output.rpartition("</article>")
    return f"{head}{link}</article>{tail}"
