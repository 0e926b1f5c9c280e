"""The sybil side of the harness: a page becomes one example per fenced block (or block pair).

| block                                   | what happens                                              |
|-----------------------------------------|-----------------------------------------------------------|
| ```http request + ```http response      | sent to a fresh reference server; status, shown headers, body compared |
| ```sse                                  | what arrived next on a stream an earlier block left open   |
| ```python (+ ```text title="Output")    | run in the page's namespace; what it prints must be shown, and is compared |
| ```console with `$ curl ...`            | run against a real uvicorn; shown output compared          |
| ```mermaid                              | a diagram: its type is checked, the site renders it        |
| any block titled "Illustration — why"   | not executed; JSON-RPC in it is still checked by the schema |
| a block titled "File — path, why"       | compared byte for byte with that file of the repository    |
| anything else                           | fails: execute it or mark it                               |
| code with no fence (indented, <pre>)    | fails: the rendered page may show no code the harness skips |

A `<<kind>>` placeholder is allowed only in ```http responses, and a frame that shows one is
sent twice to prove the value varies (`variance`).

`http://127.0.0.1:8000` on a page is rewritten to the live server's address, so a reader's
commands are run exactly as written otherwise.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import shlex
import subprocess
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sybil import Document, Example, Region, Sybil
from sybil.example import SybilFailure
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

from . import compare, exchange, placeholders, rendered, schema, shared, shown_files, update, variance
from .messages import FrameSyntaxError, Request, Response, media_type, parse, parse_sse

PAGE_ORIGIN = "http://127.0.0.1:8000"
DOCS_STATE_KEY = shared.DOCS_STATE_KEY
TITLE = re.compile(r'title="(?P<title>[^"]*)"')
ILLUSTRATION = re.compile(r"Illustration\s*[—–:-]\s*(?P<reason>\S.{7,})")
#: A block that shows a file of the repository whole (see `shown_files`): compared with it.
SHOWN_FILE = re.compile(r"File — (?P<path>[\w/.-]+), \S.{3,}")
#: Directives right above a request block, each with its reason (several may be stacked).
EXPECT_VIOLATION = re.compile(r"<!--\s*expect-schema-violation:\s*(?P<reason>\S[^>]*?)\s*-->")
SHARED_REQUEST = re.compile(r"<!--\s*shared-server:\s*(?P<reason>\S[^>]*?)\s*-->")
SHARED_SERVER = re.compile(r"^<!--\s*frames:\s*shared-server\s*[—–:-]\s*(?P<reason>\S[^>]*?)\s*-->", re.MULTILINE)
TRAILING_COMMENT = re.compile(r"<!--(?:(?!-->).)*-->\s*$", re.DOTALL)
DIAGRAMS = ("sequenceDiagram", "flowchart", "graph", "stateDiagram-v2", "classDiagram", "erDiagram")

#: Why a placeholder is refused outside a ```http response block (see `variance`).
UNPROVABLE = (
    "a <<kind>> placeholder here cannot be proved to stand for a value that varies, since the block "
    "cannot be run a second time on its own; placeholders belong in ```http response blocks"
)

#: Set by docs/conftest.py from `--update-frames`.
settings = {"update": False}


@dataclass
class Block:
    """One fenced block: where it sits in the page, its info string, its content."""

    document: Document
    start: int  # the opening fence
    end: int  # just after the closing fence
    info: str
    source: str
    source_start: int  # first character of the content
    source_end: int  # first character of the closing fence line

    @property
    def language(self) -> str:
        return self.info.split()[0] if self.info.strip() else ""

    @property
    def title(self) -> str | None:
        found = TITLE.search(self.info)
        return found["title"] if found else None

    @property
    def line(self) -> int:
        return self.document.text.count("\n", 0, self.start) + 1

    @property
    def where(self) -> str:
        return f"{self.document.path}, line {self.line}"

    def preceded_by(self, pattern: re.Pattern[str], previous_end: int) -> re.Match[str] | None:
        """A directive among the HTML comments written right above this block."""
        gap = self.document.text[previous_end : self.start].rstrip()
        while found := TRAILING_COMMENT.search(gap):
            if matched := pattern.fullmatch(found.group(0).rstrip()):
                return matched
            gap = gap[: found.start()].rstrip()
        return None


_lexer = RawFencedCodeBlockLexer(info_pattern=re.compile(r"(?P<info>[^\n]*)$\n", re.MULTILINE))


def blocks(document: Document) -> list[Block]:
    found = []
    for region in _lexer(document):
        source = region.lexemes["source"]
        source_start = region.start + source.offset
        source_end = document.text.rfind("\n", 0, region.end) + 1
        found.append(
            Block(
                document,
                region.start,
                region.end,
                region.lexemes["info"].strip(),
                str(source),
                source_start,
                max(source_start, source_end),
            )
        )
    return found


def parse_page(document: Document) -> Iterable[Region]:
    """Turn every fenced block into a region; a block nothing runs or marks becomes a failure."""
    found = blocks(document)
    document.namespace["_frames_shared"] = bool(SHARED_SERVER.search(_prose(document.text, found)))
    index, previous_end = 0, 0
    while index < len(found):
        block = found[index]
        following = found[index + 1] if index + 1 < len(found) else None
        title = block.title or ""
        if title.startswith("Illustration"):
            region = Region(block.start, block.end, block, _illustration)
        elif title.startswith("File"):
            region = Region(block.start, block.end, block, _shown_file)
        elif block.language == "http":
            region, index = _http_region(block, following, previous_end, index)
        elif block.language == "python":
            if following is not None and following.language == "text" and following.title == "Output":
                region = Region(block.start, following.end, (block, following), _python)
                index += 1
            else:
                region = Region(block.start, block.end, (block, None), _python)
        elif block.language == "console":
            region = Region(block.start, block.end, block, _console)
        elif block.language == "mermaid":
            region = Region(block.start, block.end, block, _mermaid)
        elif block.language == "sse":
            region = Region(block.start, block.end, block, _continued)
        else:
            region = Region(block.start, block.end, block, _unmarked)
        yield region
        previous_end = region.end
        index += 1
    # Last, the page as readers see it: code shown there that no fence marks is never run.
    yield Region(len(document.text), len(document.text), [block.source for block in found], check_rendered)


def _prose(text: str, found: list[Block]) -> str:
    """The page without its fenced blocks, so a directive shown inside an example does not act."""
    for block in reversed(found):
        text = text[: block.start] + text[block.end :]
    return text


def _http_region(block: Block, following: Block | None, previous_end: int, index: int) -> tuple[Region, int]:
    try:
        request = parse(block.source)
    except FrameSyntaxError as exc:
        return Region(block.start, block.end, (block, str(exc)), _broken), index
    if not isinstance(request, Request):
        why = "a response block must follow the request block it answers"
        return Region(block.start, block.end, (block, why), _broken), index
    if following is None or following.language != "http" or not following.source.startswith("HTTP/"):
        why = "a request block must be followed by the response block the server sends"
        return Region(block.start, block.end, (block, why), _broken), index
    violation = block.preceded_by(EXPECT_VIOLATION, previous_end)
    shared_here = block.preceded_by(SHARED_REQUEST, previous_end) is not None
    pair = Pair(block, following, request, violation["reason"] if violation else None, shared_here)
    return Region(block.start, following.end, pair, _exchange), index + 1


# -- ```http pairs ---------------------------------------------------------------------------


@dataclass
class Pair:
    request_block: Block
    response_block: Block
    request: Request
    #: Set when the page says, in a comment the harness reads, that this request breaks the schema.
    expected_violation: str | None
    #: Set by `<!-- shared-server: why -->` right above the request: it goes to the page's shared app.
    shared: bool = False


def app_for(target: str, namespace: dict[str, Any], shared_here: bool = False) -> Any:
    """A fresh app for the endpoint at `target`, or the page's shared app if the page (or this
    one request) asked for that. Every app gets the same state key (see `shared.build`)."""
    path = target.split("?")[0]
    if shared_here or namespace.get("_frames_shared"):
        return shared.of(namespace).app(path)
    return shared.build(path)


def send(app: Any, request: Request) -> tuple[int, list[tuple[str, str]], str]:
    """Send exactly the page's request to the ASGI app; for the harness's own tests."""
    answer = exchange.send(app, request)
    return answer.status, answer.headers, answer.body


def _filled(request: Request, captured: dict[str, Any]) -> Request:
    """The request with every `{{name}}` replaced by the value an earlier response captured."""
    headers = [(name, placeholders.fill(value, captured)) for name, value in request.headers]
    return Request(headers, placeholders.fill(request.body, captured), method=request.method, target=request.target)


def _marker(page_response: Response) -> str | None:
    if media_type(page_response) != "text/event-stream":
        return None
    return compare.marker_in(page_response.body)


def _shown_events(page_response: Response) -> int | None:
    if media_type(page_response) != "text/event-stream":
        return None
    try:
        return len(parse_sse(page_response.body))
    except ValueError:
        return None


def _exchange(example: Example) -> str | None:
    pair: Pair = example.parsed
    page_response = parse(pair.response_block.source)
    assert isinstance(page_response, Response)
    where = f"{pair.response_block.where} (the answer to the request at line {pair.request_block.line})"
    captured = example.namespace.setdefault("_frames_captured", {})
    try:
        request = _filled(pair.request, captured)
    except KeyError as exc:
        return compare.report(pair.request_block.where, [str(exc.args[0])], pair.request_block.source, "")
    problems = _request_problems(pair, request)
    if problems:
        return compare.report(pair.request_block.where, problems, pair.request_block.source, "")
    on_shared = pair.shared or bool(example.namespace.get("_frames_shared"))
    keep_open = _marker(page_response) == compare.KEEP_OPEN
    if keep_open and not on_shared:
        why = "a stream continued below must come from a shared server: put <!-- shared-server: why --> above it"
        return compare.report(pair.request_block.where, [why], pair.request_block.source, "")
    app = app_for(request.target, example.namespace, pair.shared)
    if on_shared:
        servers = shared.of(example.namespace)
        flight = exchange.Exchange(app, request)
        servers.run(flight.begin())
        flight.answer.body = servers.run(flight.read(_shown_events(page_response)))
        if keep_open and flight.answer.left_open:
            servers.keep(flight, pair.response_block.where)
        else:
            servers.run(flight.close())
        answer = flight.answer
    else:
        answer = exchange.send(app, request, _shown_events(page_response))
    status, headers, body = answer.status, answer.headers, answer.body
    try:
        sent_message = request.json()
    except ValueError:  # a body broken on purpose (expect-schema-violation)
        sent_message = None
    method = sent_message.get("method") if isinstance(sent_message, dict) else None
    revision = schema.revision_of(request)
    differences = compare.response_differences(page_response, status, headers, body, captured, answer.left_open)
    differences += [f"schema: {p}" for p in _server_schema_problems(headers, body, method, revision)]
    second = None
    if settings["update"] and not on_shared:
        second = _replay(request, page_response)  # what differs between two runs becomes a placeholder
    elif not settings["update"] and not differences and variance.shows_placeholders(page_response):
        second = _replay(request, page_response)
        differences += variance.constants(page_response, (headers, body), second)
    refused: list[str] = []
    if settings["update"]:
        rendered = update.render_response(page_response, status, headers, body, answer.left_open, second, refused)
    else:
        rendered = update.render_response(page_response, status, headers, body, answer.left_open)
    if refused:
        return compare.report(where, [f"not refreshed: {r}" for r in refused], pair.response_block.source, rendered)
    if settings["update"] and not any(d.startswith("schema:") for d in differences):
        # Refresh, and also bring a matching block to the canonical layout.
        if rendered.rstrip("\n") == pair.response_block.source.rstrip("\n"):
            return None
        block = pair.response_block
        update.schedule(Path(block.document.path), block.source_start, block.source_end, _indent(rendered, block))
        return None
    if not differences:
        return None
    return compare.report(where, differences, pair.response_block.source, rendered)


def _replay(request: Request, page_response: Response) -> tuple[list[tuple[str, str]], str]:
    """The same request sent to another fresh app while the clocks read earlier (see `variance`)."""
    with variance.shifted_clock():
        again = exchange.send(shared.build(request.target.split("?")[0]), request, _shown_events(page_response))
    return again.headers, again.body


def _request_problems(pair: Pair, request: Request) -> list[str]:
    if placeholders.contains_placeholder(request.body) or any(
        placeholders.PLACEHOLDER.search(v) for _, v in request.headers
    ):
        return ["placeholders stand for values the server sends; a request is sent as written"]
    try:
        body = request.json()
    except ValueError as exc:
        if pair.expected_violation:
            return []
        return [f"the request body is not JSON ({exc}); mark a deliberately broken one with expect-schema-violation"]
    if body is None:
        return []
    found = schema.problems(body, revision=schema.revision_of(request)) if isinstance(body, dict) else []
    if pair.expected_violation and not found:
        return [f"the page says this request breaks the schema ({pair.expected_violation}), but it conforms"]
    if not pair.expected_violation:
        return [f"schema: {p}" for p in found]
    return []


def _server_schema_problems(
    headers: list[tuple[str, str]], body: str, method: str | None, revision: str = schema.REVISION
) -> list[str]:
    sent = Response(headers, body)
    if media_type(sent) == "application/json":
        messages = [json.loads(body)]
    elif media_type(sent) == "text/event-stream":
        messages = [event.data for event in parse_sse(body)]
    else:
        return []
    return _messages_schema_problems(messages, method, revision)


def _messages_schema_problems(messages: list[Any], method: str | None, revision: str = schema.REVISION) -> list[str]:
    found = []
    for message in messages:
        if not isinstance(message, dict):
            found.append(f"a JSON-RPC message is an object, not {type(message).__name__}")
            continue
        found += schema.problems(message, method if "id" in message or "error" in message else None, revision)
    return found


# -- ```sse: a stream continued --------------------------------------------------------------


def _continued(example: Example) -> str | None:
    """Read what arrived on the stream an earlier block left open, and compare it with the block."""
    block: Block = example.parsed
    servers = shared.of(example.namespace)
    flight = servers.open_stream
    if flight is None:
        return (
            f"{block.where}: an ```sse block continues a stream, but no earlier block left one open "
            f"(end that block with ': {compare.KEEP_OPEN}')"
        )
    try:
        shown = parse_sse(block.source)
    except ValueError as exc:
        return f"{block.where}: the event stream is malformed: {exc}"
    if placeholders.contains_placeholder(block.source):
        return f"{block.where}: {UNPROVABLE} (a stream continued on a shared server)"
    sent = servers.run(flight.read(len(shown)))
    marker = compare.marker_in(block.source)
    if marker == compare.KEEP_OPEN and flight.answer.left_open:
        servers.keep(flight, block.where)
    else:
        servers.open_stream = None
        servers.run(flight.close())
    captured = example.namespace.setdefault("_frames_captured", {})
    differences = compare.stream_differences(shown, sent, captured, flight.answer.left_open, marker)
    request = flight.request.json() or {}
    problems = _messages_schema_problems([event.data for event in parse_sse(sent)], request.get("method"))
    differences += [f"schema: {p}" for p in problems]
    rendered = update.render_events(shown, sent, flight.answer.left_open, marker)
    if settings["update"] and not problems:
        if rendered.rstrip("\n") != block.source.rstrip("\n"):
            update.schedule(Path(block.document.path), block.source_start, block.source_end, _indent(rendered, block))
        return None
    if not differences:
        return None
    return compare.report(block.where, differences, block.source, rendered)


def _indent(text: str, block: Block) -> str:
    """`text` indented like the block's opening fence (a block inside a list, a tab, a details)."""
    line_start = block.document.text.rfind("\n", 0, block.start) + 1
    fence_line = block.document.text[line_start : block.document.text.find("\n", line_start)]
    prefix = fence_line[: len(fence_line) - len(fence_line.lstrip(" \t"))]
    return "".join(prefix + line if line.strip() else line for line in text.splitlines(keepends=True))


