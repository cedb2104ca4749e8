"""`create_app`: a team's runner as an ASGI application (FastAPI)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, JSONResponse, Response

from .. import __version__
from ..core.team import Team
from ..runtime.runner import Runner
from ..telemetry.config import flush
from . import errors, masking
from .headers import SecurityHeaders
from .limits import BodyLimit
from .ratelimit import Rate
from .service import Service, Settings
from .tracing import TraceContext
from .views import Answer, team_view

STATIC = Path(__file__).parent / "static"
"""Where the web page lives (`index.html` at `/`, `operator.html` at `/operator`,
`inspect.html` at `/inspect`)."""

meta = APIRouter(tags=["service"])


@meta.get("/healthz")
async def healthz() -> dict[str, Any]:
    """The process is up."""
    return {"ok": True}


@meta.get("/readyz", responses=errors.responses("store_unavailable"))
async def readyz(request: Request) -> JSONResponse:
    """The store answers and can write: `{"ok": true, "store", "kind"}`; else 503 within
    2 s, whatever the store does (`server.readiness`), naming the store and the reason:
    `{"ok": false, "store", "kind", "reason", "error": {"code", "message"}}` (`store_unavailable`
    for a store that cannot be reached or does not answer in time, `store_busy` for one
    locked by another writer, `store_full` while writes fail for lack of space)."""
    svc: Service = request.app.state.service
    verdict = await svc.readiness.check()
    if verdict.ready:
        return JSONResponse({"ok": True, "store": verdict.store, "kind": verdict.kind})
    code = verdict.code or "store_unavailable"
    return Answer({"ok": False, "store": verdict.store, "kind": verdict.kind,
                   "reason": verdict.reason,
                         **errors.body(code, f"{verdict.reason} Try again shortly; the "
                                       "server's log has the details.")}, status_code=503)


@meta.get("/metrics", include_in_schema=False)
async def metrics() -> Response:
    """The process's metrics in the Prometheus text format (`handoffs serve --metrics`,
    or a `MeterProvider` with `handoffs.telemetry.prometheus_reader()`); 404
    `metrics_unavailable` when the Prometheus exporter is not installed."""
    from ..errors import HandoffsError

    try:
        from ..telemetry.prometheus import PROMETHEUS_CONTENT_TYPE, prometheus_text

        return Response(prometheus_text(), media_type=PROMETHEUS_CONTENT_TYPE)
    except HandoffsError as exc:
        return errors.respond("metrics_unavailable", str(exc), 404)


@meta.get("/v1/team")
async def team(request: Request) -> dict[str, Any]:
    """The agents (name, display name, description, icon, colour, user-selectable,
    human) and the routes (source, target, kind), with the Mermaid text."""
    svc: Service = request.app.state.service
    return team_view(svc.team)


@meta.get("/v1/config")
async def config(request: Request) -> dict[str, Any]:
    """What a page needs to know about this server."""
    svc: Service = request.app.state.service
    s = svc.settings
    return {"version": __version__, "operator_routes": s.operator_key is not None,
            "model": s.model_label, "store": type(svc.store).__name__,
            "max_message_chars": s.max_message_chars, "heartbeat": s.heartbeat,
            "entry": svc.team.entry, "inspect": svc.runner.inspector is not None,
            "trace_url": s.trace_url}


class _App(FastAPI):
    """FastAPI, with a secret passed in a request's URL moved to its `Authorization`
    header before FastAPI itself, or anything after it, reads the request: FastAPI's own
    telemetry writes the query into its span (`masking.secret_out_of_url`)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await super().__call__(masking.secret_out_of_url(scope), receive, send)


def _page(name: str) -> Any:
    async def page() -> Response:
        path = STATIC / name
        if not path.is_file():
            return JSONResponse({"name": "handoffs", "docs": "/docs", "api": "/v1/team"})
        return FileResponse(path)
    return page


