"""OpenTelemetry's SDK with its in-memory span exporter and metric reader, per test.

Providers are passed to each runner (`Telemetry(tracer_provider=..., meter_provider=...)`)
rather than set globally: OpenTelemetry lets a process set its global providers once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from handoffs.models import ModelRequest, ModelResponse
from handoffs.telemetry import Telemetry
from handoffs.testing import ScriptedModel


@dataclass
class Otel:
    exporter: InMemorySpanExporter
    reader: InMemoryMetricReader
    telemetry: Telemetry

    @property
    def spans(self) -> list[ReadableSpan]:
        return sorted(self.exporter.get_finished_spans(), key=lambda s: s.start_time or 0)

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, f"{len(found)} spans named {name!r}: {self.tree()}"
        return found[0]

    def tree(self) -> list[Any]:
        """Every trace as nested (name, [children]) in start order."""
        spans = self.spans
        ids = {s.context.span_id for s in spans}  # type: ignore[union-attr]

        def children(parent: int | None) -> list[Any]:
            return [(s.name, children(s.context.span_id))  # type: ignore[union-attr]
                    for s in spans
                    if (s.parent.span_id if s.parent is not None and s.parent.span_id in ids
                        else None) == parent]

        return children(None)

    def parent_of(self, span: ReadableSpan) -> ReadableSpan | None:
        if span.parent is None:
            return None
        return next((s for s in self.spans
                     if s.context.span_id == span.parent.span_id), None)  # type: ignore[union-attr]

    def points(self, metric: str) -> list[tuple[dict[str, Any], Any]]:
        """(attributes, value or histogram count) of every point of one metric."""
        data = self.reader.get_metrics_data()
        found: list[tuple[dict[str, Any], Any]] = []
        for rm in data.resource_metrics if data is not None else ():
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    if m.name == metric:
                        for p in m.data.data_points:
                            found.append((dict(p.attributes or {}),
                                          getattr(p, "value", None)
                                          if hasattr(p, "value") else p.count))
        return found


@pytest.fixture
def otel() -> Iterator[Otel]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    yield Otel(exporter, reader, Telemetry(tracer_provider=tracer_provider,
                                           meter_provider=meter_provider))
    tracer_provider.shutdown()
    meter_provider.shutdown()


class NamedModel(ScriptedModel):
    """A scripted model that says which provider and model it is, as real adapters do."""

    provider = "scripted"
    model = "scripted-1"


class BarrierModel(NamedModel):
    """Agents in `together` answer only once all of them are waiting on the model: a turn
    that ran them one after another would time out here."""

    def __init__(self, steps: Any, together: tuple[str, ...]) -> None:
        super().__init__(steps)
        self.together = together
        self.waiting = 0
        self.all_in = asyncio.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.agent in self.together:
            self.waiting += 1
            if self.waiting == len(self.together):
                self.all_in.set()
            await asyncio.wait_for(self.all_in.wait(), 5)
        return await super().complete(request)