# -- other blocks ----------------------------------------------------------------------------


def _live(example: Example, text: str) -> str:
    if PAGE_ORIGIN not in text:
        return text
    live = example.namespace.get("live_url")
    if live is None:
        raise RuntimeError("the live_url fixture (docs/conftest.py) is not available")
    return text.replace(PAGE_ORIGIN, live)


def _python(example: Example) -> str | None:
    block, output = example.parsed
    if output is not None and placeholders.contains_placeholder(output.source):
        return f"{output.where}: {UNPROVABLE} (a python block's Output)"
    code = "\n" * (block.document.text.count("\n", 0, block.source_start)) + _live(example, block.source)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(block.document.path), "exec"), example.namespace)
    actual = printed.getvalue().rstrip("\n")
    if output is None:
        if not actual:
            return None
        if settings["update"]:
            shown = "\n\n" + _indent(f'```text title="Output"\n{actual}\n```', block)
            update.schedule(Path(block.document.path), block.end, block.end, shown)
            return None
        return compare.report(
            block.where,
            [
                'the block prints, but no ```text title="Output" block follows it to show what;'
                " add one (./scripts/docs --update-frames writes it)"
            ],
            "",
            actual,
        )
    expected = output.source.rstrip("\n")
    if placeholders.text_matcher(expected)(actual):
        return None
    if settings["update"]:
        refreshed = _indent(actual + "\n", output)
        update.schedule(Path(output.document.path), output.source_start, output.source_end, refreshed)
        return None
    return compare.report(output.where, ["the printed output differs"], expected, actual)


