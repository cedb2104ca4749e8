"""`handoffs serve`: a team's HTTP API (and its page) on uvicorn.

The runner is built in each worker process from the same settings (passed through the
environment as `HANDOFFS_SERVE`, so `--workers N` starts N identical processes sharing
the store). Secrets are never printed or logged: the operator key travels in
`HANDOFFS_OPERATOR_KEY`, and `?access_token=` is masked in the access log.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from typing import Any

ENV = "HANDOFFS_SERVE"
KEY_ENV = "HANDOFFS_OPERATOR_KEY"


def serve(team: str | None, store: str | None, model: str | None, offline: bool,
          host: str, port: int, workers: int, operator_key: str | None,
          cors: list[str], log_level: str, metrics: bool = False, inspect: bool = False,
          trace_url: str | None = None) -> int:
    """Start the server; returns when it stops."""
    try:
        import uvicorn
    except ImportError:
        from ..errors import install_hint

        print(f"handoffs serve needs uvicorn and FastAPI; install {install_hint('server')}",
              file=sys.stderr)
        return 2
    from .runners import store_url

    url = store_url(store)
    if workers > 1 and url.startswith("memory"):
        print("handoffs serve: --workers needs a shared store (sqlite:///file.db or "
              "postgresql://...), not memory://", file=sys.stderr)
        return 2
    settings = {"team": team, "store": url, "model": model, "offline": offline,
                "cors": cors, "metrics": metrics, "inspect": inspect,
                "trace_url": trace_url}
    os.environ[ENV] = json.dumps(settings)
    key = operator_key or os.environ.get(KEY_ENV)
    if key:
        os.environ[KEY_ENV] = key
    build_app()  # load the team once here, so a bad TEAM fails before any worker starts
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::") else host
    print(f"handoffs: serving {team or 'the built-in support team'} on http://{shown}:{port}/"
          f"  (API docs: http://{shown}:{port}/docs)", flush=True)
    print(f"handoffs: store {url}; operator routes {'on' if key else 'off'}", flush=True)
    logging.getLogger("uvicorn.access").addFilter(_MaskTokens())
    uvicorn.run("handoffs.cli.serve:build_app", factory=True, host=host, port=port,
                workers=workers, log_level=log_level, timeout_graceful_shutdown=5)
    return 0


def build_app() -> Any:
    """The ASGI app of one worker, from `HANDOFFS_SERVE` (uvicorn's factory)."""
    from ..server import create_app
    from .loading import load_target
    from .runners import make_runner

    s = json.loads(os.environ.get(ENV) or "{}")
    if s.get("metrics"):
        _prometheus_metrics()
    setup = make_runner(load_target(s.get("team")), s.get("model"), s.get("store"),
                        bool(s.get("offline")))
    logging.getLogger("uvicorn.access").addFilter(_MaskTokens())
    if s.get("inspect"):
        from ..runtime.inspector import inspector

        setup.runner.inspector = inspector(True, setup.runner.telemetry)
    return create_app(setup.runner, operator_key=os.environ.get(KEY_ENV) or None,
                      cors_origins=s.get("cors") or (), model_label=setup.model,
                      close_store=True, trace_url=s.get("trace_url"))


def _prometheus_metrics() -> None:
    """Count this process's handoffs, turns and model calls for `GET /metrics`."""
    try:
        from opentelemetry import metrics
        from opentelemetry.sdk.metrics import MeterProvider
    except ImportError as exc:
        from ..errors import missing_extra

        raise missing_extra("--metrics needs OpenTelemetry's SDK and Prometheus exporter",
                            "prometheus") from exc
    from ..telemetry import prometheus_reader

    metrics.set_meter_provider(MeterProvider(metric_readers=[prometheus_reader()]))


class _MaskTokens(logging.Filter):
    """Masks `access_token=...` in access-log lines."""

    _pattern = re.compile(r"(access_token=)[^&\s\"]+")

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args and isinstance(record.args, tuple):
            record.args = tuple(self._pattern.sub(r"\1***", a) if isinstance(a, str) else a
                                for a in record.args)
        return True