def create_app(runner: Runner | Team, *, operator_key: str | None = None,
               max_body_bytes: int = 1_048_576, max_message_chars: int = 100_000,
               cors_origins: tuple[str, ...] | list[str] = (), heartbeat: float = 15.0,
               poll_interval: float = 0.05, model_label: str | None = None,
               close_store: bool = False, rate_limit: str | Rate | None = None,
               trace_url: str | None = None, a2a: bool = False,
               agui: bool = False, mcp: bool = False) -> FastAPI:
    """The HTTP API of a team: sessions, messages (JSON and SSE), live events (SSE and
    WebSocket), the team, operator routes and an OpenAI-compatible endpoint.

    `runner` is a `Runner` (or a `Team`, run on the memory store with `HANDOFFS_MODEL`),
    served as it is: its store, telemetry and limits. `operator_key` opens every session
    and the operator routes (None: those are off). `rate_limit` (`"30/min"`, or a
    `Rate`) bounds the new sessions and turns of each client. See `Settings` for the
    rest and docs/serving.md for the API. `close_store` closes the runner's store when
    the app shuts down. `a2a`: also serve the team as an A2A agent (`server.a2a`, the
    `a2a` extra); `agui`: also stream turns as AG-UI events at `POST /v1/agui`
    (`server.agui`, the `agui` extra); `mcp`: also serve the team as an MCP server whose
    `ask_team` tool runs a turn (`server.mcp_served`, the `mcp` extra). See
    docs/protocols.md.
    """
    if isinstance(runner, Team):
        runner = Runner(runner)
    if isinstance(rate_limit, str):
        rate_limit = Rate.parse(rate_limit)
    settings = Settings(operator_key=operator_key or None, max_body_bytes=max_body_bytes,
                        max_message_chars=min(max_message_chars, runner.max_message_chars),
                        cors_origins=tuple(cors_origins), heartbeat=heartbeat,
                        poll_interval=poll_interval, model_label=model_label,
                        rate_limit=rate_limit, trace_url=trace_url)
    masking.install()
    service = Service(runner, settings)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await service.start()
        try:
            yield
        finally:
            await service.stop()
            await runner.aclose()  # streamed turns end, MCP connections close
            await asyncio.to_thread(flush, runner)  # the last turns' spans, before exit
            if close_store:
                await runner.store.close()

    app = _App(title="handoffs", version=__version__, lifespan=lifespan,
               description="A team of agents over HTTP: sessions, live events, "
               "handoffs. See docs/serving.md.")
    app.state.service = service
    errors.install(app)
    from . import (
        openai_compat,
        routes_events,
        routes_inspect,
        routes_operator,
        routes_sessions,
        routes_timetravel,
    )

    # The routes every turn takes first: a request is matched against the routes in
    # this order, and each one passed costs (about 50 us a turn for the ~20 before
    # these). No two routes match the same method and path, so the order decides
    # nothing else (a path whose method differs only counts if no route matches both).
    app.include_router(routes_sessions.router)
    app.include_router(routes_events.router)
    app.include_router(meta)
    app.include_router(routes_operator.router)
    app.include_router(routes_inspect.router)
    app.include_router(routes_timetravel.router)
    app.include_router(openai_compat.router)
    if a2a:
        from . import a2a as a2a_routes

        a2a_routes.install(app, service)
    if agui:
        from . import agui as agui_routes

        app.include_router(agui_routes.router)
    if mcp:
        from . import mcp_served

        mcp_served.install(app, service)
    app.add_api_route("/", _page("index.html"), include_in_schema=False)
    app.add_api_route("/operator", _page("operator.html"), include_in_schema=False)
    app.add_api_route("/inspect", _page("inspect.html"), include_in_schema=False)
    if STATIC.is_dir():
        from fastapi.staticfiles import StaticFiles
        from starlette.middleware.gzip import GZipMiddleware

        # The page's files compressed for clients that accept it (the API is not: its
        # event streams must reach the client as they are written).
        app.mount("/static", GZipMiddleware(StaticFiles(directory=STATIC), minimum_size=512),
                  name="static")
    if settings.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["*"], allow_headers=["*"],
                           expose_headers=["Location"])
    app.add_middleware(BodyLimit, limit=settings.max_body_bytes)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(TraceContext, runner=runner)  # a caller's traceparent, when traced
    return app
