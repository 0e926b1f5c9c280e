"""mcpref.telemetry: OpenTelemetry spans, metrics and `_meta` trace context, as the conventions say.

In-process: a real `Client` and a real `StreamableHTTP` app joined by httpx's ASGI transport, the
SDK's in-memory exporter and metric reader behind `telemetry.instrument`. The real sockets and
the stdio pipe are tests/test_telemetry_transports.py; the no-extra process is at the end here.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import baggage, trace
from opentelemetry import context as otel_context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from mcpref import FrameLog, Server, StreamableHTTP, ToolError, telemetry
from mcpref.client import Client, EraCache, InvalidParams
from mcpref.mrtr import InputRequired, elicit_form
from mcpref.tasks import SQLiteTaskStore, Task, TasksExtension

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "docs"
#: OpenTelemetry's MCP conventions, next to a clone (also from a worktree one level deeper).
CONVENTIONS = [ROOT.parent / "shared/spec/otel/mcp-semconv.md", ROOT.parent.parent / "shared/spec/otel/mcp-semconv.md"]
#: The observability page's two tables of attributes: what mcpref records of each, and where the
#: conventions ask for it (two tables, so that both fit the page's column at 1280 px).
RECORDS_HEADER = "| attribute | what mcpref records |"
TABLE_HEADER = "| attribute | client span | server span | client metric | server metric |"
COLUMNS = ("client span", "server span", "client metric", "server metric")
SECTIONS = {
    "client span": "span.mcp.client",
    "server span": "span.mcp.server",
    "client metric": "metric.mcp.client.operation.duration",
    "server metric": "metric.mcp.server.operation.duration",
}
URL = "http://mcp.test/mcp"
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
TOKEN = "Bearer s3cret-t0ken-never-on-a-span"

pytestmark = pytest.mark.anyio


# -- the recording, and the server the tests call -------------------------------------------------


class Recorded:
    def __init__(self, exporter: InMemorySpanExporter, reader: InMemoryMetricReader, tracer: trace.Tracer) -> None:
        self.exporter = exporter
        self.reader = reader
        self.tracer = tracer

    @property
    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str, kind: SpanKind | None = None) -> list[ReadableSpan]:
        return [span for span in self.spans if span.name == name and (kind is None or span.kind == kind)]

    def one(self, name: str, kind: SpanKind) -> ReadableSpan:
        found = self.named(name, kind)
        assert len(found) == 1, [(span.name, span.kind) for span in self.spans]
        return found[0]

    def points(self, metric: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        found = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for recorded in scope.metrics:
                    if recorded.name == metric:
                        found.extend(recorded.data.data_points)
        return found


@pytest.fixture
def otel() -> Iterator[Recorded]:
    """mcpref's telemetry recorded by a fresh SDK; the global providers stay untouched (the
    observability page sets them, as an application does)."""
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    telemetry.instrument(tracer_provider, meter_provider)
    try:
        yield Recorded(exporter, reader, tracer_provider.get_tracer("test"))
    finally:
        telemetry.instrument()


def build_server(store: SQLiteTaskStore | None = None) -> Server:
    server = Server("telemetry-test", "1.0.0")
    tasks = server.add_extension(TasksExtension(store or SQLiteTaskStore(":memory:"), poll_interval_ms=10))

    @server.tool(input_schema={"type": "object", "properties": {"message": {"type": "string"}}})
    async def echo(message: str, ctx) -> str:  # type: ignore[no-untyped-def]
        await ctx.report_progress(1, 1)
        seen["baggage"] = dict(baggage.get_all())
        return message

    @server.tool()
    def broken() -> str:
        raise ToolError("the tool failed on purpose")

    @server.tool()
    def confirm(ctx) -> str | InputRequired:  # type: ignore[no-untyped-def]
        answer = ctx.input_response("ok")
        if answer is None:
            return InputRequired({"ok": elicit_form("Sure?", {"ok": {"type": "boolean"}})}, state="asked once")
        return f"{ctx.state}: {answer['action']}"

    @server.tool()
    async def report(ctx) -> Any:  # type: ignore[no-untyped-def]
        async def work(task: Task) -> str:
            await task.report("halfway")
            return "reported"

        return await tasks.hand_off(ctx, work, required=True)

    return server


#: What the `echo` handler saw of the request's baggage.
seen: dict[str, Any] = {}


def client_for(app: Any, **options: Any) -> Client:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), headers=options.pop("headers", None))
    return Client(URL, http=http, era_cache=EraCache(), **options)


def attributes(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


# -- client and server spans -----------------------------------------------------------------------


async def test_one_call_is_a_client_span_and_its_server_span_child(otel: Recorded) -> None:
    app = StreamableHTTP(build_server())
    with otel.tracer.start_as_current_span("user action") as action:
        async with client_for(app) as client:
            await client.call_tool("echo", {"message": "hi"})
    client_span = otel.one("tools/call echo", SpanKind.CLIENT)
    server_span = otel.one("tools/call echo", SpanKind.SERVER)
    assert client_span.parent is not None and client_span.parent.span_id == action.get_span_context().span_id
    assert server_span.parent is not None and server_span.parent.span_id == client_span.context.span_id
    assert server_span.parent.is_remote
    assert {span.context.trace_id for span in otel.spans} == {action.get_span_context().trace_id}
    assert attributes(client_span) == {
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "3",  # after server/discover (1) and the tools/list that learns headers (2)
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": "2026-07-28",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "server.address": "mcp.test",
        "server.port": 80,
    }
    assert attributes(server_span) == {
        "mcp.method.name": "tools/call",
        "jsonrpc.request.id": "3",
        "gen_ai.tool.name": "echo",
        "gen_ai.operation.name": "execute_tool",
        "mcp.protocol.version": "2026-07-28",
        "network.transport": "tcp",
        "network.protocol.name": "http",
        "network.protocol.version": "1.1",
        "client.address": "127.0.0.1",
        "client.port": 123,
    }
    for span in (client_span, server_span):
        assert span.status.status_code == StatusCode.UNSET


async def test_every_request_has_its_pair_of_spans_and_the_probe_too(otel: Recorded) -> None:
    async with client_for(StreamableHTTP(build_server())) as client:
        await client.list_tools()
    names = sorted((span.name, span.kind.name) for span in otel.spans)
    assert names == [
        ("server/discover", "CLIENT"),
        ("server/discover", "SERVER"),
        ("tools/list", "CLIENT"),
        ("tools/list", "SERVER"),
    ]


async def test_the_request_carries_the_client_span_in_meta(otel: Recorded) -> None:
    sent: list[dict[str, Any]] = []

    async def keep(request: httpx.Request) -> None:
        sent.append(json.loads(request.content))

    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=StreamableHTTP(build_server())))
    http.event_hooks["request"].append(keep)
    with otel.tracer.start_as_current_span("user action"):
        ctx = baggage.set_baggage("tenant", "acme")
        token = otel_context.attach(ctx)
        try:
            async with Client(URL, http=http, era_cache=EraCache()) as client:
                await client.call_tool("echo", {"message": "hi"})
        finally:
            otel_context.detach(token)
    call = sent[-1]
    meta = call["params"]["_meta"]
    client_span = otel.one("tools/call echo", SpanKind.CLIENT)
    context = client_span.context
    assert meta["traceparent"] == f"00-{context.trace_id:032x}-{context.span_id:016x}-{context.trace_flags:02x}"
    assert meta["baggage"] == "tenant=acme"
    # The protocol's own keys are still there, as before.
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert seen["baggage"] == {"tenant": "acme"}  # the handler reads it from the extracted context


async def test_a_tool_error_is_told_apart_from_a_json_rpc_error(otel: Recorded) -> None:
    async with client_for(StreamableHTTP(build_server())) as client:
        result = await client.call_tool("broken")
        assert result["isError"] is True
        with pytest.raises(InvalidParams):
            await client.call_tool("no-such-tool")
    for kind in (SpanKind.CLIENT, SpanKind.SERVER):
        failed = otel.one("tools/call broken", kind)
        assert attributes(failed)["error.type"] == "tool_error"
        assert "rpc.response.status_code" not in attributes(failed)  # the JSON-RPC call succeeded
        assert failed.status.status_code == StatusCode.ERROR
        refused = otel.one("tools/call no-such-tool", kind)
        assert attributes(refused)["error.type"] == "-32602"
        assert attributes(refused)["rpc.response.status_code"] == "-32602"
        assert refused.status.status_code == StatusCode.ERROR
        assert refused.status.description == "Unknown tool: no-such-tool"


async def test_a_refusal_before_dispatch_is_recorded_too(otel: Recorded) -> None:
    """A request `Server.accept` refuses (here a version nobody serves) gets its server span."""
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=StreamableHTTP(build_server())))
    body = {
        "jsonrpc": "2.0",
        "id": 9,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "1999-01-01",
                "io.modelcontextprotocol/clientCapabilities": {},
                "traceparent": TRACEPARENT,
            }
        },
    }
    headers = {"Accept": "application/json, text/event-stream", "Mcp-Method": "tools/list"}
    response = await http.post(URL, json=body, headers={**headers, "MCP-Protocol-Version": "1999-01-01"})
    assert response.json()["error"]["code"] == -32022
    span = otel.one("tools/list", SpanKind.SERVER)
    assert attributes(span)["error.type"] == "-32022"
    assert f"{span.context.trace_id:032x}" == TRACEPARENT.split("-")[1]


@pytest.mark.parametrize(
    "traceparent",
    [
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",  # a field missing
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  # an all-zero trace id
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  # the forbidden version
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  # upper case
        "x" * 10_000,
        17,
        {"trace": "id"},
    ],
)
async def test_a_malformed_traceparent_is_ignored(otel: Recorded, traceparent: Any) -> None:
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=StreamableHTTP(build_server())))
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "traceparent": traceparent,
        "tracestate": "a=b",
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    headers = {"Accept": "application/json, text/event-stream", "Mcp-Method": "tools/list"}
    response = await http.post(URL, json=body, headers={**headers, "MCP-Protocol-Version": "2026-07-28"})
    assert response.status_code == 200 and "result" in response.json()
    span = otel.one("tools/list", SpanKind.SERVER)
    assert span.parent is None  # a trace of its own
    assert "error.type" not in attributes(span)
    assert telemetry.trace_id(meta) is None


# -- metrics ---------------------------------------------------------------------------------------


async def test_both_durations_are_recorded_with_the_conventions_attributes(otel: Recorded) -> None:
    async with client_for(StreamableHTTP(build_server())) as client:
        await client.call_tool("echo", {"message": "hi"})
        await client.call_tool("broken")
    for metric, peer in [("mcp.client.operation.duration", "server"), ("mcp.server.operation.duration", "client")]:
        points = {
            (p.attributes["mcp.method.name"], p.attributes.get("gen_ai.tool.name")): p for p in otel.points(metric)
        }
        assert set(points) == {
            ("server/discover", None),
            ("tools/list", None),
            ("tools/call", "echo"),
            ("tools/call", "broken"),
        }
        for point in points.values():
            assert "jsonrpc.request.id" not in point.attributes  # one series per request would be unbounded
            assert point.count == 1 and point.sum > 0
            assert list(point.explicit_bounds) == list(telemetry.DURATION_BUCKETS)
        assert points[("tools/call", "broken")].attributes["error.type"] == "tool_error"
        assert ("client.address" in points[("tools/call", "echo")].attributes) is False
        assert ("server.address" in points[("tools/call", "echo")].attributes) is (peer == "server")


# -- MRTR, tasks, listen ---------------------------------------------------------------------------


async def test_each_mrtr_round_is_its_own_pair_in_the_callers_trace(otel: Recorded) -> None:
    states: list[str] = []

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"ok": True}}

    sent: list[dict[str, Any]] = []

    async def keep(request: httpx.Request) -> None:
        sent.append(json.loads(request.content))

    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=StreamableHTTP(build_server())))
    http.event_hooks["request"].append(keep)
    with otel.tracer.start_as_current_span("user action") as action:
        async with Client(URL, http=http, elicitation=answer, era_cache=EraCache()) as client:
            result = await client.call_tool("confirm")
    assert result["content"][0]["text"] == "asked once: accept"
    rounds = [body for body in sent if body.get("method") == "tools/call"]
    assert len(rounds) == 2
    states = [body["params"].get("requestState") for body in rounds]
    assert states[0] is None and isinstance(states[1], str)
    # A new traceparent on the retry (a new client span), and the sealed state still opens:
    # `_meta` is not part of what requestState is bound to.
    parents = [body["params"]["_meta"]["traceparent"] for body in rounds]
    assert parents[0] != parents[1]
    servers = otel.named("tools/call confirm", SpanKind.SERVER)
    assert len(servers) == 2
    assert {span.context.trace_id for span in servers} == {action.get_span_context().trace_id}
    assert not any(states[1] in json.dumps(_everything(span)) for span in otel.spans)


async def test_a_task_run_is_a_span_in_the_trace_of_the_call_that_made_it(otel: Recorded, tmp_path: Path) -> None:
    store = SQLiteTaskStore(str(tmp_path / "tasks.sqlite3"))
    with otel.tracer.start_as_current_span("user action") as action:
        async with client_for(StreamableHTTP(build_server(store)), tasks=True) as client:
            result = await client.call_tool("report")
    assert result["content"][0]["text"] == "reported"
    call = otel.one("tools/call report", SpanKind.SERVER)
    run = otel.one("task tools/call report", SpanKind.INTERNAL)
    assert run.parent is not None and run.parent.span_id == call.context.span_id
    assert attributes(run) == {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": "report",
        "gen_ai.operation.name": "execute_tool",
    }
    polls = otel.named("tasks/get", SpanKind.SERVER)
    assert polls and {span.context.trace_id for span in polls} == {action.get_span_context().trace_id}


async def test_a_task_on_another_instance_answers_in_the_callers_trace(otel: Recorded, tmp_path: Path) -> None:
    """Two instances share the store: the task is made on one, polled on the other; the polls
    are spans of the caller's trace, and the run stays in the trace of the call that made it."""
    path = str(tmp_path / "tasks.sqlite3")
    first, second = (
        StreamableHTTP(build_server(SQLiteTaskStore(path))),
        StreamableHTTP(build_server(SQLiteTaskStore(path))),
    )
    with otel.tracer.start_as_current_span("user action") as action:
        async with client_for(first, tasks=True) as maker:
            created = await maker.start_tool("report")
        async with client_for(second, tasks=True) as poller:
            result = await poller.wait_for_task(created["taskId"])
    assert result["content"][0]["text"] == "reported"
    trace_id = action.get_span_context().trace_id
    assert {span.context.trace_id for span in otel.spans} == {trace_id}
    assert otel.named("tasks/get", SpanKind.SERVER)
    assert created["taskId"] not in json.dumps([_everything(span) for span in otel.spans])


