"""A traced server for tests/service/test_trace_context.py, run as its own process (under
this venv's FastAPI, or the oldest one the `server` extra allows):

    python trace_server.py PORT SPANS_FILE [global]

The support team on the offline model, its spans written as JSON lines (name, trace id,
span id, parent span id) to SPANS_FILE as they end. `global`: the tracer provider is also
OpenTelemetry's global one (so a FastAPI with its own telemetry makes a server span);
otherwise only the runner has it (`Telemetry(tracer_provider=...)`).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import uvicorn
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from handoffs import Runner
from handoffs.examples.support import build_team, rule_model
from handoffs.server import create_app
from handoffs.telemetry import Telemetry


class Lines(SpanExporter):
    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Any) -> SpanExportResult:
        with open(self.path, "a", encoding="utf-8") as f:
            for s in spans:
                f.write(json.dumps({
                    "name": s.name, "trace_id": format(s.context.trace_id, "032x"),
                    "span_id": format(s.context.span_id, "016x"),
                    "parent_id": format(s.parent.span_id, "016x") if s.parent else None,
                }) + "\n")
        return SpanExportResult.SUCCESS


def main() -> None:
    port, path = int(sys.argv[1]), sys.argv[2]
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(Lines(path)))
    if sys.argv[3:] == ["global"]:
        trace.set_tracer_provider(provider)
    runner = Runner(build_team(), model=rule_model(), store="memory://",
                    telemetry=Telemetry(tracer_provider=provider))
    app = create_app(runner, operator_key="op-key")
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