def _console(example: Example) -> str | None:
    block: Block = example.parsed
    failures, refreshed = [], []
    if placeholders.contains_placeholder(block.source):
        return f"{block.where}: {UNPROVABLE} (a console block)"
    for command, expected in console_commands(block.source):
        refreshed.append(f"$ {command}\n{expected}" if expected else f"$ {command}")
        if not command.lstrip().startswith("curl "):
            failures.append(f"only curl commands run here, not {command.split()[0]!r}")
            continue
        failures += [f"schema: {p}" for p in _curl_payload_problems(command)]
        run = subprocess.run(["bash", "-c", _live(example, command)], capture_output=True, text=True, timeout=30)
        actual = run.stdout.replace("\r\n", "\n").rstrip("\n")
        if run.returncode != 0:
            failures.append(f"`{command.splitlines()[0]}` exited with {run.returncode}: {run.stderr.strip()}")
        elif problem := _output_differences(expected, actual):
            refreshed[-1] = f"$ {command}\n{actual}"
            failures.append(compare.report(block.where, problem, expected, actual))
        failures += [f"{block.where}: schema: {p}" for p in _curl_answer_problems(command, actual)]
    if settings["update"] and failures and not any("schema:" in f for f in failures):
        new_source = _indent("\n".join(refreshed) + "\n", block)
        update.schedule(Path(block.document.path), block.source_start, block.source_end, new_source)
        return None
    return "\n\n".join(failures) or None


