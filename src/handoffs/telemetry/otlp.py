"""`export_otlp()`: every turn's spans and metrics to any OTLP/HTTP backend, in one call.

For applications that do not configure OpenTelemetry themselves. One that does (its own
`TracerProvider`, or `opentelemetry-instrument`) needs nothing from here: runners follow
the global providers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from ..errors import missing_extra
from .config import global_meter_provider, global_tracer_provider

log = logging.getLogger(__name__)


def export_otlp(endpoint: str | None = None, *, service_name: str = "handoffs",
                metrics: bool = False, headers: Mapping[str, str] | None = None,
                metric_interval: float = 60.0) -> tuple[Any, Any]:
    """Set the global tracer provider (and, with `metrics=True`, the meter provider) to
    export over OTLP/HTTP.

    `endpoint` is the collector's base URL (`http://localhost:4318`; spans go to
    `/v1/traces`, metrics to `/v1/metrics`); None follows the `OTEL_EXPORTER_OTLP_*`
    environment variables, else that default. Metrics are opt-in: many tracing backends
    (Jaeger, Phoenix, ...) take no metrics and answer `/v1/metrics` with an error the
    exporter would print every `metric_interval` seconds. Returns `(tracer_provider,
    meter_provider)` (None when metrics are off and none was set); both flush when the
    process exits. A provider the application already set is kept (and returned) rather
    than replaced.

    Needs the SDK and the exporter: `pip install 'handoffs[otlp]'`.
    """
    try:
        from opentelemetry import metrics as otel_metrics
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise missing_extra(f"export_otlp needs the OpenTelemetry SDK and its OTLP exporter "
                            f"({exc.name} is missing)", "otlp") from exc
    base = endpoint.rstrip("/") if endpoint else None
    resource = Resource.create({"service.name": service_name})
    tracer_provider = global_tracer_provider()
    if tracer_provider is None:
        exporter = (OTLPSpanExporter(endpoint=f"{base}/v1/traces", headers=dict(headers or {}))
                    if base else OTLPSpanExporter(headers=dict(headers) if headers else None))
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
        trace.set_tracer_provider(tracer_provider)
    else:
        log.info("export_otlp: a tracer provider is already set; keeping it")
    meter_provider = global_meter_provider()
    if metrics and meter_provider is None:
        metric_exporter = (
            OTLPMetricExporter(endpoint=f"{base}/v1/metrics", headers=dict(headers or {}))
            if base else OTLPMetricExporter(headers=dict(headers) if headers else None))
        reader = PeriodicExportingMetricReader(
            metric_exporter, export_interval_millis=metric_interval * 1000)
        meter_provider = MeterProvider(resource=resource, metric_readers=[reader])
        otel_metrics.set_meter_provider(meter_provider)
    return tracer_provider, meter_provider
