"""The compliance matrix: every normative statement of the 2026-07-28 specification, what mcpref
does about it, and the evidence (tests and executed frames) that shows it.

The data lives in `docs/reference/requirements.yaml` (one entry per obligation) and
`docs/reference/spec-pages.yaml` (each spec page's normative keyword count and headings, recorded
from the spec text so a clone without the spec can still be checked). This module loads both,
finds what is wrong with them (`problems`), and renders the Reference → Compliance page
(`render`, called by the mkdocs hook in `tests/docs/matrix_hook.py`).

Run `python -m tests.docs.matrix --record [SPEC_DIR]` to re-record spec-pages.yaml from the text, and
`--extract [SPEC_DIR]` to remake the extract of it kept in the repo (tests/docs/spec_extract).
"""

from __future__ import annotations

import ast
import html
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import yaml
from markdown.extensions.toc import slugify
from sybil import Document

ROOT = Path(__file__).resolve().parents[2]
REQUIREMENTS = [
    ROOT / "docs/reference/requirements.yaml",
    ROOT / "docs/reference/requirements-apps.yaml",
    ROOT / "docs/reference/requirements-tasks.yaml",
]
SPEC_PAGES = ROOT / "docs/reference/spec-pages.yaml"
REVISION = "2026-07-28"
PUBLISHED = f"https://modelcontextprotocol.io/specification/{REVISION}"
#: Where the spec text sits next to a clone (../shared/spec/text, also from a worktree one level deeper).
SPEC_TEXT_CANDIDATES = [ROOT.parent / "shared/spec/text", ROOT.parent.parent / "shared/spec/text"]
#: The lines of the spec text that spec-pages.yaml is computed from, kept in the repo with the
#: text's licence (`extract`), so that every clone can check the record against the text.
SPEC_EXTRACT = ROOT / "tests/docs/spec_extract"
#: Extensions whose text is in the matrix too, by their path in the spec text (beside
#: `specification/`; in the extract, beside `2026-07-28/`), with where each is published.
EXTENSIONS = {
    "extensions/apps/apps-2026-01-26.mdx": (
        "https://github.com/modelcontextprotocol/ext-apps/blob/main/specification/2026-01-26/apps.mdx"
    ),
    "seps/2663-tasks-extension.md": "https://modelcontextprotocol.io/seps/2663-tasks-extension",
}

LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "REQUIRED", "RECOMMENDED", "SHALL", "SHALL NOT", "MAY")
STATUSES = ("implemented", "divergent", "not-implemented", "not-applicable")
ROLES = ("server", "client", "host", "authorization server")
FIELDS = ("id", "spec", "section", "level", "applies_to", "says", "status")
OPTIONAL_FIELDS = ("why", "issue", "evidence", "same_evidence_as")
ID = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+)*(?:\.[a-z0-9]+(?:[-_][a-z0-9]+)*)+")
#: An entry covers at least this share of its page's normative keywords.
COVERAGE = 0.95

#: A normative keyword as the spec uses it: upper case, not quoted (the BCP 14 boilerplate quotes
#: them), outside code fences. "MUST NOT" is one keyword; MAY and OPTIONAL are not counted.
KEYWORD = re.compile(r'(?<!")\b(MUST\s+NOT|MUST|SHOULD\s+NOT|SHOULD|REQUIRED|RECOMMENDED|SHALL\s+NOT|SHALL)\b(?!")')
FENCE = re.compile(r"^\s*```.*?^\s*```", re.MULTILINE | re.DOTALL)
SPEC_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
TEST_ID = re.compile(r"(?P<file>tests/[\w/]+\.py)::(?P<names>[\w:]+?)(?P<params>\[.*\])?")
ANCHOR_ID = re.compile(r"(?P<file>docs/[\w/-]+\.md)#(?P<slug>[\w.-]+)")
EXECUTED = ("http", "python", "console", "sse")


# -- the spec side ---------------------------------------------------------------------------


def spec_text_dir() -> Path | None:
    """The spec's own pages (`specification/<revision>/`) if this machine has them."""
    for candidate in SPEC_TEXT_CANDIDATES:
        pages = candidate / "specification" / REVISION
        if pages.is_dir():
            return pages
    return None