def console_commands(source: str) -> list[tuple[str, str]]:
    """`$ command` lines (with `\\` continuations) and the output shown under each."""
    commands: list[tuple[str, str]] = []
    lines = source.rstrip("\n").split("\n")
    index = 0
    while index < len(lines):
        if not lines[index].startswith("$ "):
            raise FrameSyntaxError(f"console blocks start each command with '$ ': {lines[index]!r}")
        command = [lines[index][2:]]
        while command[-1].endswith("\\") and index + 1 < len(lines):
            index += 1
            command.append(lines[index])
        output = []
        while index + 1 < len(lines) and not lines[index + 1].startswith("$ "):
            index += 1
            output.append(lines[index])
        commands.append(("\n".join(command), "\n".join(output)))
        index += 1
    return commands


def _curl_payloads(command: str) -> list[Any]:
    words = shlex.split(command.replace("\\\n", " "))
    payloads = []
    for flag, value in zip(words, words[1:], strict=False):
        if flag in ("-d", "--data", "--data-raw", "--json"):
            with contextlib.suppress(ValueError):
                payloads.append(json.loads(value))
    return payloads


def _curl_payload_problems(command: str) -> list[str]:
    return [p for payload in _curl_payloads(command) if schema.is_jsonrpc(payload) for p in schema.problems(payload)]


