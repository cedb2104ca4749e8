"""One change to a stored session between turns, as a turn makes its own: under the
session's lock, load it, change it, and commit what changed (`edit_session`).

What edits a session outside a turn (a fork's link in its original, a retried fork's
token, a protocol's context or client state) goes through here instead of writing the
lock → load → checkpoint → commit sequence again; a caller that must also keep this
process's turns out holds its own guard around it (`server.service.Service.edit`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.session import SessionState
    from .base import SessionStore


async def edit_session(store: SessionStore, session_id: str,
                       change: Callable[[SessionState], bool]) -> SessionState | None:
    """Under the session's lock: load it, let `change` mutate it and say whether it
    changed anything, and commit only then. Returns the session as left (None: there is
    no such session, and `change` was not called)."""
    async with store.lock(session_id):
        state = await store.load(session_id)
        if state is None:
            return None
        since = state.checkpoint()
        if change(state):
            await store.commit(state, since)
        return state
