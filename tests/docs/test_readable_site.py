"""The built site, read as issue 23 asked: an API reference laid out by what a reader needs, with
its sections, typed results and source links; compliance without its process leftovers."""

from __future__ import annotations

import re
import typing
from pathlib import Path

from mcpref.client import Client
from tests.docs import api_hook

ROOT = Path(__file__).resolve().parents[2]


def headings(html: str) -> list[str]:
    return re.findall(r'<h[2-6] id="(mcpref[\w.]*)" class="doc doc-heading">', html)


def test_the_api_reference_starts_with_what_a_reader_needs(built_site: Path) -> None:
    """Was: one 49k-px page of 199 objects in source order, error constants before `Server`."""
    server = (built_site / "reference/api/server/index.html").read_text(encoding="utf-8")
    assert headings(server)[0] == "mcpref.Server"
    client = (built_site / "reference/api/client/index.html").read_text(encoding="utf-8")
    assert headings(client)[0] == "mcpref.client.Client"
    methods = [h.rsplit(".", 1)[1] for h in headings(client) if h.startswith("mcpref.client.Client.")]
    assert methods.index("discover") < methods.index("call_tool") < methods.index("cancel_task"), methods
    tools = (built_site / "reference/api/tools/index.html").read_text(encoding="utf-8")
    found = headings(tools)
    assert found.index("mcpref.ToolResult") < found.index("mcpref.PARSE_ERROR")


def test_the_client_calls_show_parameters_returns_and_raises(built_site: Path) -> None:
    client = (built_site / "reference/api/client/index.html").read_text(encoding="utf-8")
    start = client.index('id="mcpref.client.Client.call_tool"')
    section = client[start : client.index('class="doc doc-heading"', start + 100)]
    for title in ("Parameters:", "Returns:", "Raises:"):
        assert f'doc-section-title">{title}' in section, title
    assert "ToolCallResult" in section


def test_what_the_client_returns_is_typed() -> None:
    """Was: `dict[str, Any]` for every result."""
    untyped = {}
    for name in ("discover", "list_tools", "call_tool", "list_resources", "read_resource", "get_prompt", "complete"):
        returned = typing.get_type_hints(getattr(Client, name))["return"]
        shape = typing.get_args(returned)[0] if typing.get_origin(returned) is list else returned
        if not typing.is_typeddict(shape):
            untyped[name] = returned
    assert untyped == {}


def test_each_api_object_links_to_the_line_that_defines_it(built_site: Path) -> None:
    client = (built_site / "reference/api/client/index.html").read_text(encoding="utf-8")
    linked = api_hook.linked(client, "https://example.com/mcpref")
    links = re.findall(r'<a class="mcpref-source" href="https://example.com/mcpref/blob/main/([^#"]+)#L(\d+)"', linked)
    assert len(links) == len(headings(client)), "one source link per object"
    for file, line in links:
        text = (ROOT / file).read_text(encoding="utf-8").splitlines()[int(line) - 1]
        assert re.match(r"\s*(class |def |async def |@|\w+\s*[:=])", text), (file, line, text)
    assert "api_hook.py" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")


def test_compliance_has_no_process_leftovers_and_contributing_says_how_to_add_an_entry(built_site: Path) -> None:
    overview = (built_site / "reference/compliance/index.html").read_text(encoding="utf-8")
    assert "requirements-b" not in overview and "Adding or changing an entry" not in overview
    contributing = (built_site / "contributing/index.html").read_text(encoding="utf-8")
    assert 'id="the-compliance-matrix"' in contributing and "same_evidence_as" in contributing
    assert not (ROOT / "docs/reference/requirements-b.yaml").exists()


def test_the_traces_try_it_names_the_call_its_curl_makes() -> None:
    """Was: "replay frame 3 with curl. The answer is the same JSON as above", under a curl that
    called another tool than frame 3 did."""
    page = (ROOT / "docs/internals/message-trace.md").read_text(encoding="utf-8")
    section = page[page.index("## Try it yourself") :]
    prose, _, block = section.partition("```console")
    called = re.search(r'"name":"(\w+)"', block)
    assert called and f"`{called[1]}`" in prose, prose
    assert "same JSON as above" not in prose