def extract(text: str) -> str:
    """The lines of a spec page that its record depends on: the front matter (the title), every
    fence line, every heading, and every line that holds a keyword's letters (quoted, in code or
    escaped as an HTML entity too, so that what the counting must leave out is there as well).
    `record` of the extract equals `record` of the page (tests/docs/test_requirements.py)."""
    front, _, rest = text.partition("\n---\n") if text.startswith("---\n") else ("", "", text)
    kept = [front + "\n---"] if front else []
    for line in rest.split("\n"):
        if line.lstrip().startswith("```") or SPEC_HEADING.fullmatch(line):
            kept.append(line)
        elif KEYWORD_LETTERS.search(line):
            kept.append(line if len(line) <= 200 else _around_keywords(line))
    return "\n".join(kept) + "\n"


KEYWORD_LETTERS = re.compile(r"MUST|SHOULD|REQUIRED|RECOMMENDED|SHALL")


def _around_keywords(line: str, reach: int = 32) -> str:
    """A long line (the schema page's generated HTML) cut to the stretches around its keywords."""
    spans: list[list[int]] = []
    for found in KEYWORD_LETTERS.finditer(line):
        start, end = max(0, found.start() - reach), min(len(line), found.end() + reach)
        if spans and start <= spans[-1][1]:
            spans[-1][1] = end
        else:
            spans.append([start, end])
    return " … ".join(line[start:end] for start, end in spans)


def write_extract(spec_dir: Path, out: Path = SPEC_EXTRACT / REVISION) -> None:
    sources = [(path, out / path.relative_to(spec_dir)) for path in sorted(spec_dir.rglob("*.mdx"))]
    sources += [(spec_dir.parent.parent / page, out.parent / page) for page in EXTENSIONS]
    for path, target in sources:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(extract(path.read_text(encoding="utf-8")), encoding="utf-8")


def extract_drift(spec_dir: Path, extracted: Path) -> list[str]:
    """Where the extract in the repo is not what `--extract` makes of the spec text."""
    pages = {path.relative_to(spec_dir) for path in spec_dir.rglob("*.mdx")}
    kept = {path.relative_to(extracted) for path in extracted.rglob("*.mdx")}
    found = [f"{page}: in the extract, not in the spec" for page in sorted(kept - pages)]
    for page in sorted(pages):
        if page not in kept or (extracted / page).read_text(encoding="utf-8") != extract(
            (spec_dir / page).read_text(encoding="utf-8")
        ):
            found.append(f"{page}: the extract differs from the spec text (python -m tests.docs.matrix --extract)")
    for page in EXTENSIONS:
        text, kept = spec_dir.parent.parent / page, extracted.parent / page
        made = extract(text.read_text(encoding="utf-8"))
        if not kept.is_file() or kept.read_text(encoding="utf-8") != made:
            found.append(
                f"{page}: the extract differs from the extension's text (python -m tests.docs.matrix --extract)"
            )
    return found


def keyword_count(text: str) -> int:
    """Normative keywords in prose; HTML entities are read first, so a `MISSING&#x5F;REQUIRED`
    identifier in the schema page's signatures is one word, not a REQUIRED."""
    return len(KEYWORD.findall(html.unescape(FENCE.sub("", text))))


def spec_headings(text: str) -> list[str]:
    return [_plain(h) for h in SPEC_HEADING.findall(FENCE.sub("", text))]


def _plain(heading: str) -> str:
    return heading.replace("`", "").strip()


def spec_title(text: str) -> str:
    """The page's own title (its front matter); rules above the first heading cite it."""
    found = re.search(r"^title:\s*(.+?)\s*$", text.split("\n---", 1)[0], re.MULTILINE)
    return found[1].strip("\"'") if found else ""


def record(spec_dir: Path, extensions_dir: Path | None = None) -> dict[str, dict[str, Any]]:
    """What spec-pages.yaml holds, computed from the spec text; with `extensions_dir` (the folder
    that holds `extensions/`), the `EXTENSIONS` pages too, after the specification's."""
    paths = {path.relative_to(spec_dir).as_posix(): path for path in sorted(spec_dir.rglob("*.mdx"))}
    if extensions_dir is not None:
        paths |= {page: extensions_dir / page for page in EXTENSIONS if (extensions_dir / page).is_file()}
    return {
        page: {
            "title": spec_title(text := path.read_text(encoding="utf-8")),
            "keywords": keyword_count(text),
            "headings": spec_headings(text),
        }
        for page, path in paths.items()
    }


