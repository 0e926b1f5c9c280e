"""The reference pages as built: the server's API page in the order a reader needs it, source links
that stay on their line as `main` moves, tables that can stack on a phone (issue 23; the stranger's
findings 13 and 14)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

from overrides import stacked_tables

ROOT = Path(__file__).resolve().parents[2]


def ids(html: str) -> list[str]:
    return re.findall(r'<h[2-6] id="([^"]+)"', html)


def test_the_server_page_puts_registration_first_and_internals_on_lower_level_pages(built_site: Path) -> None:
    """Was: `add_extension` before `tool`, and `accept`, `answer`, `handle`, `handler_for`,
    `finish_subscription`, the relay, shares, frame log and telemetry among what a reader calls."""

    def found(page: str) -> list[str]:
        return ids((built_site / f"reference/api/{page}/index.html").read_text(encoding="utf-8"))

    server = found("server")
    assert server[0] == "mcpref.Server"
    first_part = server[: server.index("mcpref.RequestContext")]
    methods = [i.rsplit(".", 1)[1] for i in first_part if i.startswith("mcpref.Server.")]
    assert methods[:5] == ["tool", "resource", "resource_template", "prompt", "add_extension"], methods
    assert server.index("mcpref.RequestContext") < server.index("serving-from-the-command-line")
    assert server[-1] == "lower-level", "the page ends by saying where the rest is"
    internals = ["accept", "answer", "handle", "handler_for", "finish_subscription", "open_subscription", "start"]
    lower = found("server-lower")
    assert [name for name in internals if f"mcpref.Server.{name}" in server] == []
    assert [name for name in internals if f"mcpref.Server.{name}" not in lower] == []
    assert "mcpref.OriginPolicy" in lower and "mcpref.FrameLog" in lower
    deployment = found("deployment")
    for part in ("mcpref.relay.Relay", "mcpref.shares.PostgresShares", "mcpref.telemetry.span"):
        assert part in deployment and part not in server, part


def test_links_to_what_left_the_server_page_land_on_its_new_page(built_site: Path) -> None:
    moved = json.loads((ROOT / "docs/assets/moved.json").read_text(encoding="utf-8"))["reference/api/server/"]
    for anchor, target in moved.items():
        assert f'id="{anchor}"' in (built_site / target / "index.html").read_text(encoding="utf-8"), anchor
    assert "mcpref.Server.accept" in moved and "mcpref.telemetry.span" in moved


def test_source_links_are_pinned_to_the_commit_the_site_is_built_from(built_site: Path) -> None:
    """Was: `blob/main/...#L<line>`, a line that drifts as main moves on."""
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True)
    page = (built_site / "reference/api/server/index.html").read_text(encoding="utf-8")
    refs = set(re.findall(r'class="mcpref-source" href="https://github\.com/mcpref/mcpref/blob/([^/]+)/', page))
    assert refs == {head.stdout.strip()}


ROWS = """<table>
<thead>
<tr>
<th>code</th>
<th>HTTP (<code>mcpref</code>)</th>
</tr>
</thead>
<tbody>
<tr>
<td><code>-32700</code></td>
<td style="text-align: left;">400 &amp; more</td>
</tr>
</tbody>
</table>"""


def test_tables_get_cells_that_carry_their_column_names_unless_a_page_declines() -> None:
    stacked = stacked_tables.stacked(ROWS)
    assert stacked.startswith('<div class="mcpref-stacked"><table>') and stacked.endswith("</table></div>")
    assert '<tr>\n<td data-label="code"><code>-32700</code></td>' in stacked
    assert '<td data-label="HTTP (mcpref)" style="text-align: left;">400 &amp; more</td>' in stacked
    assert stacked_tables.on_page_content(ROWS, page=SimpleNamespace(meta={})) == stacked
    declined = SimpleNamespace(meta={"stacked_tables": False})
    assert stacked_tables.on_page_content(ROWS, page=declined) == ROWS
    docstring = ROWS.replace("<tr>\n<td><code>", '<tr class="doc-section-item">\n<td><code>')
    assert '<tr class="doc-section-item">\n<td data-label="code"><code>-32700</code></td>' in stacked_tables.stacked(
        docstring
    ), "mkdocstrings' tables stack as every other table does"


def test_the_errors_page_is_built_with_stacking_tables(built_site: Path) -> None:
    page = (built_site / "reference/errors/index.html").read_text(encoding="utf-8")
    assert page.count('<div class="mcpref-stacked">') >= 4
    assert '<td data-label="data"><code>{requiredCapabilities}</code></td>' in page


def test_a_json_body_sent_as_plain_text_is_highlighted_as_json(built_site: Path) -> None:
    """Was: the request Transports shows refused with 415 (`Content-Type: text/plain`) had its body
    in plain text, since Pygments picks an HTTP body's lexer by the Content-Type alone."""
    page = (built_site / "internals/transports/index.html").read_text(encoding="utf-8")
    start = page.index('<span class="l">text/plain</span>')
    body = page[start : page.index("</code></pre>", start)]
    assert re.search(r'<span class="nt">(&quot;|")jsonrpc(&quot;|")</span>', body), body[:400]


