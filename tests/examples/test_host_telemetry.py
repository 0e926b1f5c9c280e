"""The example host with OpenTelemetry: one user action, two servers and a task, one trace.

The weather desk and the tide tables (mcpref.examples.reference_server) and the report desk
(mcpref.examples.tasks_server, whose `count_slowly` runs as a task) each under a real uvicorn on
loopback; the host's spans and every server's are recorded by one SDK (tests/test_telemetry.py's
`otel` fixture), since all run in this process.
"""

from __future__ import annotations

from contextlib import ExitStack

import pytest
from opentelemetry.trace import SpanKind

from mcpref.examples import tasks_server
from mcpref.examples.host import ConsentGate, Host, Registry
from mcpref.examples.reference_server import create_app, tides
from tests.conftest import running
from tests.test_telemetry import Recorded, otel  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio


async def test_one_action_is_one_trace_across_two_servers_and_a_task(otel: Recorded) -> None:  # noqa: F811
    with ExitStack() as stack:
        weather = stack.enter_context(running(create_app()))
        harbour = stack.enter_context(running(tides.create_app()))
        desk = stack.enter_context(running(tasks_server.create_app()))
        registry = Registry()
        registry.add("weather", f"{weather}/mcp", trust_annotations=True)
        registry.add("tides", f"{harbour}/tides/mcp")
        registry.add("desk", f"{desk}/tasks/mcp")
        gate = ConsentGate()
        gate.allow("weather", "convert_temperature")
        gate.allow("tides", "get_forecast")
        gate.allow("desk", "count_slowly")
        async with Host(registry, principal="alice", consent=gate, listen=False, tasks=True) as host:
            await host.start()
            otel.exporter.clear()  # discovery was its own traces; the action starts here
            with host.action("plan the day") as action:
                converted = await host.call("weather.convert_temperature", {"value": 20, "from": "C", "to": "F"})
                forecast = await host.call("tides.get_forecast", {"port": "oslo"})
                counted = await host.call("desk.count_slowly", {"to": 1})
    assert "68" in converted.text and forecast.text and counted.text == "Counted to 1."
    spans = otel.spans
    root = otel.one("plan the day", SpanKind.INTERNAL)
    assert action is not None
    assert {span.context.trace_id for span in spans} == {root.context.trace_id}
    by_id = {span.context.span_id: span for span in spans}

    def parent(span):  # type: ignore[no-untyped-def]
        return by_id[span.parent.span_id] if span.parent is not None else None

    for name, server in [
        ("weather.convert_temperature", "weather"),
        ("tides.get_forecast", "tides"),
        ("desk.count_slowly", "desk"),
    ]:
        call = otel.one(f"host call {name}", SpanKind.INTERNAL)
        assert parent(call) is root and dict(call.attributes or {})["mcpref.host.server"] == server
        tool = name.split(".")[1]
        client_span = otel.one(f"tools/call {tool}", SpanKind.CLIENT)
        server_span = otel.one(f"tools/call {tool}", SpanKind.SERVER)
        assert parent(client_span) is call and parent(server_span) is client_span
    run = otel.one("task tools/call count_slowly", SpanKind.INTERNAL)
    assert parent(run) is otel.one("tools/call count_slowly", SpanKind.SERVER)
    polls = otel.named("tasks/get", SpanKind.SERVER)
    assert polls and all(
        parent(parent(poll)) is otel.one("host call desk.count_slowly", SpanKind.INTERNAL) for poll in polls
    )
