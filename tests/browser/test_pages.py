"""Every page, as a reader sees it at 1280 px and 390 px, light and dark (issue 15).

Each test reads the measurements `survey` took in its one pass over the site (conftest.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.conftest import ROOT, Visit, goto
from tests.docs.test_code_width import CODE_COLUMN

MIN_DIAGRAM_TEXT_PX = 12


def source_of(path: str) -> Path:
    stem = path.strip("/") or "index"
    # The changelog page is built from CHANGELOG.md at the root (overrides/published.py).
    for candidate in (ROOT / "docs" / f"{stem}.md", ROOT / "docs" / stem / "index.md", ROOT / f"{stem.upper()}.md"):
        if candidate.exists():
            return candidate
    raise AssertionError(f"no source page for {path}")


def each(survey: dict[str, Visit], viewport: str | None = None, palette: str | None = None) -> list[tuple[str, dict]]:
    """(where, facts) for every page at the viewports and palettes asked for (default: all)."""
    return [
        (f"{path} ({v}, {c})", facts)
        for path, visit in survey.items()
        for (v, c), facts in visit.facts.items()
        if viewport in (None, v) and palette in (None, c)
    ]


def test_every_page_loads_without_a_console_error_or_a_failed_request(survey: dict[str, Visit]) -> None:
    problems = {path: v.console_errors + v.failed_responses for path, v in survey.items()}
    assert {path: found for path, found in problems.items() if found} == {}


def test_no_request_leaves_127_0_0_1(survey: dict[str, Visit]) -> None:
    assert {path: v.outside_requests for path, v in survey.items() if v.outside_requests} == {}


def test_every_mermaid_block_is_parsed_and_drawn_with_no_error_graphic(survey: dict[str, Visit]) -> None:
    """Was: a `;` in a sequence-diagram Note ended the statement, and mermaid's "Syntax error"
    graphic landed under the footer while the suite only checked the diagram's type."""
    for path, visit in survey.items():
        expected = len(re.findall(r"^```mermaid\s*$", source_of(path).read_text(encoding="utf-8"), re.MULTILINE))
        for where, facts in visit.facts.items():
            assert [d["rendered"] for d in facts["diagrams"]] == ["ok"] * expected, (path, where)
            assert facts["errorGraphics"] == 0 and not facts["syntaxErrorText"], (path, where)


def test_labels_broken_with_br_reach_mermaid_as_line_breaks(survey: dict[str, Visit]) -> None:
    """Was: `<br/>` was stripped before mermaid saw it, so "envelope" and "parse_message" ran together."""
    facts = survey["/reference/performance/"].facts[("desktop", "light")]
    labels = [label for d in facts["diagrams"] for label in d["labels"]]
    assert "parse + envelope\nparse_message 32 k" in labels, labels


@pytest.mark.parametrize("palette", ["light", "dark"])
def test_diagram_labels_meet_wcag_aa_contrast(survey: dict[str, Visit], palette: str) -> None:
    """Was: in dark mode, light text on pastel boxes and dark-on-dark alt/else labels."""
    low = {}
    for where, facts in each(survey, "desktop", palette):
        for d in facts["diagrams"]:
            assert d["labels"], f"{where}: a diagram with no label measured"
            low.setdefault(where, []).extend(d["lowContrast"])
    assert {where: found for where, found in low.items() if found} == {}
    measured = sum(len(d["labels"]) for _, facts in each(survey, "desktop", palette) for d in facts["diagrams"])
    assert measured > 100, "the labels of every diagram on the site"


@pytest.mark.parametrize("viewport", ["desktop", "mobile"])
def test_diagram_text_is_readable_or_the_diagram_can_be_expanded(survey: dict[str, Visit], viewport: str) -> None:
    """Was: wide diagrams shrank into the column, 5–10 px text on desktop and 2.7 px on mobile.
    Now no label is drawn under 12 px; on a phone, a diagram wider than the column scrolls in its
    figure and has an Expand control."""
    small = {}
    for where, facts in each(survey, viewport):
        for d in facts["diagrams"]:
            if d["minTextPx"] is not None and d["minTextPx"] < MIN_DIAGRAM_TEXT_PX - 0.01:
                small[where] = d["minTextPx"]
    assert small == {}
    wide = survey["/reference/performance/"].facts[("mobile", "light")]["diagrams"][0]
    assert wide["expand"], "on a phone the performance flowchart is wider than the column: it needs its Expand control"


