"""A stored session held under its lock: loaded, changed, and what changed committed
(`session_turn`), once or, for a turn, twice.

Whatever changes a stored session goes through here instead of writing the lock → load
→ checkpoint → commit sequence again: a user's turn and the turn a person's decision
continues (`runtime.driver.turn`, `runtime.driver.approval`: the context-manager form,
the lock held across two commits and the turn's model calls), a plan, a transfer, a
fork's answer or its link in its original, a rewind, a retried fork's token, a
protocol's context or client state, a new session made by a route or a protocol
(`create_session`), a session deleted once its turn ends (`delete_session`). A caller
that must also keep this process's turns out holds its own guard around it
(`server.service.Service.edit`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, TypeVar, overload

from ..core.session import Checkpoint

if TYPE_CHECKING:
    from types import TracebackType

    from ..core.events import Event
    from ..core.session import SessionState
    from .base import SessionStore

T = TypeVar("T")


class Held:
    """A session held under its lock (`session_turn`): loaded on entry, committed with
    `commit` as often as its holder needs (`commit_last` when nothing follows), the lock
    let go on exit. Letting go is the store's lock's, here only: a holder that raises
    or is cancelled lets go (the memory store undoes what it did not commit), and on
    PostgreSQL a lock lost meanwhile ends the hold with `session_lock_lost`.

    Only `session_turn` makes one, and sets what it holds (no `__init__`: a user's turn
    holds one, and makes no call for it beyond the calls it makes today)."""

    __slots__ = ("_lock", "missing", "session_id", "since", "state", "store")

    store: SessionStore
    session_id: str
    missing: Callable[[str], SessionState]
    """What a session not stored yet becomes: a new one (all of it unstored), or the
    caller's refusal, raised."""
    state: SessionState
    """The session as loaded (or as `missing` made it); the holder's to mutate."""
    since: Checkpoint
    """How much of it is stored: `commit` writes what changed past it. A holder may take
    it again (past a turn number it raised: that commit keeps no turn mark)."""

    _lock: AbstractAsyncContextManager[None]

    async def __aenter__(self) -> Held:
        store = self.store
        sid = self.session_id
        lock = self._lock = store.lock(sid)
        await lock.__aenter__()
        try:
            state = await store.load(sid)
            if state is not None:  # all of it is stored (`state.checkpoint()`, inline)
                self.since = Checkpoint(len(state.messages), len(state.handoffs),
                                        state.version, state.turn)
            else:
                state = self.missing(sid)
                self.since = Checkpoint(0, 0, state.version, state.turn)
        except BaseException as exc:  # refused or failed: let go as a holder that raised
            await lock.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        self.state = state
        return self

    def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                  tb: TracebackType | None) -> Awaitable[bool | None]:
        # The lock's own awaitable: letting go adds no coroutine of the hold's.
        return self._lock.__aexit__(kind, exc, tb)

    async def commit(self, events: Sequence[Event] = ()) -> None:
        """Store what changed since `since`, with `events`, and go on from there."""
        state = self.state
        await self.store.commit(state, self.since, events)
        self.since = state.checkpoint()

    def commit_last(self, events: Sequence[Event] = ()) -> Awaitable[None]:
        """`commit`, when the hold commits nothing after it (a turn's end): no checkpoint
        is taken, and the store's own awaitable is returned (no coroutine of the hold's)."""
        return self.store.commit(self.state, self.since, events)


class _Unstored(Exception):
    """The session is not stored and its caller makes none (`session_turn` returns None)."""


def _unstored(session_id: str) -> SessionState:
    raise _Unstored(session_id)


@overload
def session_turn(store: SessionStore, session_id: str, *,
                 missing: Callable[[str], SessionState]) -> Held: ...
@overload
def session_turn(store: SessionStore, session_id: str,
                 change: Callable[[Held], Awaitable[T]],
                 missing: Callable[[str], SessionState]) -> Awaitable[T]: ...
@overload
def session_turn(store: SessionStore, session_id: str,
                 change: Callable[[Held], Awaitable[T]],
                 missing: None = None) -> Awaitable[T | None]: ...
def session_turn(store: SessionStore, session_id: str,
                 change: Callable[[Held], Awaitable[T]] | None = None,
                 missing: Callable[[str], SessionState] | None = None
                 ) -> Held | Awaitable[T | None]:
    """The session held under its lock, in one of two forms.

    `async with session_turn(store, id, missing=make) as held:` holds it for the block:
    `held.state` is the session loaded (or `make(id)`: a new one, or the caller's
    refusal, raised), `held.commit(events)` stores what changed, as often as the holder
    needs, and `held.commit_last(events)` when nothing follows (a user's turn: one when
    it starts, the last when it ends).

    `await session_turn(store, id, change, missing)` awaits `change(held)` in such a
    block and returns what it returns; the change commits what it did with
    `held.commit` (or nothing: it found nothing to do, or refused by raising). With no
    `missing`, a session not stored yet is None, and `change` is not called.

    Another holder of the same session waits for the lock, and then loads what this one
    committed."""
    held = Held()
    held.store = store
    held.session_id = session_id
    if change is None:
        assert missing is not None
        held.missing = missing
        return held
    held.missing = missing or _unstored
    return _change(held, change)


async def _change(held: Held, change: Callable[[Held], Awaitable[T]]) -> T | None:
    try:
        async with held:
            return await change(held)
    except _Unstored:
        return None


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
