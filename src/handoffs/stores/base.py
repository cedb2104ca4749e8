"""The `SessionStore` protocol: small and async, so durable stores plug in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..core.events import Event
from ..core.session import Checkpoint, SessionState
from ..errors import HandoffsError


@dataclass(slots=True, frozen=True)
class SessionSummary:
    """One line of a session listing."""

    id: str
    active_agent: str | None
    turn: int
    status: str
    created_at: float
    updated_at: float
    messages: int

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "active_agent": self.active_agent, "turn": self.turn,
                "status": self.status, "created_at": self.created_at,
                "updated_at": self.updated_at, "messages": self.messages}


@runtime_checkable
class SessionStore(Protocol):
    """Keeps sessions between turns and serialises turns on one session.

    The runner holds `lock(session_id)` for a whole turn, `load`s the state, and calls
    `commit` twice: once right after appending the user's message (so no input is ever
    lost) and once at the end of the turn. `commit` writes only what changed since the
    checkpoint: new messages, new records, new events, and the session's header. It
    increments `state.version`; a durable store refuses a commit whose `state.version`
    is not the stored one (`session_conflict`).

    Outside a turn, durable stores report a session whose turn died mid-way (status
    `running`, lock free) with status `interrupted`.
    """

    def lock(self, session_id: str) -> AbstractAsyncContextManager[None]: ...

    async def load(self, session_id: str) -> SessionState | None: ...

    async def commit(
        self, state: SessionState, since: Checkpoint, events: Sequence[Event] = ()
    ) -> None: ...

    async def delete(self, session_id: str) -> bool: ...

    async def list_sessions(
        self, limit: int = 50, offset: int = 0
    ) -> list[SessionSummary]: ...

    async def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session as JSON-ready data: `SessionState.to_dict()` plus `events` (the
        stored events, oldest first; empty for stores that keep none). None if absent."""
        ...

    async def import_session(
        self, data: Mapping[str, Any] | str, *, replace: bool = False
    ) -> SessionState:
        """Store an export (dict or JSON text) under its id; `session_exists` if taken."""
        ...

    async def close(self) -> None: ...


def open_store(spec: SessionStore | str | None) -> SessionStore:
    """A store from an object or a URL: `memory://`, `sqlite:///path.db`, `postgresql://...`.

    `sqlite:///rel/path.db` is relative to the working directory, `sqlite:////abs/path.db`
    absolute. A PostgreSQL URL may carry `?schema=name` to keep the tables in that schema.
    """
    from .memory import MemoryStore

    if spec is None:
        return MemoryStore()
    if not isinstance(spec, str):
        return spec
    if spec in ("memory", "memory://", ":memory:"):
        return MemoryStore()
    if spec.startswith("sqlite:"):
        from .sqlite import SQLiteStore

        path = spec.split(":", 1)[1]
        path = path[3:] if path.startswith("///") else path.removeprefix("//")
        return SQLiteStore(path or ":memory:")
    if spec.startswith(("postgres://", "postgresql://")):
        from .postgres import PostgresStore

        return PostgresStore(spec)
    raise HandoffsError(
        f"Unknown store URL {spec!r}; use memory://, sqlite:///path.db or postgresql://...",
        code="invalid_store",
    )
