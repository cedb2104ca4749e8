"""`prometheus_text()`: the metrics in the Prometheus text format, for a `/metrics` route."""

from __future__ import annotations

from opentelemetry.sdk.metrics import MeterProvider
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from handoffs import Runner
from handoffs.telemetry import (
    PROMETHEUS_CONTENT_TYPE,
    Telemetry,
    prometheus_reader,
    prometheus_text,
)

from .test_spans import busy_model, busy_team


async def test_prometheus_text_holds_the_turns_counters_and_histograms() -> None:
    registry = CollectorRegistry()
    provider = MeterProvider(metric_readers=[prometheus_reader(registry)])
    runner = Runner(busy_team(), model=busy_model(),
                    telemetry=Telemetry(meter_provider=provider))
    await runner.run("sess-1", "I was charged twice")

    text = prometheus_text(registry)
    provider.shutdown()

    samples = {(s.name, tuple(sorted((k, v) for k, v in s.labels.items()
                                     if not k.startswith("otel_scope_")))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    route = (("handoffs_handoff_kind", "llm"), ("handoffs_handoff_outcome", "accepted"),
             ("handoffs_handoff_source", "triage"), ("handoffs_handoff_target", "billing"))
    assert samples[("handoffs_handoff_requests_total", route)] == 1
    refused = (("handoffs_handoff_kind", "llm"), ("handoffs_handoff_outcome", "unknown_target"),
               ("handoffs_handoff_source", "triage"), ("handoffs_handoff_target", "_OTHER"))
    assert samples[("handoffs_handoff_requests_total", refused)] == 1
    assert samples[("handoffs_turns_total", (("handoffs_turn_status", "completed"),))] == 1
    assert samples[("handoffs_guardrail_trips_total", (
        ("gen_ai_agent_name", "billing"), ("handoffs_guardrail_name", "no_refunds"),
        ("handoffs_guardrail_stage", "output")))] == 1
    assert any(name == "handoffs_turn_duration_seconds_count" for name, _ in samples)
    assert any(name == "gen_ai_client_operation_duration_seconds_bucket" for name, _ in samples)
    assert "# TYPE handoffs_handoff_requests_total counter" in text


def test_the_content_type_is_prometheus_text_version_0_0_4() -> None:
    assert PROMETHEUS_CONTENT_TYPE.startswith("text/plain; version=0.0.4")
