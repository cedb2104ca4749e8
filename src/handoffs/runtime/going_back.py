"""The runner's methods that go back in a session: `fork`, `rewind`, `undo_rewind`
(`runtime.timetravel` does the work; `Runner.replay` stands beside them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..core.session import SessionState
    from ..stores.base import SessionStore
    from .state import Turn


class GoingBack:
    """`Runner`'s going-back methods, over its store and the turns it is running."""

    store: SessionStore
    _running: dict[str, Turn]

    async def fork(self, session_id: str, turn: int, new_id: str | None = None
                   ) -> SessionState:
        """A new session holding the conversation as it stood before `turn` (1-based).

        Messages, handoff records, shared memory, the active agent and its view, the
        events: exactly what the original loaded before that turn, with new record ids.
        The original is unchanged but for `metadata["forks"]`; the fork has
        `metadata["forked_from"]`. `turn` may be one past the last turn (a copy of all
        of it). `new_id` defaults to `<id>-fork-<random>`; `session_exists` if taken.
        Refused with `turn_not_recorded` for turns stored before handoffs kept turn
        marks. Returns a snapshot of the fork (`runtime.timetravel`)."""
        from .timetravel import fork

        return await fork(self.store, session_id, turn, new_id)

    async def rewind(self, session_id: str, turn: int) -> SessionState:
        """Cut the session back to how it stood before `turn`: its next message starts
        turn `turn` again.

        What is cut is kept as a copy named in `metadata["rewinds"][-1]["kept_as"]`
        (`undo_rewind` puts it back). Refused while a turn runs (`turn_running`) or a
        person is awaited (`waiting_for_approval`, `waiting_for_human`). Returns a
        snapshot of the rewound session."""
        from .timetravel import rewind

        return await rewind(self.store, session_id, turn, self._running)

    async def undo_rewind(self, session_id: str) -> SessionState:
        """Put back what the session's last `rewind` cut (`no_rewind` if none)."""
        from .timetravel import undo_rewind

        return await undo_rewind(self.store, session_id, self._running)

