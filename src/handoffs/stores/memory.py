"""MemoryStore: sessions in this process's memory. For tests, demos and single processes."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..core.events import Event
from ..core.session import Checkpoint, SessionState
from ..errors import HandoffsError
from .base import SessionSummary
from .locks import KeyedLocks


class MemoryStore:
    """Keeps each session as a live object; turns on one session are serialised.

    `load` returns the stored object itself (the runner holds the session's lock while it
    changes it), so a turn costs nothing proportional to the conversation's length.
    Nothing survives the process.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, SessionState] = {}
        self._locks = KeyedLocks()

    def lock(self, session_id: str) -> AbstractAsyncContextManager[None]:
        """Held for a whole turn; turns on one session queue up in arrival order."""
        return self._locks.hold(session_id)

    async def load(self, session_id: str) -> SessionState | None:
        return self._sessions.get(session_id)

    async def commit(
        self, state: SessionState, since: Checkpoint, events: Sequence[Event] = ()
    ) -> None:
        state.version += 1
        state.updated_at = time.time()
        self._sessions[state.id] = state

    async def delete(self, session_id: str) -> bool:
        return self._sessions.pop(session_id, None) is not None

    async def list_sessions(self, limit: int = 50, offset: int = 0) -> list[SessionSummary]:
        ordered = sorted(self._sessions.values(), key=lambda s: s.updated_at, reverse=True)
        return [
            SessionSummary(s.id, s.active_agent, s.turn, s.status, s.created_at,
                           s.updated_at, len(s.messages))
            for s in ordered[offset:offset + limit]
        ]

    async def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session as JSON-ready data (`to_dict()`, plus `events`: none kept here)."""
        state = self._sessions.get(session_id)
        if state is None:
            return None
        d = state.to_dict()
        d["events"] = []
        return d

    async def import_session(
        self, data: Mapping[str, Any] | str, *, replace: bool = False
    ) -> SessionState:
        """Store an export under its id; `session_exists` if taken and not `replace`."""
        d = json.loads(data) if isinstance(data, str) else data
        state = SessionState.from_dict(d)
        state.version = max(state.version, 1)  # as durable stores: stored means >= 1
        async with self.lock(state.id):
            if state.id in self._sessions and not replace:
                raise HandoffsError(f"Session {state.id!r} already exists; pass "
                                    "replace=True to overwrite it.", code="session_exists")
            self._sessions[state.id] = state
        return state.snapshot()

    async def close(self) -> None:
        return None

    def __len__(self) -> int:
        return len(self._sessions)
