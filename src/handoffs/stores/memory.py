"""MemoryStore: sessions in this process's memory. For tests, demos and single processes."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..core.events import Event
from ..core.session import Checkpoint, SessionState, SessionStatus
from ..errors import HandoffsError
from . import checks, facts, memory_marks, rows
from .base import SessionSummary
from .locks import KeyedLocks, _Held
from .memory_kept import Committed, copy_of, make_valid
from .memory_marks import TurnMarksInMemory

if TYPE_CHECKING:
    from .stats import HandoffStats

log = logging.getLogger("handoffs.stores.memory")

_FREE: Any = object()


class _Turn(_Held):
    """What `MemoryStore.lock` returns: the session's queue, noting which task holds it."""

    __slots__ = ("store",)

    def __init__(self, store: MemoryStore, key: str) -> None:
        _Held.__init__(self, store._locks._entries, key)
        self.store = store

    async def __aenter__(self) -> None:
        if not self.held_at_once():
            await self.queue()
        self.store._holders[self.key] = asyncio.current_task()

    async def __aexit__(self, *exc: object) -> None:
        try:
            if exc[0] is not None:  # the turn died: undo what it did not commit
                self.store._restore(self.key)
        finally:
            del self.store._holders[self.key]
            self.release()


class MemoryStore(TurnMarksInMemory):
    """Keeps each session as a live object; turns on one session are serialised.

    Inside a turn, `load` returns the stored object itself (the task holding the
    session's lock changes it in place), so a turn costs nothing proportional to the
    conversation's length. What it changed but did not commit never outlives the turn:
    a turn that raises or is cancelled gets the session back as last committed
    (messages and records are append-only, so undoing is truncating them and restoring
    the header from the text kept at commit). Every other reader sees only committed
    content, with a session whose turn died reported as `interrupted`, as the durable
    stores do. Text is made valid at commit as they do (see `stores.text`).
    Nothing survives the process.

    `event_log` bounds how many of each session's newest events are kept for
    `events_after` (a server's replay); older ones are forgotten, but every event's
    sequence number stays exact. 0 keeps none.
    """

    def __init__(self, event_log: int = 1000) -> None:
        self.event_log = event_log
        self._events: dict[str, memory_marks.Chunks] = {}
        """Per session: (sequence number of the first, events, how many events the
        session's commits made up to this one) per commit, oldest first; a session
        whose events one commit made keeps that one tuple, not a list of it."""
        self._sessions: dict[str, SessionState] = {}
        self._committed: dict[str, Committed] = {}
        self._holders: dict[str, asyncio.Task[Any] | None] = {}
        self._locks = KeyedLocks()
        self._finals: dict[str, dict[int, str]] = {}
        """Per session, the outcome of turns that waited for approval, once they ended."""
        self._stats: dict[str, list[tuple[int, int, facts.Kept]]] = {}
        """Per session, per commit with records: which records (from, to) and the facts
        of their turn; the stats rows are made from them when asked for."""
        self._marks: dict[str, memory_marks.Marks] = {}
        """Per session, where each of its turns began (`stores.marks`)."""

    def lock(self, session_id: str) -> _Turn:
        """Held for a whole turn; turns on one session queue up in arrival order."""
        if type(session_id) is not str or session_id not in self._sessions:
            checks.session_id(session_id)  # a stored session's id was checked already
        return _Turn(self, session_id)

    # -- reads ---------------------------------------------------------------------------

    async def load(self, session_id: str) -> SessionState | None:
        """The session, or None: the live object for the task holding its lock, else
        what was committed (status `interrupted` if its turn died)."""
        # A stored session's id was checked when it was first stored: only an id that
        # finds nothing needs the check (which refuses what is not a valid id).
        state = self._sessions.get(session_id) if type(session_id) is str else None
        if state is None:
            if type(session_id) is not str or session_id not in self._holders:
                checks.session_id(session_id)  # (a held lock's id was checked by `lock`)
            return None
        holder = self._holders.get(session_id, _FREE)
        if holder is not _FREE and holder is asyncio.current_task():
            return state
        return self._view(session_id, state, holder is _FREE)

    def _view(self, sid: str, state: SessionState, free: bool) -> SessionState:
        """The committed session, for a reader that does not hold its lock."""
        kept = self._committed[sid]
        if kept.changed(state):
            if not free:  # a live turn is changing it: a copy of what it committed
                return copy_of(state, kept, None)
            self._restore(sid)
        if free and state.status == "running":
            return copy_of(state, kept, SessionStatus.INTERRUPTED)
        return state

    async def list_sessions(self, limit: int = 50, offset: int = 0, *,
                            status: str | None = None) -> list[SessionSummary]:
        """Sessions, most recently updated first; only those in `status` if given."""
        checks.listing(limit, offset, status)
        found = []
        for sid, kept in self._committed.items():
            summary = kept.summary(sid, sid not in self._holders)
            if status is None or summary.status == status:
                found.append(summary)
        found.sort(key=lambda s: s.id)
        found.sort(key=lambda s: s.updated_at, reverse=True)
        return found[offset:offset + limit]

    async def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session as JSON-ready data (`to_dict()`, plus `events`: none kept here)."""
        state = await self.load(session_id)
        if state is None:
            return None
        return rows.export_dict(state, [])

    # -- writes --------------------------------------------------------------------------

    async def commit(
        self, state: SessionState, since: Checkpoint, events: Sequence[Event] = ()
    ) -> None:
        """Keep `state` as the session; refused (`session_conflict`) unless it continues
        the stored version, as on the durable stores."""
        sid = state.id
        kept = self._committed.get(sid) if type(sid) is str else None
        if kept is None and (type(sid) is not str or sid not in self._holders):
            sid = checks.session_id(sid)  # (a stored session's or a held lock's id: checked)
        if state.version != (0 if kept is None else kept.version):
            raise rows.conflict(sid, state.version)
        if state.turn > (0 if kept is None else kept.turn):  # a turn starts: mark it
            memory_marks.mark(self._marks, sid, state.turn, kept)
        first_message = 0 if kept is None else kept.messages
        first_record = 0 if kept is None else kept.records
        saved = state.version, state.updated_at
        state.version += 1
        state.updated_at = time.time()
        try:
            make_valid(state, kept, first_message, first_record)
        except BaseException:
            state.version, state.updated_at = saved
            raise
        recs = state.handoffs
        if len(recs) > first_record:  # only the turn's last event is read, as a rule
            delegated = False
            for i in range(first_record, len(recs)):
                if recs[i].returns:
                    delegated = True
                    break
            self._stats.setdefault(sid, []).append(
                (first_record, len(recs), facts.kept_turn(events, delegated)))
        if first_record:
            final = facts.final_outcome(recs, first_record, state.turn, events)
            if final is not None:
                self._finals.setdefault(sid, {})[final[0]] = final[1]
        first = state.event_seq
        n = len(events)
        state.event_seq = first + n
        self._keep(state)
        if n:
            self._log(sid, first, events, n)

    def _log(self, sid: str, first: int, events: Sequence[Any], n: int) -> None:
        """Keep a commit's `n` events, numbered from `first` (as given: the runtime
        builds `Event` objects only when read), and forget the oldest beyond
        `event_log`."""
        if self.event_log <= 0:
            return
        kept = self._events.get(sid)
        if kept is None:
            self._events[sid] = (first, events, n)
            return
        chunks = memory_marks.chunks_of(kept)
        end = chunks[-1][2] + n  # counted: numbers may skip
        chunks.append((first, events, end))
        while len(chunks) > 1 and end - chunks[0][2] >= self.event_log:
            del chunks[0]
        self._events[sid] = chunks

    async def event_count(self, session_id: str) -> int:
        """The sequence number the session's next stored event gets (0 if it does not
        exist): one past its last stored event."""
        kept = self._committed.get(checks.session_id(session_id))
        return 0 if kept is None else kept.event_seq

    async def events_after(self, session_id: str, after: int = -1,
                           limit: int = 1000) -> list[dict[str, Any]]:
        """The kept events whose sequence number is above `after`, oldest first, at most
        `limit`; each is its `Event.to_dict()` plus `seq`."""
        out: list[dict[str, Any]] = []
        found = self._events.get(checks.session_id(session_id))
        for first, events, _ in memory_marks.chunks_of(found):
            if first + len(events) <= after + 1:
                continue
            for i in range(max(0, after + 1 - first), len(events)):
                e = events[i]
                d = dict(e) if isinstance(e, dict) else e.to_dict()
                d["seq"] = first + i
                out.append(d)
                if len(out) >= limit:
                    return out
        return out

    def _keep(self, state: SessionState) -> None:
        self._sessions[state.id] = state
        self._committed[state.id] = Committed(state)

    async def delete(self, session_id: str) -> bool:
        """Forget the session and its events; True if it existed."""
        sid = checks.session_id(session_id)
        self._committed.pop(sid, None)
        self._events.pop(sid, None)
        self._stats.pop(sid, None)
        self._finals.pop(sid, None)
        self._marks.pop(sid, None)
        return self._sessions.pop(sid, None) is not None

    async def import_session(
        self, data: Mapping[str, Any] | str, *, replace: bool = False
    ) -> SessionState:
        """Store an export under its id; `session_exists` if taken and not `replace`."""
        state, w = rows.import_write(data)  # valid text, as a durable store would keep
        async with self.lock(state.id):
            if state.id in self._sessions and not replace:
                raise HandoffsError(f"Session {state.id!r} already exists; pass "
                                    "replace=True to overwrite it.", code="session_exists")
            self._keep(state)
            self._events.pop(state.id, None)
            if w.events:
                self._log(state.id, 0, [json.loads(e[3]) for e in w.events], len(w.events))
            self._stats[state.id] = [(0, len(state.handoffs), w.facts)]
            self._finals.pop(state.id, None)  # the import's events say how turns ended
            self._marks.pop(state.id, None)
        return state.snapshot()

    async def handoff_stats(self, since: float | None = None,
                            until: float | None = None) -> HandoffStats:
        """Per route: requests, accepted, refusals by code, the share whose turn failed
        or went to a human, the median time the target took (see `stores.stats`), over
        the committed records of `[since, until)` (Unix times; None: unbounded)."""
        from .stats import aggregate  # the report, only when asked for

        found: list[facts.Row] = []
        for sid, commits in self._stats.items():
            records = self._sessions[sid].handoffs
            finals = self._finals.get(sid)
            for first, end, known in commits:
                rows_ = facts.rows_of(records[first:end], facts.expand(known))
                if finals:  # turns that waited for approval and have ended since
                    rows_ = [r if r[7] != facts.WAITING_FOR_APPROVAL or r[6] not in finals
                             else (*r[:7], finals[r[6]], r[8]) for r in rows_]
                found.extend(rows_)
        return aggregate(found, since, until)

    def _restore(self, sid: str) -> None:
        """Undo whatever changed in the session since its last commit, in place."""
        state = self._sessions.get(sid)
        kept = self._committed.get(sid)
        if state is None or kept is None or not kept.changed(state):
            return
        log.debug("session %r: undoing %d messages and %d records its turn did not "
                  "commit", sid, len(state.messages) - kept.messages,
                  len(state.handoffs) - kept.records)
        del state.messages[kept.messages:]
        del state.handoffs[kept.records:]
        kept.restore(state)
        state.cache = None  # the views may have seen the undone messages

    async def close(self) -> None:
        """Nothing to release: the sessions stay readable (a durable store closes)."""
        return None

    def __len__(self) -> int:
        return len(self._sessions)