def load_pages(path: Path = SPEC_PAGES) -> dict[str, dict[str, Any]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def anchor(heading: str) -> str:
    """The published site's anchor for a spec heading: lower case, words joined by hyphens,
    punctuation dropped except `&`, which the site keeps, URL-encoded (`security-and-trust-%26-safety`)."""
    words = re.sub(r"[^a-z0-9 &-]", "", _plain(heading).lower()).split()
    return "-".join(words).replace("&", "%26")


def spec_url(page: str, section: str | None = None) -> str:
    """The published address of a spec page (an `index.mdx` is its folder) and section; a rule
    cited by the page's title sits above its first heading, so it gets no anchor."""
    if page in EXTENSIONS:
        return f"{EXTENSIONS[page]}#{github_anchor(page, section)}" if section else EXTENSIONS[page]
    path = page.removesuffix(".mdx").removesuffix("index").rstrip("/")
    url = f"{PUBLISHED}/{path}" if path else PUBLISHED
    title = _titles().get(page)
    return f"{url}#{anchor(section)}" if section and section != title else url


def github_anchor(page: str, section: str) -> str:
    """GitHub's anchor for a heading of an extension's text (it is published there): lower case,
    punctuation dropped, each space a hyphen; a heading met again gets `-1`, `-2` in page order."""

    def slug(heading: str) -> str:
        return re.sub(r"[^\w\- ]", "", _plain(heading).lower()).replace(" ", "-")

    earlier = 0
    for heading in load_pages()[page]["headings"]:
        if _plain(heading) == _plain(section):
            break
        earlier += slug(heading) == slug(section)
    return slug(section) + (f"-{earlier}" if earlier else "")


@cache
def _titles() -> dict[str, str]:
    return {page: info.get("title", "") for page, info in load_pages().items()}


#: The spec site's name for each folder of pages, which its sidebar shows above the folder's own
#: pages; four of them are titled just "Overview".
FOLDER_NAMES = {
    "basic": "Base Protocol",
    "basic/transports": "Transports",
    "basic/patterns": "Patterns",
    "basic/authorization": "Authorization",
    "server": "Server Features",
    "client": "Client Features",
}


def page_name(page: str, info: dict[str, Any]) -> str:
    """What a reader calls a spec page: its title ("Streamable HTTP"), with its folder's name when
    the title alone says nothing ("Transports: Overview"); an extension's text, which has no front
    matter, by its first heading."""
    title = info.get("title") or (info["headings"][0] if info.get("headings") else page)
    folder = page.rpartition("/")[0]
    if title == "Overview" and folder in FOLDER_NAMES:
        return f"{FOLDER_NAMES[folder]}: {title}"
    return str(title)


# -- the entries -----------------------------------------------------------------------------


@dataclass
class Entry:
    id: str
    spec: str
    section: str
    level: str
    applies_to: list[str]
    says: str
    status: str
    why: str | None = None
    issue: int | None = None
    evidence: list[str] = field(default_factory=list)
    #: The id of an entry of another section whose evidence shows this one too, said on purpose
    #: (the spec states some rules twice, e.g. on a transport page and on its pattern page).
    same_evidence_as: str | None = None
    source: str = ""  # which file it came from


def load_raw(paths: Iterable[Path] = REQUIREMENTS) -> list[tuple[str, Any]]:
    raw: list[tuple[str, Any]] = []
    for path in paths:
        if path.exists():
            items = yaml.safe_load(path.read_text(encoding="utf-8")) or []
            raw += [(path.name, item) for item in items]
    return raw


def entries(raw: list[tuple[str, Any]]) -> list[Entry]:
    """The well-formed entries; `problems` says what is wrong with the others."""
    found = []
    for source, item in raw:
        if isinstance(item, dict) and not _shape_problems(item):
            known = {k: item[k] for k in (*FIELDS, *OPTIONAL_FIELDS) if k in item}
            found.append(Entry(**known, source=source))
    return found


def _shape_problems(item: Any) -> list[str]:
    if not isinstance(item, dict):
        return [f"an entry is a mapping, not {item!r}"]
    name = item.get("id", "?")
    found = [f"{name}: missing field {f!r}" for f in FIELDS if f not in item]
    found += [f"{name}: unknown field {f!r}" for f in item if f not in FIELDS + OPTIONAL_FIELDS]
    if found:
        return found
    if not isinstance(item["id"], str) or not ID.fullmatch(item["id"]):
        found.append(f"{name}: an id is lower-case dotted words, like http.header-mismatch-400")
    if item["level"] not in LEVELS:
        found.append(f"{name}: level {item['level']!r} is not one of {', '.join(LEVELS)}")
    roles = item["applies_to"]
    if not isinstance(roles, list) or not roles or any(r not in ROLES for r in roles):
        found.append(f"{name}: applies_to is a non-empty list of {', '.join(ROLES)}")
    for text_field in ("section", "says", "spec"):
        if not isinstance(item[text_field], str) or not item[text_field].strip():
            found.append(f"{name}: {text_field} is a non-empty string")
    status = item["status"]
    if status not in STATUSES:
        found.append(f"{name}: status {status!r} is not one of {', '.join(STATUSES)}")
    evidence = item.get("evidence", [])
    if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
        found.append(f"{name}: evidence is a list of test ids and page anchors")
    elif status == "implemented" and not evidence:
        found.append(f"{name}: an implemented entry names its evidence (a test or an executed frame)")
    if status != "implemented" and not (isinstance(item.get("why"), str) and item["why"].strip()):
        found.append(f"{name}: a {status} entry says why")
    if status == "not-implemented" and not isinstance(item.get("issue"), int):
        found.append(f"{name}: a not-implemented entry names the roadmap issue that takes it (issue: N)")
    return found


def problems(raw: list[tuple[str, Any]], pages: dict[str, dict[str, Any]]) -> list[str]:
    """Everything wrong with the entries, as sentences a contributor can act on."""
    found = [p for _, item in raw for p in _shape_problems(item)]
    good = entries(raw)
    for name, count in Counter(e.id for e in good).items():
        if count > 1:
            found.append(f"{name}: the id is used by {count} entries; ids are unique")
    for entry in good:
        if entry.spec not in pages:
            found.append(f"{entry.id}: spec {entry.spec!r} is not a page of the {REVISION} specification")
        elif _plain(entry.section) not in [*pages[entry.spec]["headings"], pages[entry.spec].get("title")]:
            found.append(f"{entry.id}: {entry.spec} has no heading {entry.section!r} (nor is it the page's title)")
        found += [f"{entry.id}: {p}" for item in entry.evidence for p in evidence_problems(item)]
    found += shared_test_problems(good)
    return found


def shared_test_problems(good: list[Entry]) -> list[str]:
    """The copy-paste rule: entries from different spec sections never name the same set of
    evidence by accident. Sharing one test is fine (a test often shows rules of two sections at
    once), but two entries of different sections backed by exactly the same items are what an entry
    pasted with its neighbour's evidence looks like. Where that is intended (the spec states some
    rules twice), the later entry says so with `same_evidence_as: <the other's id>`. Entries of one
    section may share their whole evidence: one statement, several obligations; and evidence made of
    page sections alone may be shared, since one section of frames often shows several rules."""
    by_id = {entry.id: entry for entry in good}
    seen: dict[frozenset[str], list[Entry]] = defaultdict(list)
    found = []
    for entry in good:
        key = frozenset(entry.evidence)
        if not any(TEST_ID.fullmatch(item) for item in key):
            key = frozenset()  # frames alone may be shared: one section of frames shows several rules
        twin = by_id.get(entry.same_evidence_as or "")
        if entry.same_evidence_as and (twin is None or frozenset(twin.evidence) != key):
            found.append(f"{entry.id}: same_evidence_as {entry.same_evidence_as!r} names no entry with this evidence")
        if key:
            earlier = [e for e in seen[key] if (e.spec, _plain(e.section)) != (entry.spec, _plain(entry.section))]
            linked = entry.same_evidence_as in {e.id for e in seen[key]} or any(
                e.same_evidence_as == entry.id
                for e in seen[key]  # either of the two may say it
            )
            if earlier and not linked:
                found.append(
                    f"{entry.id}: the same evidence as {earlier[0].id}, from another spec section "
                    f"({', '.join(sorted(key))}); name what shows each one in particular, or say "
                    f"`same_evidence_as: {earlier[0].id}` if one test really shows both"
                )
            seen[key].append(entry)
    return found


def evidence_problems(item: str) -> list[str]:
    if matched := TEST_ID.fullmatch(item):
        return _test_problems(matched["file"], matched["names"].split("::"))
    if matched := ANCHOR_ID.fullmatch(item):
        return _anchor_problems(matched["file"], matched["slug"])
    return [f"{item!r} is neither a test (tests/....py::test_name) nor a page anchor (docs/....md#heading)"]


def _test_problems(file: str, names: list[str]) -> list[str]:
    path = ROOT / file
    if not path.exists():
        return [f"{file} does not exist"]
    scope: list[ast.stmt] = _module(path).body
    for index, name in enumerate(names):
        last = index == len(names) - 1
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef) if last else (ast.ClassDef,)
        node = next((n for n in scope if isinstance(n, kinds) and n.name == name), None)
        if node is None:
            return [f"{file} has no {'test' if last else 'class'} {'::'.join(names[: index + 1])}"]
        if last and not name.startswith("test"):
            return [f"{file}::{'::'.join(names)} is not a test pytest collects"]
        scope = getattr(node, "body", [])
    return []