async def test_a_task_asked_about_later_in_another_trace_links_to_the_one_that_made_it(
    otel: Recorded, tmp_path: Path
) -> None:
    """The client that made the task is gone; another, in another trace, polls another instance
    for it by id: the polls are in the new trace, each linked to the trace that made the task."""
    path = str(tmp_path / "tasks.sqlite3")
    with otel.tracer.start_as_current_span("made") as made:
        async with client_for(StreamableHTTP(build_server(SQLiteTaskStore(path))), tasks=True) as maker:
            created = await maker.start_tool("report")
    with otel.tracer.start_as_current_span("asked later") as later:
        async with client_for(StreamableHTTP(build_server(SQLiteTaskStore(path))), tasks=True) as poller:
            result = await poller.wait_for_task(created["taskId"])
    assert result["content"][0]["text"] == "reported"
    polls = otel.named("tasks/get", SpanKind.SERVER)
    assert polls
    # (In-process, the client's span is also the ambient context, linked as a transport's would be.)
    origins = [
        [link for link in poll.links if (link.attributes or {}).get("mcpref.link") == "task origin"] for poll in polls
    ]
    for poll, links in zip(polls, origins, strict=True):
        assert poll.context.trace_id == later.get_span_context().trace_id
        assert [link.context.trace_id for link in links] == [made.get_span_context().trace_id]
    call = otel.one("tools/call report", SpanKind.SERVER)
    assert {link.context.span_id for links in origins for link in links} == {call.context.span_id}