def _curl_answer_problems(command: str, output: str) -> list[str]:
    """What the server printed is a JSON-RPC message too: check it against the schema."""
    body = output.partition("\n\n")[2] if output.startswith("HTTP/") else output
    try:
        answer = json.loads(body)
    except ValueError:
        return []
    if not schema.is_jsonrpc(answer):
        return []
    methods = [p.get("method") for p in _curl_payloads(command) if isinstance(p, dict)]
    return [f"schema: {p}" for p in schema.problems(answer, methods[0] if methods else None)]


def _output_differences(expected: str, actual: str) -> list[str]:
    if expected.startswith("HTTP/"):
        page = parse(expected)
        head, _, body = actual.partition("\n\n")
        sent = parse(head + "\n\n")
        assert isinstance(page, Response) and isinstance(sent, Response)
        return compare.response_differences(page, sent.status, sent.headers, body)
    try:
        shown = json.loads(expected)
    except ValueError:
        return [] if placeholders.text_matcher(expected)(actual) else ["the output differs"]
    try:
        sent_json = json.loads(actual)
    except ValueError:
        return [f"the page shows JSON, the command printed {actual[:80]!r}"]
    return compare.json_differences(shown, sent_json)


def _mermaid(example: Example) -> str | None:
    block: Block = example.parsed
    first = next((line.strip() for line in block.source.splitlines() if line.strip()), "")
    if not first.startswith(DIAGRAMS):
        return f"{block.where}: a mermaid block starts with a diagram type ({', '.join(DIAGRAMS)}), not {first!r}"
    return None


