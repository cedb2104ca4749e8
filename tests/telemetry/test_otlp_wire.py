"""The wire: spans and metrics reach an OTLP/HTTP receiver that the test starts, as
protobuf, with names, parents and attributes intact; `export_otlp()` is the README's
three lines."""

from __future__ import annotations

import gzip
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from handoffs import Runner
from handoffs.telemetry import Telemetry

from .test_spans import busy_model, busy_team


class Receiver:
    """A local OTLP/HTTP receiver: keeps each request's path, content type and body."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, bytes]] = []
        self.refuse = ""
        """A path answered 405 (kept all the same), as a trace-only backend's metrics."""
        received = self.requests
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                received.append((self.path, self.headers["Content-Type"], body))
                self.send_response(405 if self.path == receiver.refuse else 200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def spans(self, scope: str | None = "handoffs") -> list[Any]:
        """Every span received (`scope`: checked to be the only instrumentation scope;
        None: any, as a FastAPI with telemetry of its own adds its server spans)."""
        found = []
        for path, content_type, body in self.requests:
            if path == "/v1/traces":
                assert content_type == "application/x-protobuf"
                request = ExportTraceServiceRequest.FromString(body)
                for rs in request.resource_spans:
                    for ss in rs.scope_spans:
                        assert scope is None or ss.scope.name == scope
                        found.extend(ss.spans)
        return found

    def metric_names(self) -> set[str]:
        names = set()
        for path, _, body in self.requests:
            if path == "/v1/metrics":
                for rm in ExportMetricsServiceRequest.FromString(body).resource_metrics:
                    for sm in rm.scope_metrics:
                        names.update(m.name for m in sm.metrics)
        return names


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()
    r.server.server_close()


def attributes(span: Any) -> dict[str, Any]:
    out = {}
    for kv in span.attributes:
        value = kv.value
        out[kv.key] = getattr(value, value.WhichOneof("value"))
    return out


async def test_spans_reach_an_otlp_receiver_intact(receiver: Receiver) -> None:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(
        OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces")))
    runner = Runner(busy_team(), model=busy_model(),
                    telemetry=Telemetry(tracer_provider=provider))
    result = await runner.run("sess-1", "I was charged twice")
    provider.shutdown()

    spans = receiver.spans()
    by_id = {s.span_id: s for s in spans}
    names = sorted(s.name for s in spans)
    assert names.count("chat scripted-1") == 8 and names.count("invoke_workflow") == 1
    root = next(s for s in spans if s.name == "invoke_workflow")
    assert root.parent_span_id == b""
    research = next(s for s in spans if s.name == "invoke_agent research")
    ask = by_id[research.parent_span_id]
    assert ask.name == "execute_tool ask_research"
    assert by_id[ask.parent_span_id].name == "invoke_agent triage"
    assert by_id[by_id[ask.parent_span_id].parent_span_id] is root
    refused = attributes(next(s for s in spans if s.name == "execute_tool transfer_to_nobody"))
    assert refused["handoffs.handoff.rejection"] == "unknown_target"
    assert refused["handoffs.handoff.accepted"] is False
    assert refused["gen_ai.conversation.id"] == "sess-1"
    assert {s.trace_id.hex() for s in spans} == {result.events[0].data["trace_id"]}


@pytest.mark.parametrize("metrics", [False, True])
def test_export_otlp_is_the_three_lines_of_the_readme(receiver: Receiver, metrics: bool) -> None:
    """Spans by default; metrics only when asked for (`metrics=True`): a trace-only
    backend (Jaeger, Phoenix, ...) answers 404 or 405 to `/v1/metrics`, and the exporter
    would print that every minute."""
    receiver.refuse = "/v1/metrics"  # as a trace-only backend does
    extra = ", metrics=True, metric_interval=0.2" if metrics else ""
    code = textwrap.dedent(f"""
        import asyncio, sys, time
        sys.path.insert(0, {str(Path(__file__).resolve().parents[1])!r})
        from telemetry.test_spans import busy_model, busy_team
        from handoffs import Runner
        from handoffs.telemetry import export_otlp
        export_otlp({receiver.url!r}, service_name="support-bot"{extra})
        asyncio.run(Runner(busy_team(), model=busy_model()).run("s", "I was charged twice"))
        time.sleep(0.5 if {metrics!r} else 0)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr

    spans = receiver.spans()
    assert sorted({s.name for s in spans}) == [
        "chat scripted-1", "execute_tool ask_facts", "execute_tool ask_research",
        "execute_tool lookup", "execute_tool transfer_to_billing",
        "execute_tool transfer_to_nobody", "handoff support", "invoke_agent billing",
        "invoke_agent facts", "invoke_agent research", "invoke_agent support",
        "invoke_agent triage", "invoke_workflow"]
    request = ExportTraceServiceRequest.FromString(
        next(b for p, _, b in receiver.requests if p == "/v1/traces"))
    resource = {kv.key: kv.value.string_value
                for kv in request.resource_spans[0].resource.attributes}
    assert resource["service.name"] == "support-bot"
    if not metrics:
        assert not [r for r in receiver.requests if r[0] == "/v1/metrics"]
        assert "metrics" not in done.stderr, done.stderr
        return
    # asked for: sent (a scripted model reports no token usage, so there is none)
    assert {"handoffs.handoff.requests", "handoffs.turns", "gen_ai.client.operation.duration",
            "handoffs.agent.duration"} <= receiver.metric_names()
    assert "gen_ai.client.token.usage" not in receiver.metric_names()