async def test_server_notifications_carry_the_server_span_back(otel: Recorded) -> None:
    progress: list[dict[str, Any]] = []
    async with client_for(StreamableHTTP(build_server()), on_progress=progress.append) as client:
        await client.call_tool("echo", {"message": "hi"})
    assert progress
    server_span = otel.one("tools/call echo", SpanKind.SERVER)
    received = otel.one("notifications/progress", SpanKind.SERVER)  # the client, receiving
    assert received.parent is not None and received.parent.span_id == server_span.context.span_id
    assert received.parent.is_remote


# -- secrets ---------------------------------------------------------------------------------------


def _everything(span: ReadableSpan) -> dict[str, Any]:
    """All a span says: name, attributes, status, events, links, resource."""
    return {
        "name": span.name,
        "attributes": attributes(span),
        "status": span.status.description,
        "events": [(event.name, dict(event.attributes or {})) for event in span.events],
        "links": [dict(link.attributes or {}) for link in span.links],
    }


async def test_no_span_or_metric_holds_a_token_or_a_request_state(otel: Recorded) -> None:
    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"ok": True}}

    sent: list[str] = []

    async def keep(request: httpx.Request) -> None:
        sent.append(request.content.decode())

    http = httpx.AsyncClient(
        transport=httpx.ASGITransport(app=StreamableHTTP(build_server())), headers={"Authorization": TOKEN}
    )
    http.event_hooks["request"].append(keep)
    async with Client(URL, http=http, elicitation=answer, era_cache=EraCache()) as client:
        await client.call_tool("confirm")
        await client.call_tool("broken")
        # A tampered requestState is refused, and its value is not echoed into the span either.
        with pytest.raises(InvalidParams):
            await client._call(
                "tools/call", {"name": "confirm", "requestState": "tampered-state-value", "inputResponses": {}}
            )
    states = [json.loads(body)["params"]["requestState"] for body in sent if '"requestState"' in body]
    secrets = [TOKEN, TOKEN.split()[1], "tampered-state-value", *states]
    recorded = json.dumps([_everything(span) for span in otel.spans])
    recorded += otel.reader.get_metrics_data().to_json()
    for secret in secrets:
        assert secret not in recorded