def _illustration(example: Example) -> str | None:
    block: Block = example.parsed
    if not ILLUSTRATION.fullmatch(block.title or ""):
        return f'{block.where}: an illustration says why in its title: title="Illustration — <reason>"'
    if block.language != "json":
        return None
    try:
        value = json.loads(block.source)
    except ValueError:
        return None
    if schema.is_jsonrpc(value) and (found := schema.problems(value)):
        return compare.report(block.where, [f"schema: {p}" for p in found], block.source, "")
    return None


def _shown_file(example: Example) -> str | None:
    block: Block = example.parsed
    found = SHOWN_FILE.fullmatch(block.title or "")
    if found is None or not shown_files.SHOWN_PATH.fullmatch(found["path"]):
        return (
            f'{block.where}: a shown file names it and says why in its title: title="File — '
            'mcpref/examples/<file>.py, <why>" (a Python file under mcpref/examples/ or tests/, '
            "or a file under deploy/)"
        )
    path = shown_files.ROOT / found["path"]
    if not path.is_file():
        return f"{block.where}: shows {found['path']}, which does not exist"
    actual = path.read_text(encoding="utf-8")
    if block.source == actual:
        return None
    why = f"the block is not {found['path']} as it is now: python -m tests.docs.shown_files {block.document.path}"
    return compare.report(block.where, [why], block.source, actual)


def check_rendered(example: Example) -> str | None:
    document = example.document
    problems = [
        f"{document.path}, line {rendered.line_of(document.text, code)}: code readers see that no fence marks "
        f"(a block indented by four spaces, or raw <pre>), so nothing runs it: {code.strip()[:60]!r}.\n"
        "Write it as a fenced block (```http, ```python, ...) or a fenced block marked "
        '```text title="Illustration — <why it cannot run>"'
        for code in rendered.unseen(document.text, example.parsed)
    ]
    return "\n".join(problems) or None


def _unmarked(example: Example) -> str | None:
    block: Block = example.parsed
    return (
        f"{block.where}: a ```{block.language or '(no language)'} block that nothing executes and nothing marks.\n"
        "Make it a frame (http, python, console with curl), a mermaid diagram, or mark it:\n"
        '```json title="Illustration — <why it cannot run>"'
    )


def _broken(example: Example) -> str | None:
    block, why = example.parsed
    return f"{block.where}: {why}"


def make_sybil(fixtures: list[str] | None = None, path: str = ".", patterns: tuple[str, ...] = ("*.md",)) -> Sybil:
    return Sybil(
        parsers=[parse_page],
        path=path,
        patterns=list(patterns),
        fixtures=fixtures or [],
        setup=shared.setup,
        teardown=shared.teardown,
    )


def examples_of(path: Path, namespace: dict[str, Any] | None = None) -> list[Example]:
    """Every example of one page, for the harness's own tests (call `shared.teardown` after)."""
    document = make_sybil(path=str(path.parent), patterns=(path.name,)).parse(path)
    shared.setup(document.namespace)
    document.namespace.update(namespace or {})
    return list(document.examples())


Evaluator = Callable[[Example], str | None]


def failure_report(example: Example, failure: Exception) -> str:
    """What a failed block says outside pytest: the harness's own report (which names the page and
    line), or, for an exception a block raised, the page, the block's line, the line that raised
    and the exception's type, so that a `KeyError` reads as more than `'connection'`."""
    if isinstance(failure, SybilFailure):
        return str(failure)
    raised = [frame for frame in traceback.extract_tb(failure.__traceback__) if frame.filename == str(example.path)]
    at = f" (raised at line {raised[-1].lineno})" if raised else ""
    return f"{example.path}, line {example.line}{at}: {type(failure).__name__}: {failure}"


def recheck(paths: Iterable[Path], live_url: str | None = None) -> list[str]:
    """Run pages normally (no refreshing), as the next `./scripts/test` would: every failure's report.

    `--update-frames` calls this on the pages it rewrote, so that it cannot say it is done while
    a page it wrote still fails."""
    failures = []
    was, settings["update"] = settings["update"], False
    try:
        for path in paths:
            examples = examples_of(Path(path), {"live_url": live_url} if live_url else {})
            for example in examples:
                try:
                    example.evaluate()
                except Exception as failure:  # noqa: BLE001 - every failure is reported, whatever it is
                    failures.append(failure_report(example, failure))
            if examples:
                try:
                    shared.teardown(examples[0].namespace)
                except AssertionError as problem:
                    failures.append(str(problem))
    finally:
        settings["update"] = was
    return failures