def test_every_diagram_fits_the_column_at_1280_px(survey: dict[str, Visit]) -> None:
    """Was: 16 diagrams wider than the 688 px column at 1280 px, scrolling sideways in their figure
    (the several-instances sequence 1337 px, the authorization flow 1154 px); and the step numbers
    of the message trace and the MRTR sequence were 12 px at full size, so they held those diagrams
    at full size (831 px, 1293 px) and would have been under 12 px fitted; and a diagram drawn
    small on a phone stayed small once the window widened (the home page's, 509 px at 12 px text
    in a 688 px column: its figure was only as wide as the diagram it held; issue 23)."""
    misfits = {}
    for where, facts in each(survey, "desktop"):
        for d in facts["diagrams"]:
            # Fitted, never shrunk where the column has room for more, text never under 12 px.
            room = min(d["naturalPx"], d["columnPx"])
            if not room - 1 <= d["drawnPx"] <= d["columnPx"] + 1 or d["minTextPx"] < MIN_DIAGRAM_TEXT_PX - 0.01:
                found = f"{d['drawnPx']:.0f} px in {d['columnPx']}, text {d['minTextPx']:.1f} px"
                misfits.setdefault(where, []).append(f"{d['name']}: {found}")
    assert misfits == {}
    for path in ("/internals/message-trace/", "/internals/primitives-and-mrtr/"):
        numbered = [d["sequenceNumberPx"] for d in survey[path].facts[("desktop", "light")]["diagrams"]]
        assert numbered and None not in numbered, f"{path}: the step numbers are measured"


def test_no_empty_line_under_a_page_title(survey: dict[str, Visit]) -> None:
    """Was: where the title's ¶ anchor wrapped, it took a line of its own, an empty line between the
    title and the TL;DR (home and serverless state at 1280 px, three pages at 390 px; issue 23)."""
    assert [where for where, f in each(survey) if not f["titleLines"]] == [], "every page has a title"
    lines = {where: f["titleLines"] for where, f in each(survey)}
    assert {where: found for where, found in lines.items() if found["box"] != found["text"]} == {}


def test_no_page_scrolls_sideways_on_a_phone(survey: dict[str, Visit]) -> None:
    assert {where: f["sidewaysScroll"] for where, f in each(survey, "mobile") if f["sidewaysScroll"] > 0} == {}


def test_inline_code_in_tables_is_not_broken_inside_a_word(survey: dict[str, Visit]) -> None:
    assert {where: f["brokenTableCode"] for where, f in each(survey) if f["brokenTableCode"]} == {}


def test_long_lines_in_code_are_wrapped_or_visibly_scrollable(survey: dict[str, Visit]) -> None:
    """Was: SSE `data:` lines of up to 265 characters cut off, the scrollbar shown only on hover."""
    assert {where: f["hiddenCode"] for where, f in each(survey) if f["hiddenCode"]} == {}


def test_no_block_a_reader_copies_or_reads_is_cut_at_desktop_width(survey: dict[str, Visit]) -> None:
    """At 1280 px a reader reads the Python, the files shown whole, the HTML, shell, nginx and
    markdown, and what a program printed, without scrolling sideways: the code fits the code
    column (tests/docs/test_code_width.py), an Output block or a shown config file wraps
    (reference.css). Was: the home page's hello cut (`era_cache=EraCac...`), MCP Apps' Output
    lines, and its view's HTML scrolled by 315 px; `deploy/run` and the nginx location on Run it."""
    kinds = ("python", "text", "pycon", "html", "bash", "shell", "sh", "nginx", "markdown", "md")
    read = tuple(f"language-{kind}:" for kind in kinds)
    cut = {where: [c for c in f["cutCode"] if c.startswith(read)] for where, f in each(survey, "desktop")}
    assert {where: blocks for where, blocks in cut.items() if blocks} == {}


