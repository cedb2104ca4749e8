"""Turn marks: where each user turn of a session began, so a session can go back to it.

Every store's `commit` that starts a new turn (the session's `turn` grows) keeps, in the
same write, the session as it stood just before: its header (active agent, shared
memory, view, status, metadata, version) as the stored JSON text, and how many messages,
records and events it had. Messages, records and events are append-only, so those three
numbers and that header are the whole session as it was loaded before the turn, and
`runner.fork` and `runner.rewind` (`runtime.timetravel`) are exact and cost no more
than the prefix they keep. A session's first turn has an empty mark (`header` None:
nothing was stored before it). Sessions stored before marks existed (schema 5) have
none for their older turns; going back to those is refused (`turn_not_recorded`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..core.session import SessionState
from .rows import header_text


@dataclass(slots=True, frozen=True)
class TurnMark:
    """The session just before user turn `turn` began."""

    turn: int
    """The turn this mark precedes (1 is the session's first)."""
    messages: int
    """How many messages the transcript held (the turn's own start here)."""
    records: int
    """How many handoff records the session held."""
    events: int
    """The session's next event number: its stored events below it came before the turn."""
    header: str | None
    """The stored header JSON (`SessionState.header()`), or None when the session did not
    exist yet (its first turn)."""

    def header_dict(self) -> dict[str, Any] | None:
        """The header as data (None: no session before this turn)."""
        return None if self.header is None else dict(json.loads(self.header))


@runtime_checkable
class MarkedStore(Protocol):
    """What a store offers for going back in a session (every built-in store has it)."""

    async def turn_marks(self, session_id: str) -> list[TurnMark]:
        """The session's marks, by turn (empty when it has none or does not exist)."""
        ...

    async def put_turn_marks(self, session_id: str, marks: Sequence[TurnMark]) -> None:
        """Keep these marks for the session (a fork's, copied from its original)."""
        ...

    async def read_prefix(self, session_id: str, messages: int, records: int
                          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The session's first `messages` messages and first `records` handoff records,
        as JSON-ready data (`to_dict()`), read without the rest."""
        ...

    async def truncate(self, state: SessionState, mark: TurnMark) -> None:
        """Cut the session back to `mark`, holding its lock: messages, records and events
        past the mark's counts go, and so do the marks of `mark.turn` and later; the
        header becomes `state`'s. Event numbers already given are never given again (the
        next event gets the number it would have had). Refused with `session_conflict`
        when the stored version is not `state.version`; bumps it like a commit."""
        ...


def mark_of(state: SessionState | None, turn: int, events: int) -> TurnMark:
    """The mark before `turn` of a session stored as `state` (None: not stored yet)."""
    if state is None:
        return TurnMark(turn, 0, 0, 0, None)
    return TurnMark(turn, len(state.messages), len(state.handoffs), events,
                    header_text(state))


def cut_header(state: SessionState) -> str:
    """Bump `state` as a commit would (version, time) and return its header text: what a
    store's `truncate` writes."""
    state.version += 1
    state.updated_at = time.time()
    return header_text(state)
