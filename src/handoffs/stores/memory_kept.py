"""What the memory store's last commit of a session kept (`Committed`: the header's
values, enough to undo a turn that died and to list the session), a reader's copy of the
committed session (`copy_of`), and the text check a commit makes (`make_valid`)."""

from __future__ import annotations

from typing import Any

from ..core.pending import pending_of
from ..core.session import SessionState, SessionStatus, ViewSpec
from . import rows
from .base import SessionSummary
from .text import column, encodable, json_encodable, objects_encodable

_NO_METADATA: dict[str, Any] = {}
"""What `Committed` keeps for a session without metadata (read, never written)."""
_MISSING: Any = object()


class Committed:
    """What the last commit of a session stored: enough to undo any later change, and
    to list the session. The header's fields are kept as values, not as JSON text: a
    turn commits twice, and encoding the header each time cost more than the rest of
    the store. `shared` and `metadata` are copied one level deep, which is what the
    runtime changes (it assigns keys); a value a tool changes in place inside them
    (`ctx.shared["cart"].append(...)`) is not undone if its turn then fails."""

    __slots__ = ("active_agent", "channel", "context", "created_at", "event_seq", "messages",
                 "metadata", "pending", "records", "shared", "status", "turn", "updated_at",
                 "version", "view")

    def __init__(self, state: SessionState) -> None:
        self.messages = len(state.messages)
        self.records = len(state.handoffs)
        self.version = state.version
        self.active_agent = state.active_agent
        self.status = state.status
        self.turn = state.turn
        self.created_at = state.created_at
        self.updated_at = state.updated_at
        self.channel = state.channel
        self.view = state.view
        """Kept by reference: the runtime replaces a session's view, never changes it."""
        self.shared = tuple(state.shared.items())
        """`state.shared`'s items (a tuple costs a third of a dict's memory per session)."""
        self.metadata = dict(state.metadata) if state.metadata else _NO_METADATA
        pending = state.pending
        if pending is not None:  # a dict in its stored form, assigned, is made typed
            state.pending = pending = pending_of(pending)
        self.pending = pending
        """Kept by reference: a pending approval is replaced, never changed."""
        self.context = state.context
        """Kept by reference: a turn replaces a session's context, never changes it."""
        self.event_seq = state.event_seq

    def changed(self, state: SessionState) -> bool:
        """Whether `state` differs from what was committed (beyond in-place changes
        inside shared values)."""
        return (len(state.messages) != self.messages or len(state.handoffs) != self.records
                or state.version != self.version or state.active_agent != self.active_agent
                or state.status != self.status or state.turn != self.turn
                or state.channel != self.channel or state.updated_at != self.updated_at
                or state.view is not self.view
                or not _same(state.shared, self.shared) or state.metadata != self.metadata
                or state.pending is not self.pending or state.event_seq != self.event_seq
                or state.context is not self.context)

    def restore(self, state: SessionState) -> None:
        """Set the header fields of `state` back to what was committed."""
        state.active_agent = self.active_agent
        state.shared = dict(self.shared)  # a copy: the turn may change it
        state.channel = self.channel
        state.version = self.version
        state.turn = self.turn
        state.view = self.view
        state.status = self.status
        state.created_at = self.created_at
        state.updated_at = self.updated_at
        state.metadata = dict(self.metadata)
        state.pending = self.pending
        state.context = self.context
        state.event_seq = self.event_seq

    def summary(self, sid: str, free: bool) -> SessionSummary:
        status = column(self.status) or ""
        if free and status == "running":
            status = "interrupted"
        return SessionSummary(sid, column(self.active_agent), self.turn, status,
                              self.created_at, self.updated_at, self.messages)


def copy_of(state: SessionState, kept: Committed, status: SessionStatus | None) -> SessionState:
    """A new state holding what was committed (the live one may be mid-turn)."""
    copy = SessionState(state.id, messages=state.messages[:kept.messages],
                        handoffs=state.handoffs[:kept.records])
    kept.restore(copy)
    v = copy.view  # the reader's own, as every other field is
    copy.view = ViewSpec(v.mode, v.start, v.pivot, v.record_id)
    if status is not None:
        copy.status = status
    return copy


def make_valid(state: SessionState, kept: Committed | None, first_message: int,
                first_record: int) -> None:
    """Make the text a commit keeps valid, as a durable store would write it. Checks
    only what is new: the messages and records, and the header's values that differ
    from the last commit; O(1) in the session's length, and no encoding unless some
    text is not ASCII."""
    new_msgs = state.messages[first_message:]
    new_recs = state.handoffs[first_record:]
    if _header_encodable(state, kept) and objects_encodable(new_msgs + new_recs):
        return
    header = rows.header_text(state)
    w = rows.Write(state.id, 0, 0, None, "", 0, None, 0.0, 0.0, header, 0, 0,
                   first_message, [rows.dumps(m.to_dict()) for m in new_msgs],
                   first_record, [rows.dumps(r.to_dict()) for r in new_recs], [])
    rows.make_valid(w)
    if w.repaired:
        rows.mirror(state, w.header, first_message, w.messages, first_record, w.records)


def _same(shared: dict[str, Any], kept: tuple[tuple[str, Any], ...]) -> bool:
    """Whether `shared` equals the dict whose items `kept` holds."""
    return len(shared) == len(kept) and all(shared.get(k, _MISSING) == v for k, v in kept)


def _pending_encodable(state: SessionState) -> bool:
    pending = pending_of(state.pending)  # may still be a dict assigned: not committed yet
    return pending is None or json_encodable(pending.to_dict())


def _header_encodable(state: SessionState, kept: Committed | None) -> bool:
    if kept is None:
        if (state.shared or state.metadata or state.pending is not None
                or state.context is not None):
            return ((state.pending is None or _pending_encodable(state))
                    and json_encodable([state.shared, state.metadata, state.context,
                                        state.active_agent, state.channel, state.status]))
        return encodable((state.active_agent, state.channel, state.status))
    shared = state.shared
    if not _same(shared, kept.shared):  # the runtime replaces values; only new ones need
        old = dict(kept.shared)         # a look
        for k, v in shared.items():
            if k in old and old[k] == v:
                continue
            if not encodable(k):
                return False
            if v and not json_encodable(v):
                return False
    return ((state.metadata == kept.metadata or json_encodable(state.metadata))
            and (state.pending is kept.pending or _pending_encodable(state))
            and (state.context is kept.context or json_encodable(state.context))
            and (state.active_agent == kept.active_agent or encodable(state.active_agent))
            and (state.channel == kept.channel or encodable(state.channel)))
