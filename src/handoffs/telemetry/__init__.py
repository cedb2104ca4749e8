"""Observability: OpenTelemetry traces and metrics of every turn, Prometheus text.

Nothing here imports OpenTelemetry until a turn is traced or a function below that needs
it is called, so `import handoffs` stays light and an application that configures no
provider pays nothing. See docs/observability.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names
from .config import Telemetry

if TYPE_CHECKING:
    from .otlp import export_otlp
    from .prometheus import PROMETHEUS_CONTENT_TYPE, prometheus_reader, prometheus_text

_LAZY = {
    "export_otlp": "otlp",
    "prometheus_reader": "prometheus",
    "prometheus_text": "prometheus",
    "PROMETHEUS_CONTENT_TYPE": "prometheus",
}


__getattr__ = lazy_names(__name__, _LAZY, globals())


__all__ = ["PROMETHEUS_CONTENT_TYPE", "Telemetry", "export_otlp", "prometheus_reader",
           "prometheus_text"]