@cache
def _module(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _anchor_problems(file: str, slug: str) -> list[str]:
    path = ROOT / file
    if not path.exists():
        return [f"{file} does not exist"]
    sections = page_sections(path)
    if slug not in sections:
        return [f"{file} has no heading whose anchor is #{slug}"]
    if not sections[slug]:
        return [f"{file}#{slug}: no block in that section is executed (http, python, console or sse)"]
    return []


@cache
def page_sections(path: Path) -> dict[str, int]:
    """Each heading's anchor (as mkdocs makes it) and how many executed blocks its section holds,
    up to the next heading of the same or a higher level."""
    from .pages import blocks  # the harness's own reading of a page

    text = path.read_text(encoding="utf-8")
    fenced = blocks(Document(text, str(path)))
    spans = [(b.start, b.end) for b in fenced]
    headings = []
    for found in re.finditer(r"^(#{1,6})\s+(.+?)\s*$", text, re.MULTILINE):
        if not any(start <= found.start() < end for start, end in spans):
            headings.append((found.start(), len(found[1]), found[2]))
    result: dict[str, int] = {}
    seen: Counter[str] = Counter()
    for index, (start, level, title) in enumerate(headings):
        end = next((s for s, lv, _ in headings[index + 1 :] if lv <= level), len(text))
        base = slugify(re.sub(r"\{.*\}$", "", title).replace("`", "").strip(), "-")
        slug = base if not seen[base] else f"{base}_{seen[base]}"
        seen[base] += 1
        result[slug] = sum(
            1
            for b in fenced
            if start < b.start < end and b.language in EXECUTED and not (b.title or "").startswith("Illustration")
        )
    return result


def coverage(good: list[Entry], pages: dict[str, dict[str, Any]]) -> dict[str, tuple[int, int]]:
    """Per spec page: (entries for its normative keywords, keywords). MAY entries do not count."""
    counted = Counter(e.spec for e in good if e.level != "MAY")
    return {page: (counted[page], info["keywords"]) for page, info in pages.items()}


def coverage_problems(good: list[Entry], pages: dict[str, dict[str, Any]]) -> list[str]:
    """Each spec page has entries for at least COVERAGE of its normative keywords."""
    found = []
    for page, (count, keywords) in coverage(good, pages).items():
        if count < COVERAGE * keywords:
            found.append(f"{page}: {count} entries for {keywords} normative keywords (at least {COVERAGE:.0%})")
    return found


def spec_drift(pages: dict[str, dict[str, Any]], spec_dir: Path, extensions_dir: Path | None = None) -> list[str]:
    """Where spec-pages.yaml no longer matches the spec text it was recorded from. The extensions'
    text is beside `spec_dir` (the extract's layout) unless `extensions_dir` says where."""
    now = record(spec_dir, extensions_dir or spec_dir.parent)
    found = [f"{p}: in spec-pages.yaml, not in the spec" for p in pages if p not in now]
    for page, info in now.items():
        if pages.get(page) != info:
            found.append(f"{page}: the recorded keyword count or headings differ from the spec text")
    return found


# -- spec citations on the site -------------------------------------------------------------

CITATION = re.compile(r"`(?P<path>[a-z0-9_/-]+\.mdx)`")
SPEC_LINK = re.compile(
    r"\]\((?P<url>https://modelcontextprotocol\.io/specification/(?P<rev>[0-9-]+)(?P<rest>[^)\s]*))\)"
)


def citation_problems(text: str, where: str, pages: dict[str, dict[str, Any]]) -> list[str]:
    """A page's prose cites the spec only by links to the published sections: every `page.mdx`
    outside code is the start of a link's text, and every link to this revision names a spec page
    and, if it has an anchor, one of that page's headings."""
    from .pages import blocks

    spans = [(b.start, b.end) for b in blocks(Document(text, where))]
    found = []
    for cited in CITATION.finditer(text):
        if any(start <= cited.start() < end for start, end in spans):
            continue
        label_end = text.find("](", cited.end())
        linked = text[cited.start() - 1 : cited.start()] == "[" and label_end != -1
        if not linked or not text.startswith("](https://modelcontextprotocol.io/specification/", label_end):
            line = text.count("\n", 0, cited.start()) + 1
            found.append(f"{where}:{line}: {cited.group(0)} is cited without a link to the published spec")
    anchors = {page: {anchor(h) for h in info["headings"]} for page, info in pages.items()}
    by_url = {spec_url(page): page for page in pages}
    for link in SPEC_LINK.finditer(text):
        if link["rev"] != REVISION or any(start <= link.start() < end for start, end in spans):
            continue
        base, _, fragment = link["url"].partition("#")
        page = by_url.get(base)
        line = text.count("\n", 0, link.start()) + 1
        if page is None:
            found.append(f"{where}:{line}: {link['url']} is no page of the {REVISION} specification")
        elif fragment and fragment not in anchors[page]:
            found.append(f"{where}:{line}: {page} has no heading whose anchor is #{fragment}")
    return found


# -- the pages -------------------------------------------------------------------------------

#: Reference → Compliance: an overview page, and one page per area of the spec, in this order; a
#: spec page belongs to the first area with a prefix its path starts with, else to the base protocol.
AREAS = (
    ("base", "Base protocol", ()),
    ("transports", "Transports", ("basic/transports/",)),
    ("patterns", "Patterns: MRTR, cancellation, progress, subscriptions", ("basic/patterns/",)),
    ("server", "Server features", ("server/",)),
    ("client", "Client features", ("client/",)),
    (
        "authorization",
        "Authorization",
        ("basic/authorization/index.mdx", "basic/authorization/authorization-server-discovery.mdx"),
    ),
    ("client-registration", "Authorization: client registration and security", ("basic/authorization/",)),
    ("schema", "Schema", ("schema.mdx",)),
    ("extensions", "Extensions: MCP Apps", ("extensions/",)),
    ("tasks", "Extensions: tasks", ("seps/",)),
)


def area_of(spec_page: str) -> str:
    """The slug of the compliance page that holds a spec page's entries."""
    return next((slug for slug, _, prefixes in AREAS if prefixes and spec_page.startswith(prefixes)), "base")


def render_summary(good: list[Entry], pages: dict[str, dict[str, Any]]) -> str:
    """The overview page's part: the totals, then each area with its spec pages and their counts."""
    totals = Counter(e.status for e in good)
    out = [f"**{len(good)} entries**: " + ", ".join(f"{totals[s]} {s}" for s in STATUSES) + ".", ""]
    for slug, title, _ in AREAS:
        in_area = [e for e in good if area_of(e.spec) == slug]
        counts = Counter(e.status for e in in_area)
        shown = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
        out += [f"### [{title}]({slug}.md)", "", f"{len(in_area)} entries: {shown or 'none'}.", ""]
        for page, info in pages.items():
            if area_of(page) != slug:
                continue
            entries = [e for e in in_area if e.spec == page]
            name = page_name(page, info)
            name = f"[{name}]({slug}.md#{slugify(page, '-')})" if entries else name
            out.append(f"- {name} (`{page}`): {len(entries)} entries for {info['keywords']} normative keywords")
        out.append("")
    return "\n".join(out)


def render(
    good: list[Entry],
    pages: dict[str, dict[str, Any]],
    page_dir: str = "reference/compliance",
    repo_url: str | None = None,
    area: str | None = None,
) -> str:
    """One area's entries (all of them without `area`) as markdown: a filter by status, then each
    spec page's entries as cards, each with its id as its anchor, readable at any width. Tests link
    to their file in the repository when mkdocs.yml names one (`repo_url`); frames link to their
    section of the site."""
    chosen = [e for e in good if area is None or area_of(e.spec) == area]
    counts = Counter(e.status for e in chosen)
    choices = [("all", len(chosen))] + [(s, counts[s]) for s in STATUSES if counts[s]]
    out = [
        '<fieldset class="mcpref-filter"><legend>Show entries</legend>',
        *(
            f'<label><input type="radio" name="mcpref-status" value="{status}"'
            f"{' checked' if status == 'all' else ''}> {status} ({count})</label>"
            for status, count in choices
        ),
        "</fieldset>",
    ]
    for page, info in pages.items():
        entries = [e for e in chosen if e.spec == page]
        if not entries:
            continue
        # A section per spec page, named by its title and anchored by its path (links made when
        # the heading was the path still land); the filter hides a section with no entry shown.
        out += [
            "",
            '<section class="mcpref-spec-page" markdown>',
            "",
            f"## {page_name(page, info)} {{#{slugify(page, '-')}}}",
            "",
            f"[`{page}`]({spec_url(page)}) · {info['keywords']} normative keywords",
            "{: .mcpref-spec-page__source }",
        ]
        for entry in entries:
            out += ["", *_card(entry, page_dir, repo_url)]
        out += ["", "</section>"]
    return "\n".join(out) + "\n"


def _card(entry: Entry, page_dir: str, repo_url: str | None) -> list[str]:
    status = f"**{entry.status}**" + (f" (issue {entry.issue})" if entry.issue else "")
    lines = [
        f'<div class="mcpref-req" id="{entry.id}" data-status="{entry.status}" markdown>',
        "",
        f"[`{entry.id}`](#{entry.id}) · {entry.level} · {', '.join(entry.applies_to)} · {status}",
        "{: .mcpref-req__head }",
        "",
        f"{_cell(entry.says)} ([§{_cell(entry.section)}]({spec_url(entry.spec, entry.section)}))",
    ]
    if entry.why:
        lines += ["", f"*Why:* {_cell(entry.why)}", "{: .mcpref-req__why }"]
    if entry.evidence:
        shown = " · ".join(_evidence_link(item, page_dir, repo_url) for item in entry.evidence)
        lines += ["", f"Evidence: {shown}", "{: .mcpref-req__evidence }"]
    return [*lines, "", "</div>"]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _evidence_link(item: str, page_dir: str, repo_url: str | None = None) -> str:
    if matched := ANCHOR_ID.fullmatch(item):
        target = Path(matched["file"]).relative_to("docs").as_posix()
        up = "../" * len(Path(page_dir).parts)
        return f"[{target}#{matched['slug']}]({up}{target}#{matched['slug']})"
    if repo_url and (matched := TEST_ID.fullmatch(item)):
        return f"[`{item}`]({repo_url.rstrip('/')}/blob/main/{matched['file']})"
    return f"`{item}`"


if __name__ == "__main__":
    if sys.argv[1:2] not in (["--record"], ["--extract"]):
        sys.exit("usage: python -m tests.docs.matrix --record|--extract [SPEC_DIR]")
    spec_dir = Path(sys.argv[2]) if len(sys.argv) > 2 else spec_text_dir()
    if spec_dir is None:
        sys.exit("no spec text found; pass its specification/2026-07-28 folder")
    if sys.argv[1] == "--extract":
        write_extract(spec_dir)
        sys.exit(f"wrote {SPEC_EXTRACT.relative_to(ROOT)}/{REVISION}")
    header = (
        "# Each page of the 2026-07-28 specification: its normative keyword count (upper-case MUST, MUST NOT,\n"
        "# SHOULD, SHOULD NOT, REQUIRED, RECOMMENDED, SHALL, SHALL NOT outside code, not quoted) and its headings.\n"
        "# Recorded from the spec text by `python -m tests.docs.matrix --record`; tests/docs/test_requirements.py\n"
        "# checks it against the extract of the text in tests/docs/spec_extract, in every clone. After them, the\n"
        "# extensions in the matrix (tests/docs/matrix.py EXTENSIONS), recorded from their text the same way.\n"
    )
    body = yaml.safe_dump(record(spec_dir, spec_dir.parent.parent), sort_keys=False, allow_unicode=True, width=120)
    SPEC_PAGES.write_text(header + body, encoding="utf-8")
    print(f"recorded {SPEC_PAGES.relative_to(ROOT)}")
