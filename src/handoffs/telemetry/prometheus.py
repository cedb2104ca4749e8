"""Metrics in the Prometheus text format, for a `/metrics` route.

OpenTelemetry's Prometheus exporter (`pip install 'handoffs[prometheus]'`, which brings
`prometheus-client`) is a metric reader that answers Prometheus' scrapes from the
instruments' current values. Put `prometheus_reader()` in the application's
`MeterProvider`, and serve `prometheus_text()` with `PROMETHEUS_CONTENT_TYPE`:

    from opentelemetry import metrics
    from opentelemetry.sdk.metrics import MeterProvider
    from handoffs.telemetry import prometheus_reader, prometheus_text

    metrics.set_meter_provider(MeterProvider(metric_readers=[prometheus_reader()]))
    ...
    body = prometheus_text()     # what GET /metrics returns
"""

from __future__ import annotations

from typing import Any

from ..errors import HandoffsError, missing_extra

PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The content type of the Prometheus text format (version 0.0.4)."""


def _missing(exc: ImportError) -> HandoffsError:
    return missing_extra(f"Prometheus metrics need OpenTelemetry's Prometheus exporter "
                         f"({exc.name} is missing)", "prometheus")


def prometheus_reader(registry: Any = None) -> Any:
    """A metric reader that registers the instruments with a `prometheus_client`
    registry (None: its default `REGISTRY`) for `prometheus_text` to render."""
    try:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
    except ImportError as exc:
        raise _missing(exc) from exc
    if registry is None:
        return PrometheusMetricReader()
    return PrometheusMetricReader(registry=registry)  # exporter 0.5xb0 and later


def prometheus_text(registry: Any = None) -> str:
    """The current metrics of `registry` (None: `prometheus_client`'s default) as
    Prometheus text: what a `/metrics` route returns, with `PROMETHEUS_CONTENT_TYPE`."""
    try:
        from prometheus_client import REGISTRY, generate_latest
    except ImportError as exc:
        raise _missing(exc) from exc
    text: bytes = generate_latest(registry if registry is not None else REGISTRY)
    return text.decode()