# -- the conventions -------------------------------------------------------------------------------


def _rows(text: str, header: str, columns: tuple[str, ...]) -> dict[str, dict[str, str]]:
    """The table under `header`: attribute -> column -> cell."""
    table = {}
    for row in text[text.index(header) :].split("\n")[2:]:
        if not row.startswith("|"):
            break
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        table[cells[0].strip("`")] = dict(zip(columns, cells[1:], strict=True))
    return table


def _page_table() -> dict[str, dict[str, str]]:
    """The attribute tables the observability page shows: attribute -> column -> level, and
    "mcpref" -> what mcpref records. Both tables name the same attributes."""
    for page in sorted(PAGES.rglob("*.md")):
        text = page.read_text("utf-8")
        if TABLE_HEADER in text:
            levels = _rows(text, TABLE_HEADER, COLUMNS)
            records = _rows(text, RECORDS_HEADER, ("mcpref",))
            assert sorted(records) == sorted(levels), "the two tables name the same attributes"
            return {key: {**row, **records[key]} for key, row in levels.items()}
    raise AssertionError(f"no page shows the table {TABLE_HEADER!r}")


def _conventions_table(text: str) -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for column, section in SECTIONS.items():
        start = text.index(f"<!-- semconv {section} -->")
        block = text[start : text.index("<!-- endsemconv -->", start)]
        for key, level in re.findall(r"^\| \[`([a-z_.]+)`\]\([^)]*\) \| [^|]* \| `([A-Za-z -]+)`", block, re.M):
            table.setdefault(key, {})[column] = level.lower()
    return table


