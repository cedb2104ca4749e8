"""The metric instruments: counters and histograms through the OpenTelemetry metrics API.

| instrument | kind | unit | attributes |
| --- | --- | --- | --- |
| `handoffs.handoff.requests` | counter | {request} | source, target, kind, outcome (`accepted` or the rejection code) |
| `handoffs.turns` | counter | {turn} | status, `error.type` on failed turns |
| `handoffs.turn.duration` | histogram | s | status |
| `handoffs.agent.duration` | histogram | s | `gen_ai.agent.name`, `error.type` when the activation failed |
| `gen_ai.client.operation.duration` | histogram | s | operation, provider, request model, `error.type` |
| `gen_ai.client.token.usage` | histogram | {token} | `gen_ai.token.type`, provider, model, `gen_ai.agent.name` |
| `handoffs.guardrail.trips` | counter | {trip} | agent, guardrail, stage |
| `handoffs.human.waits` | counter | {wait} | agent |

Made once per meter provider (`Telemetry.instruments`), recorded by the turn's observer.
"""  # noqa: E501

from __future__ import annotations

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


class Instruments:
    """Every instrument, made from one meter provider."""

    __slots__ = ("agent_duration", "guardrails", "handoffs", "human_waits", "model_duration",
                 "tokens", "turn_duration", "turns")

    def __init__(self, provider: Any) -> None:
        from .. import __version__

        meter = provider.get_meter("handoffs", __version__)
        self.handoffs = meter.create_counter(
            sc.METRIC_HANDOFFS, "{request}",
            "Handoff requests by source, target, kind and outcome (accepted or the "
            "rejection code).")
        self.turns = meter.create_counter(sc.METRIC_TURNS, "{turn}",
                                          "Turns by final status.")
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
        self.guardrails = meter.create_counter(sc.METRIC_GUARDRAIL_TRIPS, "{trip}",
                                               "Guardrails that refused an input or output.")
        self.human_waits = meter.create_counter(
            sc.METRIC_HUMAN_WAITS, "{wait}", "Turns that ended waiting for a human agent.")

    def handoff(self, team: Any, source: str, target: str, kind: str, outcome: str) -> None:
        """Count one request. A target outside the team (a model's invention, refused as
        `unknown_target`) is counted as `_OTHER`, so a model cannot grow the series."""
        if target not in team:
            target = "_OTHER"
        self.handoffs.add(1, {sc.HANDOFF_SOURCE: source, sc.HANDOFF_TARGET: target,
                              sc.HANDOFF_KIND: kind, sc.HANDOFF_OUTCOME: outcome})
