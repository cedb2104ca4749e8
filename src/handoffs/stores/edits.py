"""One change to a stored session, as a turn makes its own: under the session's lock,
load it, change it, and commit what changed (`session_turn`).

Whatever changes a session outside a user's turn goes through here instead of writing
the lock → load → checkpoint → commit sequence again: a plan, a transfer, a fork's
answer or its link in its original, a rewind, a retried fork's token, a protocol's
context or client state, a new session made by a route or a protocol
(`create_session`), a session deleted once its turn ends (`delete_session`). A caller
that must also keep this process's turns out holds its own guard around it
(`server.service.Service.edit`). A user's turn (`runtime.driver.turn`) holds the lock
itself, across two commits and its model calls.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, TypeVar, overload

from ..core.session import Checkpoint

if TYPE_CHECKING:
    from ..core.events import Event
    from ..core.session import SessionState
    from .base import SessionStore

T = TypeVar("T")


class Held:
    """A session `session_turn` loaded under its lock, for its change to work on."""

    __slots__ = ("since", "state", "store")

    def __init__(self, store: SessionStore, state: SessionState, since: Checkpoint) -> None:
        self.store = store
        self.state = state
        """The session as loaded (or as `missing` made it); the change's to mutate."""
        self.since = since
        """How much of it is stored: `commit` writes what changed past it. A change may
        take it again (past a turn number it raised: that commit keeps no turn mark)."""

    async def commit(self, events: Sequence[Event] = ()) -> None:
        """Store what changed since `since`, with `events`, and go on from there."""
        await self.store.commit(self.state, self.since, events)
        self.since = self.state.checkpoint()


@overload
async def session_turn(store: SessionStore, session_id: str,
                       change: Callable[[Held], Awaitable[T]],
                       missing: Callable[[str], SessionState]) -> T: ...
@overload
async def session_turn(store: SessionStore, session_id: str,
                       change: Callable[[Held], Awaitable[T]],
                       missing: None = None) -> T | None: ...
async def session_turn(store: SessionStore, session_id: str,
                       change: Callable[[Held], Awaitable[T]],
                       missing: Callable[[str], SessionState] | None = None) -> T | None:
    """Under the session's lock: load it, await `change` on it, and return what that
    returns; the change commits what it did with `held.commit` (or nothing: it found
    nothing to do, or refused by raising). A session not stored yet becomes
    `missing(session_id)` (a new one, all of it unstored; or `missing` raises the
    caller's refusal); with no `missing`, None is returned and `change` is not called.
    Another caller of the same session waits for the lock, and then loads what this one
    committed."""
    async with store.lock(session_id):
        state = await store.load(session_id)
        if state is not None:
            since = state.checkpoint()
        elif missing is None:
            return None
        else:
            state = missing(session_id)
            since = Checkpoint(0, 0, state.version, state.turn)
        return await change(Held(store, state, since))


async def edit_session(store: SessionStore, session_id: str,
                       change: Callable[[SessionState], bool]) -> SessionState | None:
    """Under the session's lock: load it, let `change` mutate it and say whether it
    changed anything, and commit only then. Returns the session as left (None: there is
    no such session, and `change` was not called)."""
    async def edit(held: Held) -> SessionState:
        if change(held.state):
            await held.commit()
        return held.state

    return await session_turn(store, session_id, edit)


async def create_session(store: SessionStore, state: SessionState) -> bool:
    """Store `state` as a new session, all of it, under its id's lock; False (nothing
    written) when a session of that id exists already."""
    async def made(held: Held) -> bool:
        if held.state is not state:
            return False
        await held.commit()
        return True

    return await session_turn(store, state.id, made, lambda _: state)


async def delete_session(store: SessionStore, session_id: str) -> bool:
    """Delete the session under its lock, so a turn running on it ends (and is stored)
    first; True if it existed."""
    async with store.lock(session_id):
        return await store.delete(session_id)
