"""A server for tests/protocols/test_no_secret_out.py, run as its own process:

    python secrets_server.py PORT OUT_DIR     (operator key: $SECRETS_SERVER_OPERATOR_KEY)

The support team on its offline model with every face on (HTTP, the page, A2A, AG-UI,
the OpenAI-compatible endpoint). OpenTelemetry's SDK is the process's global tracer
provider, so every library that traces makes its spans (the team's turns, the a2a-sdk's
request handler, FastAPI's own request spans); they go to an in-memory exporter, which
also writes each, every attribute, event and status, as a JSON line of OUT_DIR/spans.jsonl
as it ends (uvicorn ends the process on SIGTERM by raising it again, so nothing runs
after it stops). Every logger writes at DEBUG to standard error (uvicorn's access lines
included).
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class Kept(InMemorySpanExporter):
    """The in-memory exporter, each span also written to a file as it comes."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def export(self, spans: Any) -> SpanExportResult:
        with open(self.path, "a", encoding="utf-8") as f:
            for s in spans:
                f.write(json.dumps(_span(s), default=str) + "\n")
        return super().export(spans)


def _span(s: ReadableSpan) -> dict[str, Any]:
    return {"name": s.name, "attributes": dict(s.attributes or {}),
            "events": [{"name": e.name, "attributes": dict(e.attributes or {})}
                       for e in s.events],
            "links": [dict(link.attributes or {}) for link in s.links],
            "status": s.status.description, "resource": dict(s.resource.attributes)}


def main() -> None:
    port, out = int(sys.argv[1]), Path(sys.argv[2])
    exporter = Kept(out / "spans.jsonl")
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)  # before any library asks for a tracer
    logging.basicConfig(level=logging.DEBUG, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")

    import uvicorn

    from handoffs import Runner
    from handoffs.examples.support import build_team, rule_model
    from handoffs.server import create_app
    from handoffs.telemetry import Telemetry

    runner = Runner(build_team(), model=rule_model(), store="memory://",
                    telemetry=Telemetry(tracer_provider=provider))
    app = create_app(runner, operator_key=os.environ["SECRETS_SERVER_OPERATOR_KEY"],
                     a2a=True, agui=True)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="debug",
                timeout_graceful_shutdown=5)


if __name__ == "__main__":
    main()