def test_the_pages_table_is_the_conventions() -> None:
    """Where the conventions' text is next to the clone (CI, the developers' machines), the page's
    table must be theirs, attribute by attribute and requirement by requirement."""
    found = [path for path in CONVENTIONS if path.exists()]
    if not found:
        pytest.skip("../shared/spec/otel is not next to this clone; the page's table is taken as recorded")
    theirs = _conventions_table(found[0].read_text("utf-8"))
    ours = _page_table()
    assert sorted(ours) == sorted(theirs)
    for key, levels in theirs.items():
        for column in COLUMNS:
            assert ours[key][column] == levels.get(column, "—"), (key, column)


async def test_spans_use_only_the_tables_attributes(otel: Recorded) -> None:
    """Every attribute on a span is the table's for that kind of span; required ones are there;
    and what the table says mcpref never records is never recorded."""

    async def answer(params: dict[str, Any]) -> dict[str, Any]:
        return {"action": "accept", "content": {"ok": True}}

    table = _page_table()
    server = build_server()
    server.prompt(name="greeting")(lambda: "hello")
    server.resource("file:///present", name="present")(lambda: "here")
    async with client_for(StreamableHTTP(server), elicitation=answer) as client:
        await client.call_tool("echo", {"message": "hi"})
        await client.call_tool("broken")
        await client.call_tool("confirm")
        await client.get_prompt("greeting")
        with pytest.raises(InvalidParams):
            await client.call_tool("missing")
        await client.read_resource("file:///present")
        with pytest.raises(InvalidParams):
            await client.read_resource("file:///nothing")
    column_of = {SpanKind.CLIENT: "client span", SpanKind.SERVER: "server span"}
    never = {key for key, row in table.items() if row["mcpref"].startswith("never")}
    seen_keys: set[str] = set()
    for span in otel.spans:
        column = column_of[span.kind]
        keys = set(attributes(span))
        seen_keys |= keys
        assert keys <= {key for key, row in table.items() if row[column] != "—"}, (span.name, column)
        assert {key for key, row in table.items() if row[column] == "required"} <= keys
        assert not keys & never
        method = attributes(span)["mcp.method.name"]
        assert span.name == {
            "tools/call": f"tools/call {attributes(span).get('gen_ai.tool.name')}",
            "prompts/get": "prompts/get greeting",
        }.get(method, method)
    assert {"gen_ai.prompt.name", "mcp.resource.uri", "rpc.response.status_code", "error.type"} <= seen_keys


