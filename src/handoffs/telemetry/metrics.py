"""The metric instruments: counters and histograms through the OpenTelemetry metrics API.

| instrument | kind | unit | attributes |
| --- | --- | --- | --- |
| `handoffs.handoff.requests` | counter | {request} | source, target, kind, outcome (`accepted` or the rejection code) |
| `handoffs.handoff.latency` | histogram | s | source, target, kind: from the request to the target's first output |
| `handoffs.turns` | counter | {turn} | status, `error.type` on failed turns |
| `handoffs.turn.duration` | histogram | s | status |
| `handoffs.agent.duration` | histogram | s | `gen_ai.agent.name`, `error.type` when the activation failed |
| `handoffs.tool.duration` | histogram | s | `gen_ai.tool.name`, `error.type` when the call's result is an error (its count: the calls) |
| `handoffs.approval.wait` | histogram | s | `gen_ai.tool.name`, `handoffs.approval.decision`: from the request to the person's decision |
| `gen_ai.client.operation.duration` | histogram | s | operation, provider, request model, `error.type` |
| `gen_ai.client.token.usage` | histogram | {token} | `gen_ai.token.type`, provider, model, `gen_ai.agent.name` |
| `handoffs.guardrail.trips` | counter | {trip} | agent, guardrail, stage |
| `handoffs.human.waits` | counter | {wait} | agent |

Made once per meter provider (`Telemetry.instruments`), recorded by the turn's observer.
The counters are asynchronous (observable): a turn adds one to a count of its own, and the
SDK reads the counts when it collects, so counting costs a turn a dictionary update
rather than a pass through the SDK.
"""  # noqa: E501

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from . import semconv as sc

DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                    40.96, 81.92)
"""The GenAI conventions' advised boundaries for `gen_ai.client.operation.duration`."""
TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                 16777216, 67108864)
"""The GenAI conventions' advised boundaries for `gen_ai.client.token.usage`."""
FAST_BUCKETS = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
                60.0, 120.0, 300.0)
"""Turns and activations: from a millisecond (no model call) to minutes."""
WAIT_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 300.0, 900.0, 1800.0, 3600.0, 14400.0, 86400.0)
"""Waits for a person: from a second to a day."""

COUNTERS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    sc.METRIC_HANDOFFS: ("{request}", "Handoff requests by source, target, kind and outcome "
                         "(accepted or the rejection code).",
                         (sc.HANDOFF_SOURCE, sc.HANDOFF_TARGET, sc.HANDOFF_KIND,
                          sc.HANDOFF_OUTCOME)),
    sc.METRIC_TURNS: ("{turn}", "Turns by final status.", (sc.TURN_STATUS, sc.ERROR_TYPE)),
    sc.METRIC_GUARDRAIL_TRIPS: ("{trip}", "Guardrails that refused an input or output.",
                                (sc.AGENT_NAME, sc.GUARDRAIL, sc.GUARDRAIL_STAGE)),
    sc.METRIC_HUMAN_WAITS: ("{wait}", "Turns that ended waiting for a human agent.",
                            (sc.AGENT_NAME,)),
}
"""Each counter: unit, description, and the attribute names of its values (a None value
leaves its attribute out)."""


class Instruments:
    """Every instrument, made from one meter provider."""

    __slots__ = ("agent_duration", "approval_wait", "counts", "handoff_latency",
                 "model_duration", "tokens", "tool_duration", "turn_duration")

    def __init__(self, provider: Any) -> None:
        from .. import __version__

        meter = provider.get_meter("handoffs", __version__)
        self.counts: dict[str, dict[tuple[Any, ...], int]] = {}
        """Per counter, its count per attribute values (read by the SDK's callbacks)."""
        for name, (unit, description, keys) in COUNTERS.items():
            counts = self.counts[name] = {}
            meter.create_observable_counter(name, [_observer(counts, keys)], unit,
                                            description)
        self.turn_duration = meter.create_histogram(
            sc.METRIC_TURN_DURATION, "s", "Duration of a turn, from its start to its result.",
            explicit_bucket_boundaries_advisory=FAST_BUCKETS)
        self.agent_duration = meter.create_histogram(
            sc.METRIC_AGENT_DURATION, "s", "Duration of one activation of an agent.",
            explicit_bucket_boundaries_advisory=FAST_BUCKETS)
        self.model_duration = meter.create_histogram(
            sc.METRIC_MODEL_DURATION, "s", "GenAI operation duration.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS)
        self.tokens = meter.create_histogram(
            sc.METRIC_TOKEN_USAGE, "{token}", "Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=TOKEN_BUCKETS)
        self.handoff_latency = meter.create_histogram(
            sc.METRIC_HANDOFF_LATENCY, "s", "From a handoff request to the target's first "
            "output (its first text, or its first delta when streamed).",
            explicit_bucket_boundaries_advisory=FAST_BUCKETS)
        self.tool_duration = meter.create_histogram(
            sc.METRIC_TOOL_DURATION, "s", "Duration of a tool call, from the call to its "
            "result; its count is the number of calls.",
            explicit_bucket_boundaries_advisory=FAST_BUCKETS)
        self.approval_wait = meter.create_histogram(
            sc.METRIC_APPROVAL_WAIT, "s", "From a tool call's request for approval to a "
            "person's decision.", explicit_bucket_boundaries_advisory=WAIT_BUCKETS)

    def count(self, name: str, *values: Any) -> None:
        """Add one to counter `name` for these attribute values (in `COUNTERS` order)."""
        counts = self.counts[name]
        counts[values] = counts.get(values, 0) + 1

    def handoff(self, team: Any, source: str, target: str, kind: str, outcome: str) -> None:
        """Count one request. A target outside the team (a model's invention, refused as
        `unknown_target`) is counted as `_OTHER`, so a model cannot grow the series."""
        if target not in team:
            target = "_OTHER"
        self.count(sc.METRIC_HANDOFFS, source, target, kind, outcome)


def _observer(counts: dict[tuple[Any, ...], int], keys: tuple[str, ...]) -> Any:
    def observe(options: Any) -> Iterator[Any]:
        from opentelemetry.metrics import Observation

        for values, n in list(counts.items()):  # a copy: turns count while this reads
            yield Observation(n, {k: v for k, v in zip(keys, values, strict=True)
                                  if v is not None})
    return observe
