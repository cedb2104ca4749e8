"""The runner's methods that go back in a session: `fork`, `fork_with_answer`, `rewind`,
`undo_rewind` (`runtime.timetravel` and `runtime.answer_fork` do the work;
`Runner.replay` stands beside them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from ..core.idempotency import IdempotencyKey
    from ..core.session import SessionState
    from ..stores.base import SessionStore
    from .state import Turn


class GoingBack:
    """`Runner`'s going-back methods, over its store and the turns it is running."""

    store: SessionStore
    running_turns: dict[str, Turn]

    async def fork(self, session_id: str, turn: int, new_id: str | None = None, *,
                   idempotency_key: str | IdempotencyKey | None = None) -> SessionState:
        """A new session holding the conversation as it stood before `turn` (1-based).

        Messages, handoff records, shared memory, the active agent and its view, the
        events: exactly what the original loaded before that turn, with new record ids.
        The original is unchanged but for `metadata["forks"]`; the fork has
        `metadata["forked_from"]`. `turn` may be one past the last turn (a copy of all
        of it). `new_id` defaults to `<id>-fork-<random>`; `session_exists` if taken.
        Refused with `turn_not_recorded` for turns stored before handoffs kept turn
        marks. Returns a snapshot of the fork (`runtime.timetravel`). `idempotency_key`:
        a retry with the same key returns the fork the first call made (its id is made
        of the key unless `new_id` names one) and makes no other."""
        from ..core.idempotency import as_key
        from .timetravel import fork

        return await fork(self.store, session_id, turn, new_id,
                          key=as_key(idempotency_key))

    async def fork_with_answer(self, session_id: str, turn: int, call: int, answer: str,
                               new_id: str | None = None, *,
                               idempotency_key: str | IdempotencyKey | None = None
                               ) -> SessionState:
        """A new session holding the conversation as it stood at model call `call` of
        `turn` (recorded by `Runner(inspect=True)`), continued with `answer` as that
        call's answer: the agent that was called says it, and the turn ends there.

        What the inspector's "fork from here with this answer" does, after a call was
        made again with edits (`runtime.rerun`). The fork's `metadata["forked_from"]`
        names the call. Refused with `call_not_recorded` when the session's event log
        holds no such call of the main line (`runtime.answer_fork`). `idempotency_key`:
        as `fork`'s."""
        from ..core.idempotency import as_key
        from .answer_fork import fork_with_answer

        return await fork_with_answer(cast(Any, self), session_id, turn, call, answer, new_id,
                                      key=as_key(idempotency_key))

    async def rewind(self, session_id: str, turn: int, *,
                     idempotency_key: str | IdempotencyKey | None = None) -> SessionState:
        """Cut the session back to how it stood before `turn`: its next message starts
        turn `turn` again.

        What is cut is kept as a copy named in `metadata["rewinds"][-1]["kept_as"]`
        (`undo_rewind` puts it back). Refused while a turn runs (`turn_running`) or a
        person is awaited (`waiting_for_approval`, `waiting_for_human`). Returns a
        snapshot of the rewound session. `idempotency_key`: a retry with the same key
        cuts nothing more and returns the session as it is."""
        from ..core.idempotency import as_key
        from .timetravel import rewind

        return await rewind(self.store, session_id, turn, self.running_turns,
                            as_key(idempotency_key))

    async def undo_rewind(self, session_id: str) -> SessionState:
        """Put back what the session's last `rewind` cut (`no_rewind` if none)."""
        from .timetravel import undo_rewind

        return await undo_rewind(self.store, session_id, self.running_turns)

