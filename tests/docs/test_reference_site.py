"""The reference pages as built: the server's API page in the order a reader needs it, source links
that stay on their line as `main` moves, tables that can stack on a phone (issue 23; the stranger's
findings 13 and 14)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from types import SimpleNamespace

from overrides import stacked_tables

ROOT = Path(__file__).resolve().parents[2]


def ids(html: str) -> list[str]:
    return re.findall(r'<h[2-6] id="([^"]+)"', html)


def test_the_server_page_puts_registration_first_and_internals_under_lower_level(built_site: Path) -> None:
    """Was: `add_extension` before `tool`, and `accept`, `answer`, `handle`, `handler_for`,
    `finish_subscription`, the relay, shares, frame log and telemetry among what a reader calls."""
    found = ids((built_site / "reference/api/server/index.html").read_text(encoding="utf-8"))
    assert found[0] == "mcpref.Server"
    first_part = found[: found.index("mcpref.RequestContext")]
    methods = [i.rsplit(".", 1)[1] for i in first_part if i.startswith("mcpref.Server.")]
    assert methods[:4] == ["tool", "resource", "resource_template", "prompt"], methods
    lower = found.index("lower-level")
    internals = ["accept", "answer", "handle", "handler_for", "finish_subscription", "open_subscription", "start"]
    assert [name for name in internals if found.index(f"mcpref.Server.{name}") < lower] == []
    for part in ("mcpref.relay.Relay", "mcpref.shares.PostgresShares", "mcpref.FrameLog", "mcpref.telemetry.span"):
        assert found.index(part) > lower, part
    assert found.index("mcpref.RequestContext") < found.index("serving-from-the-command-line") < lower


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
<tr class="doc-section-item">
<td><code>-32700</code></td>
<td style="text-align: left;">400 &amp; more</td>
</tr>
</tbody>
</table>"""


def test_a_page_that_asks_gets_tables_whose_cells_carry_their_column_names() -> None:
    stacked = stacked_tables.stacked(ROWS)
    assert stacked.startswith('<div class="mcpref-stacked"><table>') and stacked.endswith("</table></div>")
    assert '<tr class="doc-section-item">\n<td data-label="code"><code>-32700</code></td>' in stacked
    assert '<td data-label="HTTP (mcpref)" style="text-align: left;">400 &amp; more</td>' in stacked
    asked = SimpleNamespace(meta={"stacked_tables": True})
    assert stacked_tables.on_page_content(ROWS, page=asked) == stacked
    assert stacked_tables.on_page_content(ROWS, page=SimpleNamespace(meta={})) == ROWS


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
