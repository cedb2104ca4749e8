"""What every route shares: the runner, the event hub, the turns, the settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import HTTPConnection

from ..core.handoff import HandoffRecord
from ..core.session import SessionState
from ..errors import HandoffsError
from ..runtime.inspector import INSPECT_EVENTS
from ..runtime.runner import Runner
from ..stores.checks import session_id as _check_id
from . import auth
from .errors import ApiError
from .pubsub import Hub
from .turns import Turns
from .wakeup import Wakeup


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
    trace_url: str | None = None
    """Where a turn's trace is shown, with `{trace_id}` in it (the inspector links each
    traced turn there); None: the trace id is shown without a link."""


class Service:
    """The live parts of one server process."""

    def __init__(self, runner: Runner, settings: Settings) -> None:
        self.runner = runner
        self.team = runner.team
        self.store: Any = runner.store
        if not all(hasattr(self.store, m) for m in ("event_count", "events_after")):
            raise HandoffsError(
                f"{type(self.store).__name__} keeps no event log (event_count, "
                "events_after), which the server replays to clients; use MemoryStore, "
                "SQLiteStore or PostgresStore.", code="invalid_store")
        self.settings = settings
        self.hub = Hub(self.store)
        self.turns = Turns(runner, self.hub)
        self.wakeup = Wakeup(self.hub, settings.poll_interval)

    async def start(self) -> None:
        await self.wakeup.start()

    async def stop(self) -> None:
        await self.turns.close()
        await self.wakeup.stop()
        await self.hub.close()

    def operator(self, conn: HTTPConnection) -> bool:
        return auth.is_operator(auth.presented(conn), self.settings.operator_key)

    def hidden_events(self, conn: HTTPConnection) -> frozenset[str]:
        """The event types this client may not see: what each model was sent and
        answered (`Runner(inspect=True)`) is for the operator key only."""
        return frozenset() if self.operator(conn) else INSPECT_EVENTS

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

    async def pick(self, session_id: str, agent: str) -> HandoffRecord:
        """The user picks `agent`: stored with its events as this process's one
        operation on the session (no turn numbers events meanwhile), then published,
        refused or not."""
        try:
            async with self.turns.exclusive(session_id):
                return await self.runner.select_agent(session_id, agent)
        finally:
            self.hub.wake(session_id)

    def check_text(self, text: str) -> None:
        limit = self.settings.max_message_chars
        if len(text) > limit:
            raise ApiError("message_too_large",
                           f"The message has {len(text):,} characters; this server takes "
                           f"at most {limit:,}.")
