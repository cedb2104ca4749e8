"""MemoryStore: sessions in this process's memory. For tests, demos and single processes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from ..core.events import Event
from ..core.session import Checkpoint, SessionState
from .base import SessionSummary


class _SessionLock:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class MemoryStore:
    """Keeps each session as a live object; turns on one session are serialised.

    `load` returns the stored object itself (the runner holds the session's lock while it
    changes it), so a turn costs nothing proportional to the conversation's length.
    Nothing survives the process.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, SessionState] = {}
        self._locks: dict[str, _SessionLock] = {}

    @asynccontextmanager
    async def lock(self, session_id: str) -> AsyncIterator[None]:
        entry = self._locks.get(session_id)
        if entry is None:
            entry = self._locks[session_id] = _SessionLock()
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._locks[session_id]

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

    async def close(self) -> None:
        return None

    def __len__(self) -> int:
        return len(self._sessions)