def test_the_home_page_cites_the_spec_by_its_pages_titles(built_site: Path) -> None:
    """Was: "What MCP 2026-07-28 is" cited `basic/index.mdx` and three other file names."""
    page = (built_site / "index.html").read_text(encoding="utf-8")
    start = page.index("The specification is the authority")
    cited = page[start : page.index("</p>", start)]
    assert ".mdx" not in cited and ">Base Protocol: Overview</a>" in cited, cited


def test_each_api_page_lists_what_a_reader_uses_before_constants(built_site: Path) -> None:
    """Was: the constants first wherever a page listed a module's names (`UI_EXTENSION` before
    `AppsExtension`, `TASKS_EXTENSION` before `TasksExtension`, error codes before `ToolError`)."""

    def order(page: str) -> list[str]:
        return ids((built_site / f"reference/api/{page}/index.html").read_text(encoding="utf-8"))

    pairs = [
        ("extensions", "mcpref.extensions.Extension", "mcpref.extensions.Handler"),
        ("apps", "mcpref.apps.AppsExtension", "mcpref.apps.UI_EXTENSION"),
        ("extensions", "mcpref.sealing.Sealer", "mcpref.sealing.KEY_ENV_VAR"),
        ("tasks", "mcpref.tasks.TasksExtension", "mcpref.tasks.TASKS_EXTENSION"),
        ("tools", "mcpref.ToolError", "mcpref.PARSE_ERROR"),
        ("tools", "mcpref.elicit_form", "mcpref.InputRequired"),
        ("deployment", "mcpref.relay.Relay", "mcpref.relay.STALE"),
    ]
    wrong = [(page, a, b) for page, a, b in pairs if not order(page).index(a) < order(page).index(b)]
    assert wrong == []


def test_inline_code_with_a_space_may_wrap_and_a_name_stays_whole() -> None:
    """Was: at 390 px a command's argv in a description (`["python", "-m", ...]`) and annotations
    such as `Callable[[Callable[..., Any]], ...]` widened their stacked row past the screen."""
    html = (
        '<table><td><code>x-mcp-header</code> or <code>["python", "-m"]</code></td>'
        '<td><code><span title="typing.Any">Any</span> | None</code></td></table>'
        "<p><code>a b</code></p><pre><span></span><code>Server(\n    name: str,\n)</code></pre>"
    )
    assert stacked_tables.wrappable(html) == (
        '<table><td><code>x-mcp-header</code> or <code class="mcpref-wraps">["python", "-m"]</code></td>'
        '<td><code class="mcpref-wraps"><span title="typing.Any">Any</span> | None</code></td></table>'
        "<p><code>a b</code></p><pre><span></span><code>Server(\n    name: str,\n)</code></pre>"
    )


def test_links_to_what_left_the_extensions_page_land_on_the_mcp_apps_page(built_site: Path) -> None:
    moved = json.loads((ROOT / "docs/assets/moved.json").read_text(encoding="utf-8"))["reference/api/extensions/"]
    apps = (built_site / "reference/api/apps/index.html").read_text(encoding="utf-8")
    assert moved and [anchor for anchor in moved if f'id="{anchor}"' not in apps] == []
