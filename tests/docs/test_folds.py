"""Folded frames (tests/docs/folds.py, frames_hook.py): what folds, and that folding is presentation
only: a folded frame is still compared whole, and the built page still holds every byte of it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sybil import Document

from tests.docs import frames_hook, pages
from tests.docs.folds import REQUEST_HEADERS, folds
from tests.docs.test_docs_harness import compare_not_refresh, outcomes  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[2]


def server_info() -> dict[str, str]:
    from mcpref.examples.reference_server import build_server

    return dict(build_server().info)


REQUEST = "\n".join(
    [
        "POST /mcp HTTP/1.1",
        *REQUEST_HEADERS,
        "Mcp-Method: tools/call",
        "Mcp-Name: convert_temperature",
        "",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {
                    "name": "convert_temperature",
                    "arguments": {"value": 0, "from": "C", "to": "K"},
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                        "io.modelcontextprotocol/clientCapabilities": {},
                    },
                },
            },
            indent=2,
        ),
    ]
)
RESPONSE = "\n".join(
    [
        "HTTP/1.1 200 OK",
        "Content-Type: application/json",
        "",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {
                    "resultType": "complete",
                    "content": [{"type": "text", "text": "0 °C = 273.1 K"}],
                    "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
                },
            },
            indent=2,
            ensure_ascii=False,
        ),
    ]
)


def page(request: str, response: str) -> str:
    return f"# A page\n\n```http\n{request}\n```\n\n```http\n{response}\n```\n"


def test_the_usual_headers_meta_and_server_info_fold() -> None:
    request_folds = folds(REQUEST)
    meta = REQUEST.split("\n").index('    "_meta": {')
    assert [(f.first, f.last) for f in request_folds] == [(1, 3), (meta, meta + 3)]
    assert request_folds[1].label == "… _meta as in every request"
    (result,) = folds(RESPONSE)
    lines = RESPONSE.split("\n")
    assert lines[result.first].strip() == '"_meta": {' and lines[result.last].strip() == "}"
    info = server_info()
    assert result.label == f"… _meta: serverInfo ({info['name']} {info['version']}) as in every result"


def test_what_is_not_boilerplate_does_not_fold() -> None:
    """Capabilities a client declares, and a `_meta` with anything else in it, are the point of their
    frame: they stay in view."""
    declared = REQUEST.replace('clientCapabilities": {}', 'clientCapabilities": {"elicitation": {}}')
    assert [(f.first, f.last) for f in folds(declared)] == [(1, 3)]
    key = '"io.modelcontextprotocol/serverInfo"'
    progress = RESPONSE.replace(key, '"progressToken": 1, ' + key)
    assert folds(progress) == []
    assert [f.label for f in folds(REQUEST.replace("Accept: application/json, text/event-stream\n", ""))] == [
        "… _meta as in every request"
    ]


def test_a_folded_frame_that_differs_from_the_server_still_fails(tmp_path: Path) -> None:
    assert outcomes(tmp_path, page(REQUEST, RESPONSE)) == [None]
    (fold,) = folds(RESPONSE)
    lines = RESPONSE.split("\n")
    info = server_info()
    for old, new in ((info["version"], info["version"] + ".9"), (info["title"], info["title"] + "!")):
        changed = "\n".join(
            line.replace(f'"{old}"', f'"{new}"') if fold.first <= n <= fold.last else line
            for n, line in enumerate(lines)
        )
        assert changed != RESPONSE and len(folds(changed)) == 1, "the changed lines are still folded"
        (report,) = outcomes(tmp_path, page(REQUEST, changed))
        assert report is not None and "$.result._meta" in report, report


def test_a_folded_request_header_is_still_sent_as_written(tmp_path: Path) -> None:
    wrong = REQUEST.replace("MCP-Protocol-Version: 2026-07-28", "MCP-Protocol-Version: 2025-06-18")
    (report,) = outcomes(tmp_path, page(wrong, RESPONSE))
    assert report is not None


def test_the_built_pages_hold_every_byte_of_each_folded_frame(built_site: Path) -> None:
    """The text of every folded block on the site (the buttons say what is folded with CSS, so they
    add no text) is exactly one of its page's fenced blocks."""
    checked = 0
    for html_file in sorted(built_site.rglob("index.html")):
        relative = html_file.parent.relative_to(built_site)
        source = ROOT / "docs" / (f"{relative}.md" if str(relative) != "." else "index.md")
        if not source.is_file():
            continue
        text = source.read_text(encoding="utf-8")
        shown = {b.source.rstrip("\n") for b in pages.blocks(Document(text, str(source)))}
        built = html_file.read_text(encoding="utf-8")
        for code in re.findall(r"<pre><span></span><code>(.*?)</code></pre>", built, re.DOTALL):
            if "mcpref-fold" not in code:
                continue
            checked += 1
            assert frames_hook.plain(code).rstrip("\n") in shown, (source, frames_hook.plain(code)[:200])
    assert checked > 100, "the site's folded frames"