#: For each Python block shown: a line of `n` characters added at its end, measured, and taken away.
CODE_LINE_FITS = """(n) => [...document.querySelectorAll(".language-python pre > code")]
  .filter((code) => code.getClientRects().length > 0)
  .map((code) => {
    const style = getComputedStyle(code);
    const room = code.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const line = document.createElement("span");
    line.textContent = "0".repeat(n);
    const newline = document.createTextNode("\\n");
    code.append(newline, line);
    const width = line.getBoundingClientRect().width;
    newline.remove();
    line.remove();
    return { room, width, holds: Math.floor(room / (width / n)) };
  })"""


def test_a_line_as_long_as_the_code_column_fits_a_python_block_at_1280_px(page: Any, site_url: str) -> None:
    """The bound tests/docs/test_code_width.py holds every Python line to, true in the browser: a
    line of exactly CODE_COLUMN characters shows whole in each Python block of a guide, inside
    its padding and beside the copy button's gutter, without scrolling. Was: 426 lines of up to
    127 characters, cut at 75 behind the block's scrollbar."""
    goto(page, site_url + "/guides/build-a-server/")
    blocks = page.evaluate(CODE_LINE_FITS, CODE_COLUMN)
    assert len(blocks) >= 10, "the guide's Python blocks, the shown files and the runs"
    too_narrow = [b for b in blocks if b["width"] > b["room"] + 0.5]
    assert too_narrow == [], f"a block holds {min(b['holds'] for b in blocks)} characters, not {CODE_COLUMN}"


def test_no_tab_strip_has_two_tabs_with_the_same_label(survey: dict[str, Visit]) -> None:
    """Was: on Migrating, changes 5 to 9, three comparisons back to back merged into one strip of six
    tabs, "2025-11-25 · 2026-07-28" three times, cut at 390 px (an outside reader)."""
    assert {where: f["repeatedTabs"] for where, f in each(survey) if f["repeatedTabs"]} == {}
    strips = survey["/guides/migrating-2/"].facts[("desktop", "light")]["tabStrips"]
    assert strips >= 7, f"{strips} tab strips measured on Migrating, changes 5 to 9: one per comparison"


def test_copy_buttons_do_not_cover_text(survey: dict[str, Visit]) -> None:
    assert {where: f["coveredByCopy"] for where, f in each(survey) if f["coveredByCopy"]} == {}


def test_every_page_links_its_markdown_alternate(survey: dict[str, Visit], built_site: Path) -> None:
    for path, visit in survey.items():
        assert visit.facts[("desktop", "light")]["markdownLink"] in ("index.md", "./index.md"), path
        assert (built_site / path.strip("/") / "index.md").is_file(), path


def test_no_request_is_shown_twice_on_load(survey: dict[str, Visit]) -> None:
    """Was: the console's raw editor under every request frame was shown on load, the same request
    a second time (`display: block` won over `hidden`); issue 23 item 1."""
    assert {where: f["shownEditors"] for where, f in each(survey) if f["shownEditors"]} == {}


def test_a_tldr_is_in_the_body_type_size(survey: dict[str, Visit]) -> None:
    """Was: 13.6 px TL;DR text above 17 px body text on a phone (issue 23 item 7)."""
    assert {where: f["smallTldr"] for where, f in each(survey) if f["smallTldr"]} == {}


def test_sse_data_lines_are_highlighted_and_wrap_between_tokens(survey: dict[str, Visit]) -> None:
    """Was: a stream's `data:` lines were plain text, wrapped at the column's edge mid-token
    (issue 23 item 7)."""
    assert {where: f["plainData"] for where, f in each(survey) if f["plainData"]} == {}
    assert {where: f["brokenTokens"] for where, f in each(survey) if f["brokenTokens"]} == {}


