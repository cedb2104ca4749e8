"""`Telemetry`: whether a turn is traced and measured, decided once per turn.

This module never imports OpenTelemetry. A turn asks `observe(turn)`; with no tracer
or meter provider configured (OpenTelemetry not imported at all, or only its API with
its default no-op providers) it returns at once and the turn runs exactly as it would
without this package: no wrapper, no extra branch on the hot path.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.handoff import HandoffRecord
    from ..core.session import SessionState
    from .observing import ObservedRunner, ObservedTurn

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The GenAI conventions' switch for recording message content on spans."""


class Telemetry:
    """How a `Runner` reports to OpenTelemetry: `Runner(team, telemetry=Telemetry(...))`.

    The default (`Runner(telemetry=None)`) follows the application: a turn is traced when
    a global tracer provider is set (`opentelemetry.trace.set_tracer_provider`) and
    measured when a global meter provider is set; otherwise nothing is done.
    `telemetry=False` turns it off whatever is configured.
    """

    __slots__ = ("_instruments", "_tracer", "capture_content", "meter_provider",
                 "tracer_provider", "workflow_name")

    def __init__(self, *, tracer_provider: Any = None, meter_provider: Any = None,
                 capture_content: bool | None = None, workflow_name: str | None = None) -> None:
        self.tracer_provider = tracer_provider
        """A `TracerProvider` to use; None: the global one, when the application set one."""
        self.meter_provider = meter_provider
        """A `MeterProvider` to use; None: the global one, when the application set one."""
        if capture_content is None:
            capture_content = os.environ.get(CAPTURE_ENV, "").strip().lower() == "true"
        self.capture_content = capture_content
        """Record message text, tool arguments and results on spans (opt-in, as the GenAI
        conventions say). None: on when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
        is `true`."""
        self.workflow_name = workflow_name
        """`gen_ai.workflow.name` of each turn's `invoke_workflow` span (None: no name)."""
        self._tracer: tuple[Any, Any] | None = None
        self._instruments: tuple[Any, Any] | None = None

    def __repr__(self) -> str:
        return (f"Telemetry(tracer_provider={self.tracer_provider!r}, meter_provider="
                f"{self.meter_provider!r}, capture_content={self.capture_content!r})")

    def tracer(self) -> Any:
        """The tracer for this turn, or None when no tracer provider is configured."""
        provider = self.tracer_provider or global_tracer_provider()
        if provider is None:
            return None
        cached = self._tracer
        if cached is None or cached[0] is not provider:
            from .. import __version__

            cached = self._tracer = (provider, provider.get_tracer("handoffs", __version__))
        return cached[1]

    def instruments(self) -> Any:
        """The metric instruments for this turn, or None when no meter provider is set."""
        provider = self.meter_provider or global_meter_provider()
        if provider is None:
            return None
        cached = self._instruments
        if cached is None or cached[0] is not provider:
            from .metrics import Instruments

            cached = self._instruments = (provider, Instruments(provider))
        return cached[1]


AUTO = Telemetry()
"""The default of every `Runner`: follow the application's global providers."""


def resolve(option: Telemetry | bool | None) -> Telemetry | None:
    """`Runner(telemetry=...)`: None or True follow the global providers, False is off."""
    if option is None or option is True:
        return AUTO
    if option is False:
        return None
    if not isinstance(option, Telemetry):
        from ..errors import HandoffsError

        raise HandoffsError(f"Runner(telemetry=...) takes a Telemetry, True, False or None, "
                            f"not {option!r}.", code="invalid_argument")
    return option


_UNKNOWN = object()
_FROM_ENV = frozenset(k for k in ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
                      if k in os.environ)
"""Providers named in the environment (read once: an `os.environ` look-up costs a
microsecond, and these are set when a process starts)."""


def global_tracer_provider() -> Any:
    """The application's tracer provider, or None while it is OpenTelemetry's no-op default.

    Nobody can have configured one without importing `opentelemetry.trace`, so while that
    module is not loaded this costs one dictionary look-up. While it is loaded but nothing
    was set, the API's own global (None until `set_tracer_provider`) says so without a
    call; should that private name ever change, the public function answers instead.
    """
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    if getattr(trace, "_TRACER_PROVIDER", _UNKNOWN) is None \
            and "OTEL_PYTHON_TRACER_PROVIDER" not in _FROM_ENV:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        return None
    return provider


def global_meter_provider() -> Any:
    """The application's meter provider, or None while it is OpenTelemetry's default
    (the same shortcuts as `global_tracer_provider`)."""
    internal = sys.modules.get("opentelemetry.metrics._internal")
    if internal is None:
        return None
    if getattr(internal, "_METER_PROVIDER", _UNKNOWN) is None \
            and "OTEL_PYTHON_METER_PROVIDER" not in _FROM_ENV:
        return None
    from opentelemetry import metrics

    provider = metrics.get_meter_provider()
    if isinstance(provider, metrics.NoOpMeterProvider) or \
            type(provider).__name__ == "_ProxyMeterProvider":
        return None
    return provider


def observe(t: ObservedTurn) -> None:
    """Decide, once for this turn, whether it is traced or measured, and if so, attach the
    observer that turns its events into spans and metrics."""
    telemetry = t.runner.telemetry
    if telemetry is None:
        return
    modules = sys.modules  # no provider of ours, and OpenTelemetry never imported: nothing
    if (telemetry.tracer_provider is None and telemetry.meter_provider is None  # to ask
            and "opentelemetry.trace" not in modules
            and "opentelemetry.metrics._internal" not in modules):
        return
    tracer = telemetry.tracer()
    instruments = telemetry.instruments()
    if (tracer is None and instruments is None) or t.obs is not None:
        return  # not traced; or observed already (a decision that continues its turn)
    from .observer import Observer

    Observer(t, telemetry, tracer, instruments).attach()


def count_handoff(runner: ObservedRunner, record: HandoffRecord,
                  state: SessionState | None = None) -> None:
    """Count a handoff made outside a turn (a user's pick) when metrics are on, and make
    it a span in the session's last trace (`state`'s) when traced."""
    telemetry = runner.telemetry
    if telemetry is None:
        return
    instruments = telemetry.instruments()
    if instruments is not None:
        instruments.handoff(runner.team, record.source, record.target, record.reason.value,
                            "accepted" if record.accepted else record.rejection or "refused")
    tracer = telemetry.tracer() if state is not None else None
    if tracer is not None and state is not None:
        from .links import picked

        picked(tracer, state, record)


def captures(runner: ObservedRunner) -> bool:
    """Whether content (a model's handoff reason, a person's reason) may go into logs:
    the same switch as for spans (`Telemetry(capture_content=...)`, else
    `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`)."""
    telemetry = runner.telemetry
    return (telemetry if telemetry is not None else AUTO).capture_content


def flush(runner: ObservedRunner, timeout: float = 5.0) -> None:
    """Export what the runner's tracer and meter providers still hold (blocking, at most
    about `timeout` seconds each). A server calls it when it shuts down: uvicorn ends the
    process with the signal it caught, so the SDK's own flush at exit never runs."""
    telemetry = runner.telemetry
    if telemetry is None:
        return
    for provider in (telemetry.tracer_provider or global_tracer_provider(),
                     telemetry.meter_provider or global_meter_provider()):
        force_flush = getattr(provider, "force_flush", None)
        if force_flush is not None:
            try:
                force_flush(int(timeout * 1000))
            except Exception:
                import logging

                logging.getLogger(__name__).warning("telemetry: flushing failed",
                                                    exc_info=True)