# -- the frame log, and the process without the extra ---------------------------------------------


@pytest.mark.parametrize(
    "traceparent",
    [
        TRACEPARENT,
        " " + TRACEPARENT,
        TRACEPARENT + "-extra",  # version 00 ends after the flags
        "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future",  # a later version may say more
        "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
        "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" + " " * 600,
        "",
    ],
)
def test_the_fallback_reads_traceparent_as_opentelemetry_does(traceparent: str) -> None:
    """The frame log's reading without the extra (`_trace_id_of`) agrees with the propagator's."""
    extracted = trace.get_current_span(TraceContextTextMapPropagator().extract({"traceparent": traceparent}))
    context = extracted.get_span_context()
    expected = f"{context.trace_id:032x}" if context.is_valid else None
    assert telemetry._trace_id_of(traceparent) == expected
    assert telemetry.trace_id({"traceparent": traceparent}) == expected


async def test_the_frame_log_shows_the_extracted_trace_id(otel: Recorded) -> None:
    frames: list[Any] = []
    app = FrameLog(StreamableHTTP(build_server()), frames.append)
    with otel.tracer.start_as_current_span("user action") as action:
        async with client_for(app) as client:
            await client.list_tools()
    assert {frame.trace_id for frame in frames} == {f"{action.get_span_context().trace_id:032x}"}


