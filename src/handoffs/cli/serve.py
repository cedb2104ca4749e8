"""`handoffs serve`: a team's HTTP API (and its page) on uvicorn.

The app is built in each worker process from the same settings (passed through the
environment as `HANDOFFS_SERVE`, so `--workers N` starts N identical processes sharing
the store); each loads the TEAM itself, so a `Runner` is served as the user built it
(its store, telemetry, limits), with only the flags given explicitly put in
(`cli.runners.adopt`). Secrets are never printed or logged: the operator key travels in
`HANDOFFS_OPERATOR_KEY`, store URLs are shown with their password masked, and
`?access_token=` is masked in every server log line (`server.masking`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from .observability import LOG_ENV, setup_logging, setup_tracing

ENV = "HANDOFFS_SERVE"
KEY_ENV = "HANDOFFS_OPERATOR_KEY"
KEY_FILE_ENV = "HANDOFFS_OPERATOR_KEY_FILE"


def serve(team: str | None, store: str | None, model: str | None, offline: bool,
          host: str, port: int, workers: int, operator_key: str | None,
          cors: list[str], log_level: str | None, metrics: bool = False,
          operator_key_file: str | None = None, rate_limit: str | None = None,
          otlp: str | None = None, inspect: bool = False,
          trace_url: str | None = None, a2a: bool = False, agui: bool = False,
          mcp: bool = False, temporal: str | None = None, task_queue: str = "handoffs") -> int:
    """Start the server; returns when it stops. `log_level` (None: `HANDOFFS_LOG_LEVEL`,
    else info) is uvicorn's and the library's; `otlp`: `--otlp` (see `observability`);
    `inspect`: record each model call for the inspector (`Runner(inspect=True)`);
    `trace_url`: where the inspector links a turn's trace (`{trace_id}` in it); `a2a`,
    `agui`, `mcp`: also serve the team over those protocols (`server.a2a`,
    `server.agui`, `server.mcp_served`);
    `temporal`: the Temporal server whose workflows run the turns (`handoffs worker`
    on `task_queue` runs them)."""
    try:
        import uvicorn
    except ImportError:
        from ..errors import install_hint

        print(f"handoffs serve needs uvicorn and FastAPI; install {install_hint('server')}",
              file=sys.stderr)
        return 2
    from ..errors import HandoffsError

    key = operator_key or _read_key(operator_key_file) or os.environ.get(KEY_ENV) or \
        _read_key(os.environ.get(KEY_FILE_ENV))
    if rate_limit is not None:
        from ..server.ratelimit import Rate

        Rate.parse(rate_limit)  # a bad value fails here, before any worker starts
    level = setup_logging(log_level, "info")
    os.environ[LOG_ENV] = level  # every worker logs at the same level
    settings = {"team": team, "store": store, "model": model, "offline": offline,
                "cors": cors, "metrics": metrics, "rate_limit": rate_limit, "otlp": otlp,
                "inspect": inspect, "trace_url": trace_url, "a2a": a2a, "agui": agui,
                "mcp": mcp,
                "temporal": temporal, "task_queue": task_queue, "gc_freeze": True}
    os.environ[ENV] = json.dumps(settings)
    traced = setup_tracing(otlp)  # here first: a missing extra fails before any worker
    if key:
        os.environ[KEY_ENV] = key
    # Load the team once here, so a bad TEAM fails before any worker starts, and say
    # what is served as it really is.
    _, setup = _build()
    if workers > 1 and type(setup.runner.store).__name__ == "MemoryStore":
        raise HandoffsError("--workers needs a shared store (sqlite:///file.db or "
                            "postgresql://...), not memory://: give --store, or build the "
                            "Runner with store=...", code="invalid_argument")
    shown = "localhost" if host in ("127.0.0.1", "0.0.0.0", "::") else host
    builtin = (team or "handoffs.examples.support:").removeprefix("handoffs.examples.")
    served = team if builtin == team else f"the built-in {builtin.partition(':')[0]} team"
    print(f"handoffs: serving {served} on http://{shown}:{port}/"
          f"  (API docs: http://{shown}:{port}/docs)", flush=True)
    print(f"handoffs: store {setup.store}; operator routes {'on' if key else 'off'}",
          flush=True)
    print(f"handoffs: model: {setup.model}", flush=True)
    if temporal:
        print(f"handoffs: turns run by Temporal workers at {temporal}, task queue "
              f"{task_queue!r}", flush=True)
    if traced is not None:
        print(f"handoffs: tracing to {traced} (OTLP/HTTP)", flush=True)
    if a2a:
        print(f"handoffs: A2A agent card at http://{shown}:{port}/.well-known/agent-card.json",
              flush=True)
    if agui:
        print(f"handoffs: AG-UI at POST http://{shown}:{port}/v1/agui", flush=True)
    if mcp:
        print(f"handoffs: MCP (Streamable HTTP) at http://{shown}:{port}/mcp, tool "
              "ask_team", flush=True)
    uvicorn.run("handoffs.cli.serve:build_app", factory=True, host=host, port=port,
                workers=workers, log_level=level, timeout_graceful_shutdown=5)
    return 0


def build_app() -> Any:
    """The ASGI app of one worker, from `HANDOFFS_SERVE` (uvicorn's factory).

    Under `handoffs serve`, what is built by then (modules, the app, the team) is moved
    out of the garbage collector's reach (`gc.freeze`): it lives as long as the process,
    and a full collection would walk all of it again and again while turns run."""
    app, _ = _build()
    if json.loads(os.environ.get(ENV) or "{}").get("gc_freeze"):
        import gc

        gc.collect()
        gc.freeze()
    return app


def _build() -> tuple[Any, Any]:
    from ..server import create_app
    from .loading import load_target
    from .runners import make_runner

    s = json.loads(os.environ.get(ENV) or "{}")
    setup_logging(None, "info")  # HANDOFFS_LOG_LEVEL, as `serve` set it
    setup_tracing(s.get("otlp"))
    if s.get("metrics"):
        _prometheus_metrics()
    setup = make_runner(load_target(s.get("team")), s.get("model"), s.get("store"),
                        bool(s.get("offline")))
    if s.get("inspect"):
        from dataclasses import replace

        from ..runtime.effects.inspector import inspector

        runner = setup.runner  # a replay's runner inspects too (`Runner.from_config`)
        runner.config = replace(runner.config, inspect=True)
        runner.inspector = inspector(True, runner.telemetry)
    if s.get("temporal"):
        from ..temporal import TemporalExecutor

        TemporalExecutor(s["temporal"], s.get("task_queue") or "handoffs").attach(
            setup.runner)
    app = create_app(setup.runner, operator_key=os.environ.get(KEY_ENV) or None,
                     cors_origins=s.get("cors") or (), model_label=setup.model,
                     rate_limit=s.get("rate_limit"), close_store=True,
                     trace_url=s.get("trace_url"), a2a=bool(s.get("a2a")),
                     agui=bool(s.get("agui")), mcp=bool(s.get("mcp")))
    return app, setup


def _read_key(path: str | None) -> str | None:
    """The operator key kept in a file (its first line), or None without a path."""
    if not path:
        return None
    from ..errors import HandoffsError

    try:
        key = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise HandoffsError(f"Cannot read the operator key file {path!r}: {exc}",
                            code="invalid_argument") from exc
    if not key:
        raise HandoffsError(f"The operator key file {path!r} is empty.",
                            code="invalid_argument")
    return key


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
