"""What every route shares: the runner, the event hub, the turns, the settings."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any

from starlette.requests import HTTPConnection

from ..core.handoff import HandoffRecord
from ..core.idempotency import IdempotencyKey
from ..core.session import SessionState
from ..errors import HandoffsError
from ..runtime.runner import Runner
from ..stores.checks import session_id as _check_id
from ..stores.edits import delete_session, edit_session
from . import auth, customer
from .errors import ApiError
from .pubsub import Hub
from .ratelimit import Rate, RateLimiter
from .readiness import Readiness
from .turns import TurnRun, Turns
from .wakeup import Wakeup

log = logging.getLogger("handoffs.server")


def new_session_id(prefix: str = "s_") -> str:
    """A session id no one can guess or count: 128 random bits."""
    return prefix + secrets.token_urlsafe(16)


@dataclass(slots=True, frozen=True)
class Settings:
    """How the server behaves; `create_app`'s keyword arguments."""

    operator_key: str | None = None
    """The secret that opens every session and the operator routes; None turns those
    routes off (403) and forbids client-chosen session ids."""
    max_body_bytes: int = 1_048_576
    """Requests with a larger body are refused with 413 `body_too_large`."""
    max_message_chars: int = 100_000
    """A user's or operator's message longer than this is refused with 413
    `message_too_large` (the runner's own limit applies too)."""
    cors_origins: tuple[str, ...] = ()
    """Origins allowed to call the API from a browser; none by default (CORS off)."""
    heartbeat: float = 15.0
    """Seconds between SSE comments and WebSocket pings on an idle stream."""
    poll_interval: float = 0.05
    """Seconds between polls of a SQLite store for other processes' events."""
    model_label: str | None = None
    """What `GET /v1/config` says about the model (e.g. `offline rules`)."""
    rate_limit: Rate | None = None
    """Per client address: at most `count` new sessions and turns per `per` seconds
    (429 `too_many_requests` beyond, with `Retry-After`); None: no limit. The operator
    key is never limited."""
    trace_url: str | None = None
    """Where a turn's trace is shown, with `{trace_id}` in it (the inspector links each
    traced turn there); None: the trace id is shown without a link."""


class Service:
    """The live parts of one server process."""

    def __init__(self, runner: Runner, settings: Settings) -> None:
        self.runner = runner
        self.team = runner.team
        self.store: Any = runner.store
        if runner.store_features.events is None:
            raise HandoffsError(
                f"{type(self.store).__name__} keeps no event log (event_count, "
                "events_after), which the server replays to clients; use MemoryStore, "
                "SQLiteStore or PostgresStore.", code="invalid_store")
        self.settings = settings
        self.hub = Hub(self.store)
        self.readiness = Readiness(self.store)
        """`/readyz`'s probe of the store (one at a time, answered within 2 s)."""
        self.turns = Turns(runner, self.hub)
        self.wakeup = Wakeup(self.hub, settings.poll_interval)
        self.limiter = RateLimiter(settings.rate_limit) if settings.rate_limit else None
        self._cleanups: set[asyncio.Task[None]] = set()
        self.on_close: list[Callable[[], Awaitable[None]]] = []
        """Run first when the server stops (the protocols' followers of sessions)."""
        self.lifespans: list[Callable[[], AbstractAsyncContextManager[Any]]] = []
        """Entered when the server starts, left when it stops (the MCP face's session
        manager)."""
        self._running = contextlib.AsyncExitStack()

    async def start(self) -> None:
        await self.wakeup.start()
        for lifespan in self.lifespans:
            await self._running.enter_async_context(lifespan())

    async def stop(self) -> None:
        for close in self.on_close:
            await close()
        await self._running.aclose()
        await self.turns.close()
        if self._cleanups:
            await asyncio.wait(list(self._cleanups), timeout=5)
        await self.wakeup.stop()
        await self.hub.close()

    def check_rate(self, conn: HTTPConnection) -> None:
        """Count a new session or turn against the client's rate limit (429 beyond it)."""
        if self.limiter is None or self.operator(conn):
            return
        client = conn.client.host if conn.client is not None else "unknown"
        wait = self.limiter.take(client)
        if wait > 0:
            rate = self.limiter.rate
            raise ApiError("too_many_requests",
                           f"Too many new sessions and turns from this client (at most "
                           f"{rate.count} per {rate.per:g} s); retry in {wait:.1f} s.",
                           headers={"Retry-After": str(max(1, round(wait + 0.5)))})

    def discard_after(self, session_id: str, run: TurnRun, keep: Any = None) -> None:
        """Delete a throw-away session once its turn has ended, whatever became of the
        request that started it (a client that disconnects included); `keep(result)`
        true keeps it (a turn that waits for a person)."""
        async def cleanup() -> None:
            with contextlib.suppress(Exception):
                await run.finished()
            if keep is not None and run.result is not None and keep(run.result):
                return
            try:
                await delete_session(self.store, session_id)
            except Exception:
                log.warning("deleting the throw-away session %r failed", session_id,
                            exc_info=True)

        task = asyncio.get_running_loop().create_task(cleanup())
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)

    def operator(self, conn: HTTPConnection) -> bool:
        return auth.is_operator(auth.presented(conn), self.settings.operator_key)

    def event_view(self, conn: HTTPConnection) -> customer.EventView | None:
        """What this client's stream sends of each event: None (every event as it is
        stored) for the operator key; for a customer, `customer.delivered`: what each
        model was sent and answered (`Runner(inspect=True)`) left out, a failure's
        internal text replaced by the customer's sentence; a `context_changed` event cut to
        the typed context's public fields (`customer.with_context`)."""
        if self.operator(conn):
            return None
        if self.team.context_type is None:
            return customer.delivered
        return customer.with_context(customer.delivered, self.team)

    def require_operator(self, conn: HTTPConnection) -> None:
        auth.require_operator(conn, self.settings.operator_key)

    async def session(self, conn: HTTPConnection, session_id: str) -> SessionState:
        """The session the request names, if its token (or the operator key) opens it."""
        if auth.presented(conn) is None:
            auth.check_session(conn, None, session_id, self.settings.operator_key)
        try:
            _check_id(session_id)
        except Exception as exc:
            raise ApiError("session_not_found", f"There is no session {session_id!r}.") \
                from exc
        state = await self.store.load(session_id)
        return auth.check_session(conn, state, session_id, self.settings.operator_key)

    async def pick(self, session_id: str, agent: str,
                   key: IdempotencyKey | None = None) -> HandoffRecord:
        """The user picks `agent`: stored with its events as this process's one
        operation on the session (no turn numbers events meanwhile), then published,
        refused or not (`key`: its idempotency key)."""
        try:
            async with self.turns.exclusive(session_id):
                return await self.runner.select_agent(session_id, agent,
                                                      idempotency_key=key)
        finally:
            self.hub.wake(session_id)

    async def edit(self, session_id: str, change: Callable[[SessionState], bool]) -> None:
        """Change a stored session between turns: no turn of this process runs and no
        other process holds its lock meanwhile; `change` mutates the loaded state and
        says whether it changed anything (only then is it committed). Nothing happens for
        a session that does not exist."""
        async with self.turns.exclusive(session_id):
            await edit_session(self.store, session_id, change)

    def check_text(self, text: str) -> None:
        limit = self.settings.max_message_chars
        if len(text) > limit:
            raise ApiError("message_too_large",
                           f"The message has {len(text):,} characters; this server takes "
                           f"at most {limit:,}.")
