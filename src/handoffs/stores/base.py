"""The `SessionStore` protocol: small and async, so durable stores plug in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ..core.events import Event
from ..core.session import Checkpoint, SessionState

if TYPE_CHECKING:
    from .stats import HandoffStats


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
        """The row as JSON-ready data (what `handoffs sessions list --json` prints)."""
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

    Outside a turn, every store reports a session whose turn died mid-way (status
    `running`, lock free) with status `interrupted`, in `load`, `export_session` and
    `list_sessions` alike. A commit, once started, completes before `lock` is released,
    even if the turn is cancelled; what a turn changed but did not commit is never
    served by a later `load`.

    Every method taking a session id refuses one that is not a non-empty str of at most
    256 characters without NUL (`invalid_argument`, see `stores.checks`). Text a store
    cannot encode is made valid at commit (see `stores.text`). Failures of the database
    itself are `StoreError`s (`store_unavailable`, `store_corrupt`, `store_read_only`,
    `store_busy`, `store_error`); nothing stored changes when one is raised.
    """

    def lock(self, session_id: str) -> AbstractAsyncContextManager[None]:
        """Hold the session for one turn: `async with store.lock(id):`. Turns on one
        session never overlap (across processes and machines for a durable store); other
        sessions never wait. The lock vanishes with the process that held it, and
        `lock_timeout` (where a store has one) bounds the wait (`session_busy`)."""
        ...

    async def load(self, session_id: str) -> SessionState | None:
        """The session as last committed, or None if there is none. A session whose turn
        died mid-way is reported with status `interrupted`. The state returned is the
        caller's to change until its next `commit` (a store may hand back the same
        object it keeps, so change it only while holding the lock)."""
        ...

    async def commit(
        self, state: SessionState, since: Checkpoint, events: Sequence[Event] = ()
    ) -> None:
        """Write what changed in `state` since the checkpoint `since`
        (`state.checkpoint()` taken after `load`): new messages, new handoff records, the
        turn's `events`, and the session's header (active agent, status, shared memory,
        view, pending approval). Creates the session when it is new. Increments
        `state.version`; a durable store refuses a commit whose version is not the stored
        one (`session_conflict`) and writes nothing. All or nothing: on any error nothing
        stored changes."""
        ...

    async def delete(self, session_id: str) -> bool:
        """Remove the session with its messages, records and events; True if it existed."""
        ...

    async def list_sessions(
        self, limit: int = 50, offset: int = 0, *, status: str | None = None
    ) -> list[SessionSummary]:
        """Sessions, most recently updated first, `offset` of them skipped, at most
        `limit`. With `status` (`idle`, `running`, `waiting_for_human`, `interrupted`),
        only the sessions in it, as `load` would report them."""
        ...

    async def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session as JSON-ready data: `SessionState.to_dict()` plus `events` (the
        stored events, oldest first; empty for stores that keep none). None if absent."""
        ...

    async def import_session(
        self, data: Mapping[str, Any] | str, *, replace: bool = False
    ) -> SessionState:
        """Store an export (dict or JSON text) under its id; `session_exists` if taken."""
        ...

    async def handoff_stats(
        self, since: float | None = None, until: float | None = None
    ) -> HandoffStats:
        """Per route (source, target, kind) over the records of `[since, until)` (Unix
        times; None: unbounded): requests, accepted, refusals by code, the share of
        accepted handoffs whose turn then failed or went to a human, and the median time
        the target took. Durable stores compute it in SQL (see `stores.stats`)."""
        ...

    async def close(self) -> None:
        """Release connections, threads and files; calling it again does nothing. A
        closed durable store refuses further calls (`store_closed`)."""
        ...
