"""Sessions this process committed last, reused while the database says nothing changed.

A durable store must read a session at the start of every turn, and decoding a long
session's rows costs time proportional to its length (27 ms at 10,000 messages on SQLite
here). But the process that committed a session usually serves its next turn too. So a
store remembers the state object it last committed, with the header text it wrote; a
`load` then asks the database only for the version and the row counts, and returns the
same object when they match and the object was not touched since that commit (its
header encodes to the same text; messages and records are append-only). Any other
writer bumps the version, so its changes are always read. Keeping the object also keeps
its derived views, so a handoff stays as cheap on a durable store as in memory.
"""

from __future__ import annotations

from collections import OrderedDict

from ..core.session import SessionState
from . import rows


class StateCache:
    """At most `size` committed states, least recently used dropped first."""

    __slots__ = ("_items", "size")

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[str, tuple[SessionState, str]] = OrderedDict()

    def remember(self, state: SessionState, header: str) -> None:
        """`state` was just committed with this header text."""
        if self.size <= 0:
            return
        items = self._items
        items[state.id] = (state, header)
        items.move_to_end(state.id)
        if len(items) > self.size:
            items.popitem(last=False)

    def candidate(self, session_id: str) -> SessionState | None:
        """The remembered state if it is still exactly what was committed, else None."""
        entry = self._items.get(session_id)
        if entry is None:
            return None
        state, header = entry
        if rows.header_text(state) != header:  # changed after its commit (a turn that
            del self._items[session_id]        # did not finish): never serve it again
            return None
        self._items.move_to_end(session_id)
        return state

    @staticmethod
    def current(state: SessionState, version: int, messages: int, records: int) -> bool:
        """Whether the stored session is still the one `state` holds."""
        return (state.version == version and len(state.messages) == messages
                and len(state.handoffs) == records)

    def forget(self, session_id: str) -> None:
        self._items.pop(session_id, None)
