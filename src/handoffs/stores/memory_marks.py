"""The memory store's turn marks (`stores.marks`): a turn's mark from what the last commit
kept, and a session's in-memory logs cut back to one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..core.session import SCHEMA, SessionState
from . import checks, rows
from .marks import TurnMark, cut_header

FIRST = TurnMark(1, 0, 0, 0, None)
"""The mark of a session's first turn when nothing was stored before it: kept as this one
object instead of a dict of marks until a second turn starts (most sessions of a
long-running process are short; `Marks` is what is kept per session)."""

Marks = dict[int, TurnMark] | TurnMark
"""A session's marks in memory: by turn, or `FIRST` alone."""


def marks_of(found: Marks | None) -> dict[int, TurnMark]:
    """A session's kept marks as a dict by turn."""
    if found is None:
        return {}
    return {1: found} if isinstance(found, TurnMark) else found


def add(by_sid: dict[str, Marks], sid: str, mark: TurnMark) -> None:
    """Keep `mark` among the session's marks."""
    found = by_sid.get(sid)
    if found is None and mark is FIRST:
        by_sid[sid] = FIRST
        return
    if not isinstance(found, dict):
        found = by_sid[sid] = marks_of(found)
    found[mark.turn] = mark


def mark(by_sid: dict[str, Marks], sid: str, turn: int, kept: Any) -> None:
    """Keep the mark of turn `turn`, which starts now, among the session's marks (`kept`:
    what its last commit kept, None when nothing was)."""
    if kept is None and turn == 1 and sid not in by_sid:
        by_sid[sid] = FIRST  # a new session's first turn: nothing to encode
        return
    add(by_sid, sid, before(sid, turn, kept))


def before(sid: str, turn: int, kept: Any) -> TurnMark:
    """The mark of a turn that starts now, from what the session's last commit kept
    (`memory_kept.Committed`, None when nothing was)."""
    if kept is None:
        return FIRST if turn == 1 else TurnMark(turn, 0, 0, 0, None)
    v = kept.view
    mode, start, pivot, record_id = v.mode, v.start, v.pivot, v.record_id
    header = {  # `SessionState.header()` of what was kept, encoded now: a true snapshot
        "schema": SCHEMA, "id": sid, "active_agent": kept.active_agent,
        "shared": dict(kept.shared), "channel": kept.channel, "version": kept.version,
        "turn": kept.turn, "view": {"mode": mode, "start": start, "pivot": pivot,
                                    "record_id": record_id},
        "status": kept.status, "created_at": kept.created_at,
        "updated_at": kept.updated_at, "metadata": kept.metadata}
    if kept.pending is not None:
        header["pending"] = kept.pending.to_dict()
    if kept.context is not None:
        header["context"] = kept.context
    return TurnMark(turn, kept.messages, kept.records, kept.event_seq, rows.dumps(header))


Chunk = tuple[int, Any, int]
Chunks = list[Chunk] | Chunk
"""A session's kept events (`MemoryStore._events`): a list of chunks, or one chunk."""


def chunks_of(kept: Chunks | None) -> list[Chunk]:
    """A session's kept event chunks as a list (a new one when kept as one chunk)."""
    if kept is None:
        return []
    return [kept] if type(kept) is tuple else kept  # type: ignore[return-value]


def cut_events(chunks: list[tuple[int, Any, int]], events: int) -> list[tuple[int, Any, int]]:
    """The kept event chunks without the events numbered `events` and later."""
    out: list[tuple[int, Any, int]] = []
    for first, found, end in chunks:
        if first < events:
            n = min(len(found), events - first)
            out.append((first, found[:n], end - len(found) + n))
    return out


def cut_stats(commits: list[tuple[int, int, Any]], records: int) -> list[tuple[int, int, Any]]:
    """The per-commit record ranges without the records from `records` on."""
    return [(a, min(b, records), f) for a, b, f in commits if a < records]


def cut_turns(by_turn: dict[int, Any] | None, turn: int) -> None:
    """Forget, in place, what is kept for `turn` and later turns."""
    if by_turn:  # (a session's marks: a dict once cut, see `truncate`)
        for t in [t for t in by_turn if t >= turn]:
            del by_turn[t]


class TurnMarksInMemory:
    """`MemoryStore`'s turn marks (`stores.marks.MarkedStore`)."""

    _marks: dict[str, Marks]
    _sessions: dict[str, SessionState]
    _committed: dict[str, Any]
    _events: dict[str, Chunks]
    _stats: dict[str, list[tuple[int, int, Any]]]
    _finals: dict[str, dict[int, str]]

    if TYPE_CHECKING:
        def _keep(self, state: SessionState) -> None: ...

    async def turn_marks(self, session_id: str) -> list[TurnMark]:
        """Where each recorded turn of the session began, by turn."""
        found = marks_of(self._marks.get(checks.session_id(session_id)))
        return [found[t] for t in sorted(found)]

    async def read_prefix(self, session_id: str, messages: int, records: int
                          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The session's first messages and records (see `stores.marks.MarkedStore`)."""
        sid = checks.session_id(session_id)
        state, kept = self._sessions.get(sid), self._committed.get(sid)
        if state is None or kept is None:
            return [], []
        return ([m.to_dict() for m in state.messages[:min(messages, kept.messages)]],
                [r.to_dict() for r in state.handoffs[:min(records, kept.records)]])

    async def put_turn_marks(self, session_id: str, marks: Sequence[TurnMark]) -> None:
        """Keep these marks for the session (a fork's, copied from its original)."""
        sid = checks.session_id(session_id)
        for m in marks:
            add(self._marks, sid, m)

    async def truncate(self, state: SessionState, mark: TurnMark) -> None:
        """Cut the session back to `mark` (see `stores.marks.MarkedStore.truncate`)."""
        sid = checks.session_id(state.id)
        kept = self._committed.get(sid)
        if kept is None or state.version != kept.version:
            raise rows.conflict(sid, state.version)
        cut_header(state)
        del state.messages[mark.messages:]
        del state.handoffs[mark.records:]
        state.cache = None
        self._keep(state)
        self._events[sid] = cut_events(chunks_of(self._events.get(sid)), mark.events)
        self._stats[sid] = cut_stats(self._stats.get(sid, []), mark.records)
        cut_turns(self._finals.get(sid), mark.turn)
        found = self._marks.get(sid)
        if found is not None:
            found = self._marks[sid] = marks_of(found)
            cut_turns(found, mark.turn)

