"""`--otlp` and `--log-level`: what `serve`, `run`, `chat` and `demo` trace and log.

- `--otlp [ENDPOINT]` sends every turn's spans over OTLP/HTTP (`handoffs.telemetry.
  export_otlp`, needs `handoffs[otlp]`): to ENDPOINT, else where the standard
  `OTEL_EXPORTER_OTLP_*` variables say, else `http://localhost:4318`. When
  `OTEL_EXPORTER_OTLP_ENDPOINT` (or `..._TRACES_ENDPOINT`) is set, tracing is on without
  the flag, as for any OpenTelemetry-instrumented program (`OTEL_SDK_DISABLED=true`
  turns it off). `OTEL_SERVICE_NAME` names the service (default `handoffs`).
- `--log-level LEVEL` (else `HANDOFFS_LOG_LEVEL`, else `info` for `serve` and `error`
  for the others, which print a failed turn themselves) is the level of the `handoffs`
  loggers, printed on standard error in a readable form: time, level, logger, message,
  then the session, turn and agent, and the trace and span ids while a span is current.
  For `serve` it is uvicorn's level too.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from typing import Any

LOG_ENV = "HANDOFFS_LOG_LEVEL"
ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
LEVELS = ("debug", "info", "warning", "error", "critical")


def add_options(p: argparse.ArgumentParser, default_level: str) -> None:
    p.add_argument("--otlp", nargs="?", const="", default=None, metavar="ENDPOINT",
                   help="send traces over OTLP/HTTP to ENDPOINT (a URL; default: the "
                   "OTEL_EXPORTER_OTLP_* variables, else http://localhost:4318); on by "
                   "itself when OTEL_EXPORTER_OTLP_ENDPOINT is set (needs handoffs[otlp])")
    p.add_argument("--log-level", default=None, type=str.lower, choices=LEVELS,
                   help=f"the library's logs on stderr (default: {LOG_ENV}, else "
                   f"{default_level})")


def log_level(option: str | None, default: str) -> str:
    """The level name in force: the option, else `HANDOFFS_LOG_LEVEL`, else `default`."""
    name = (option or os.environ.get(LOG_ENV) or default).strip().lower()
    if name not in LEVELS:
        from ..errors import HandoffsError

        raise HandoffsError(f"{LOG_ENV}={name!r} is not a log level; use one of "
                            f"{', '.join(LEVELS)}.", code="invalid_argument")
    return name


def setup_logging(option: str | None, default: str) -> str:
    """Print the `handoffs` loggers' records at the level in force on standard error (once
    per process); returns that level's name."""
    name = log_level(option, default)
    logger = logging.getLogger("handoffs")
    logger.setLevel(name.upper())
    if not any(isinstance(h, _Handler) for h in logger.handlers):
        handler = _Handler(sys.stderr)
        handler.setFormatter(Readable())
        logger.addHandler(handler)
        logger.propagate = False  # the command owns the process: printed once, here
    return name


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """The command line's handler (so a second set-up in one process adds none)."""


class Readable(logging.Formatter):
    """`12:00:01.234 WARNING handoffs.runtime.turn: turn 1 of s1 failed (model_error): ...
    [session=s1 turn=1 agent=billing trace_id=... span_id=...]`, then the traceback."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return time.strftime("%H:%M:%S", time.localtime(record.created)) + \
            f".{int(record.msecs):03d}"

    def formatMessage(self, record: logging.LogRecord) -> str:
        line = super().formatMessage(record)
        about = [f"{k}={v}" for k, v in (("session", getattr(record, "session_id", None)),
                                         ("turn", getattr(record, "turn", None)),
                                         ("agent", getattr(record, "agent", None)))
                 if v is not None]
        about.extend(_trace_ids())
        return f"{line} [{' '.join(about)}]" if about else line


def _trace_ids() -> list[str]:
    """`trace_id=... span_id=...` of the current span, if OpenTelemetry is in use."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return []
    c = trace.get_current_span().get_span_context()
    if not c.is_valid:
        return []
    return [f"trace_id={c.trace_id:032x}", f"span_id={c.span_id:016x}"]


_TRACING: list[str] = []
"""Where this process sends its spans, once set up (`serve` sets up twice in one)."""


def setup_tracing(option: str | None) -> str | None:
    """Export every turn's spans over OTLP/HTTP when `--otlp` was given or the standard
    variables name an endpoint; returns where they go (None: not tracing)."""
    if _TRACING:
        return _TRACING[0]
    env = next((os.environ[k] for k in ENDPOINT_ENVS if os.environ.get(k)), None)
    if option is None and env is None:
        return None
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    from ..errors import HandoffsError

    if option and not option.startswith(("http://", "https://")):
        raise HandoffsError(f"--otlp takes a URL such as http://localhost:4318, not "
                            f"{option!r} (write --otlp=URL, or put the flag after the "
                            "team and message).", code="invalid_argument")
    from ..telemetry import export_otlp

    try:
        export_otlp(option or None, metrics=False,
                    service_name=os.environ.get("OTEL_SERVICE_NAME") or "handoffs")
    except HandoffsError as exc:
        if option is not None:
            raise
        print(f"handoffs: not tracing although {ENDPOINT_ENVS[1]} is set: {exc}",
              file=sys.stderr)
        return None
    _TRACING.append(option or env or "http://localhost:4318")
    return _TRACING[0]


def setup(args: Any, default_level: str) -> None:
    """Both, from a command's parsed arguments; says where traces go on stderr."""
    setup_logging(args.log_level, default_level)
    where = setup_tracing(args.otlp)
    if where is not None:
        print(f"handoffs: tracing to {where} (OTLP/HTTP)", file=sys.stderr, flush=True)
