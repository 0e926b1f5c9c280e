"""The stdio server of tests/test_telemetry_transports.py: tests/stdio_server.py's server, with
the OpenTelemetry SDK installed the way an application installs it, writing each span it ends to
the file `MCPREF_SPANS` names, one JSON object a line (`python -m tests.otel_stdio_server`)."""

from __future__ import annotations

import json
import os

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from mcpref.transports.stdio import serve_stdio
from tests.stdio_server import server


def line(span: ReadableSpan) -> str:
    parent = span.parent
    return (
        json.dumps(
            {
                "name": span.name,
                "kind": span.kind.name,
                "trace_id": f"{span.context.trace_id:032x}",
                "span_id": f"{span.context.span_id:016x}",
                "parent_id": f"{parent.span_id:016x}" if parent is not None else None,
                "attributes": dict(span.attributes or {}),
            }
        )
        + "\n"
    )


if __name__ == "__main__":
    spans = open(os.environ["MCPREF_SPANS"], "w", encoding="utf-8")  # noqa: SIM115 - open while the server runs
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=spans, formatter=line)))
    trace.set_tracer_provider(provider)
    serve_stdio(server)