def test_every_diagram_has_an_accessible_name(survey: dict[str, Visit]) -> None:
    """Was: a drawn diagram had role="img" and no name (issue 23 item 5)."""
    unnamed = {where: f["diagrams"] for where, f in each(survey) if any(not d["name"] for d in f["diagrams"])}
    assert unnamed == {}
    names = [d["name"] for _, f in each(survey, "desktop", "light") for d in f["diagrams"]]
    assert "Sequence diagram: The whole exchange at a glance" in names, names


def test_no_two_diagrams_on_a_page_share_a_name(survey: dict[str, Visit]) -> None:
    """Was: each diagram was named after its section, so the two diagrams under one heading (the
    serverless state deployment, the versioning decisions) shared a name (issue 23)."""
    shared = {}
    for where, facts in each(survey):
        names = [d["name"] for d in facts["diagrams"]]
        if len(set(names)) != len(names):
            shared[where] = names
    assert shared == {}
    names = [d["name"] for d in survey["/patterns/serverless-state/"].facts[("desktop", "light")]["diagrams"]]
    assert names == [
        "Flowchart: a balancer without stickiness in front of instances that share only a key and your data",
        "Sequence diagram: a handle from instance A redeemed at instance B",
    ], "an accTitle names its diagram"


def test_on_a_phone_a_cut_diagram_says_so_and_expand_shows_it_whole(survey: dict[str, Visit]) -> None:
    """Was: on a phone the home page's diagram lost its Server lane with nothing to say it
    scrolls, and Expand opened a dialog at the same scale, still cut, half of it empty, its Close
    button about 38x14 px (issue 23). Now a cut diagram says it scrolls, beside an Expand control a
    finger can press; Expand fills the screen with the diagram fitted to its width where the text
    stays at 12 px or more, else at 12 px with every edge reachable by scrolling, and Close is at
    least 44x44 px, on screen. The text of these controls meets WCAG AA (4.5:1) in both palettes."""
    problems: dict[str, list[str]] = {}
    opened = 0
    for where, facts in each(survey, "mobile"):
        for d in facts["diagrams"]:
            found = []
            if d.get("cut") and not (d["hint"] and d["expandPx"] and min(d["expandPx"]) >= 44):
                found.append(f"cut in place: hint {d['hint']!r}, Expand {d['expandPx']}")
            shown = d.get("expanded")
            if d["expand"]:
                opened += 1
                if not (shown and shown["opened"] and shown["closed"] and shown["fillsWindow"]):
                    found.append(f"dialog {shown}")
                elif shown["minTextPx"] < MIN_DIAGRAM_TEXT_PX - 0.01 or not (
                    shown["fitsWidth"] or shown["minTextPx"] < MIN_DIAGRAM_TEXT_PX + 0.01
                ):
                    found.append(f"expanded: text {shown['minTextPx']:.2f} px, fits the width: {shown['fitsWidth']}")
                elif not (shown["everyEdgeReachable"] and shown["closeInView"] and min(shown["closePx"]) >= 44):
                    found.append(f"expanded: edges reachable {shown['everyEdgeReachable']}, Close {shown['closePx']}")
                elif not shown["fitsWidth"] and not shown["hint"] or shown["name"] != d["name"]:
                    found.append(f"expanded: hint {shown['hint']!r}, named {shown['name']!r}")
                elif min(shown["contrast"]) < 4.5:
                    found.append(f"expanded: hint and Close at {shown['contrast']}:1")
            if min(d.get("controlsContrast") or [21]) < 4.5:
                found.append(f"in place: hint and Expand at {d['controlsContrast']}:1")
            if found:
                problems.setdefault(where, []).extend(f"{d['name']}: {f}" for f in found)
    assert problems == {}
    assert opened > 20, "every diagram page at 390 px, both palettes, has a diagram that Expand opened"
    home = survey["/"].facts[("mobile", "light")]["diagrams"][0]
    assert home["cut"] and home["expanded"]["everyEdgeReachable"], home