#: Run in a fresh interpreter where `opentelemetry` cannot be imported, and once where it can but
#: no SDK is installed: prints the bodies the client sent and the server answered, the frame log's
#: trace ids, and whether anything of OpenTelemetry was imported.
PROBE = textwrap.dedent(
    """
    import asyncio, json, sys

    class Blocked:
        def find_spec(self, name, path=None, target=None):
            if name == "opentelemetry" or name.startswith("opentelemetry."):
                raise ImportError(f"{name} is blocked")

    if sys.argv[1] == "blocked":  # the extra is not installed
        sys.meta_path.insert(0, Blocked())
    elif sys.argv[1] == "api":  # the application uses OpenTelemetry's API, with no SDK
        import opentelemetry.trace

    import httpx
    from mcpref import FrameLog, Server, StreamableHTTP, telemetry
    from mcpref.client import Client

    server = Server("probe", "1.0.0")

    @server.tool(input_schema={"type": "object", "properties": {"message": {"type": "string"}}})
    async def echo(message: str, ctx) -> str:
        await ctx.report_progress(1, 1)
        return message

    wire, frames = [], []

    async def request(r):
        wire.append(json.loads(r.content))

    async def response(r):
        await r.aread()
        wire.append(r.text)

    async def main():
        app = FrameLog(StreamableHTTP(server), frames.append)
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app),
                                 event_hooks={"request": [request], "response": [response]})
        async with Client("http://probe.test/mcp", http=http, on_progress=lambda p: None) as client:
            await client.call_tool("echo", {"message": "hi"})
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        for traceparent in ["00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-nonsense"]:
            body = {"jsonrpc": "2.0", "id": 7, "method": "tools/list",
                    "params": {"_meta": {**meta, "traceparent": traceparent}}}
            await http.post("http://probe.test/mcp", json=body, headers={
                "Accept": "application/json, text/event-stream", "Mcp-Method": "tools/list",
                "MCP-Protocol-Version": "2026-07-28"})

    asyncio.run(main())
    print(json.dumps({
        "active": telemetry.active(),
        "imported": sorted(name for name in sys.modules if name.split(".")[0] == "opentelemetry"),
        "wire": wire,
        "trace_ids": [frame.trace_id for frame in frames if frame.direction == "in"],
    }))
    """
)


def _probe(mode: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, mode], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_without_the_extra_nothing_is_imported_and_the_wire_is_unchanged() -> None:
    blocked, unused, api_only = _probe("blocked"), _probe("unused"), _probe("api")
    # Without the extra, and with it while the application does not use OpenTelemetry: nothing.
    assert blocked["active"] is False and blocked["imported"] == []
    assert unused["active"] is False and unused["imported"] == []
    assert api_only["active"] is True and "opentelemetry.trace" in api_only["imported"]
    # The same bytes on the wire in all three: with the API and no SDK there is nothing to propagate.
    assert blocked["wire"] == unused["wire"] == api_only["wire"]
    sent = [message for message in blocked["wire"] if isinstance(message, dict)]
    assert len(sent) == 5  # server/discover, tools/list, tools/call, and the two by hand
    assert all(not set(message["params"]["_meta"]) & set(telemetry.TRACE_KEYS) for message in sent[:3])
    assert "traceparent" not in json.dumps(blocked["wire"][:6])
    # The frame log still reads trace ids (its own W3C check), and ignores a malformed one.
    assert blocked["trace_ids"][-2:] == ["4bf92f3577b34da6a3ce929d0e0e4736", None]
    assert unused["trace_ids"] == api_only["trace_ids"] == blocked["trace_ids"]
