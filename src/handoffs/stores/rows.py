"""How a session maps to rows in SQL stores: one header row, then append-only rows.

The header row holds what a turn may rewrite (active agent, status, shared memory, view,
metadata, version) as one JSON text plus a few plain columns for listing. Messages,
handoff records and events are one JSON text per row, numbered from 0 per session, and
a commit only inserts the rows past its checkpoint: its cost does not depend on the
length of the conversation.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from json.encoder import c_make_encoder as _c_make_encoder  # type: ignore[attr-defined]
from json.encoder import encode_basestring as _encode_basestring
from typing import Any

from ..core.events import Event
from ..core.handoff import HandoffRecord
from ..core.messages import message_from_dict
from ..core.pending import PendingApproval
from ..core.session import Checkpoint, SessionState, SessionStatus, ViewSpec
from ..errors import HandoffsError
from .checks import session_id
from .facts import Facts, Row, facts, final_outcome, rows_of
from .text import column, valid

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str)
_c_encoder: Any = None
if _c_make_encoder is not None:  # one C encoder for every call (JSONEncoder builds one
    # per call: 3 us of a 7 us header here). No circular check: a cycle is RecursionError.
    _c_encoder = _c_make_encoder(None, str, _encode_basestring, None, ":", ",",
                                 False, False, True)


def dumps(value: Any) -> str:
    """The JSON text of a value, as every store writes it (compact, not ASCII-escaped;
    anything JSON has no type for is written as its `str`)."""
    if _c_encoder is None:  # pragma: no cover - Pythons without the C accelerator
        return _encoder.encode(value)
    return "".join(_c_encoder(value, 0))


_dumps = dumps

LARGE = 64 * 1024
"""Commits whose new text is longer than this (in characters) are encoded and written
off the event loop's thread."""


@dataclass(slots=True)
class Write:
    """Everything one commit writes, already encoded (built on the event loop's thread)."""

    id: str
    expected: int
    """The version the stored row must still have (0: the session must not exist yet)."""
    version: int
    active_agent: str | None
    status: str
    turn: int
    channel: str | None
    created_at: float
    updated_at: float
    header: str
    message_count: int
    record_count: int
    first_message: int
    messages: list[str]
    first_record: int
    records: list[str]
    events: list[tuple[int, str, float, str]]
    """(turn, type, at, JSON) per event."""
    repaired: bool = False
    """Some text had to be made valid (see `stores.text`): `applied` mirrors it on the
    state, so the state a store keeps is what it wrote."""
    stats: list[Row] = field(default_factory=list)
    """The stats columns of each record in `records` (see `stores.stats`)."""
    facts: Facts = field(default_factory=lambda: ({}, {}))
    """What `stats` was made from (an import's, kept by the memory store)."""
    final: tuple[int, str] | None = None
    """(turn, outcome) when this commit ends a turn that an earlier commit left waiting
    for approval: its records stored then get that outcome (`facts.final_outcome`)."""
    first_event: int = 0
    """The sequence number of the first of `events` (`SessionState.event_seq`): the
    session's next number, past any a turn that died may have shown."""
    marks: bool = True
    """Keep a turn mark when this write starts a new turn (`stores.marks`); an import
    writes none."""

    @property
    def size(self) -> int:
        """The characters of text this write carries."""
        return (len(self.header) + sum(map(len, self.messages))
                + sum(map(len, self.records)) + sum(len(e[3]) for e in self.events))


def encode_commit(state: SessionState, since: Checkpoint, events: Sequence[Event]) -> Write:
    """The rows a commit of `state` past `since` adds, and its new header; all text valid."""
    version = state.version + 1
    now = time.time()
    header = state.header()
    header["version"] = version
    header["updated_at"] = now
    msgs = state.messages
    recs = state.handoffs
    w = Write(
        state.id, state.version, version, column(state.active_agent), str(state.status),
        state.turn, column(state.channel), state.created_at, now, _dumps(header), len(msgs),
        len(recs), since.messages, [_dumps(m.to_dict()) for m in msgs[since.messages:]],
        since.handoffs, [_dumps(r.to_dict()) for r in recs[since.handoffs:]],
        [encode_event(e) for e in events], first_event=state.event_seq,
        marks=since.turn < 0 or state.turn > since.turn,
    )
    if len(recs) > since.handoffs:
        w.stats = rows_of(recs[since.handoffs:], facts(events))
    if since.handoffs:
        w.final = final_outcome(recs, since.handoffs, state.turn, events)
    make_valid(w)
    return w


def probe_body() -> str:
    """64 KB of text that does not compress: a row that tests whether a write has room."""
    import base64
    import os

    return base64.b64encode(os.urandom(48 * 1024)).decode()


def rough_size(state: SessionState, since: Checkpoint) -> int:
    """About how many characters of text a commit past `since` writes: its new messages'
    texts and tool arguments, its new records' texts. Cheap: no encoding."""
    n = 0
    for m in state.messages[since.messages:]:
        n += len(m.text)
        for c in getattr(m, "tool_calls", ()):
            n += len(c.arguments)
    for r in state.handoffs[since.handoffs:]:
        n += len(r.explanation) + len(r.message) + len(r.summary or "")
    return n


def encode_event(e: Event) -> tuple[int, str, float, str]:
    return (e.turn, column(e.type) or "", e.at, _dumps(e.to_dict()))


def _valid_all(texts: list[str]) -> bool:
    """Make every text in the list valid, in place; True if any changed."""
    changed = False
    for i, t in enumerate(texts):
        if not t.isascii():
            fixed = valid(t)
            if fixed is not t:
                texts[i] = fixed
                changed = True
    return changed


def make_valid(w: Write) -> None:
    header = valid(w.header)
    repaired = header is not w.header
    w.header = header
    repaired = _valid_all(w.messages) or repaired
    repaired = _valid_all(w.records) or repaired
    for i, (turn, type_, at, body) in enumerate(w.events):
        if not body.isascii():
            w.events[i] = (turn, type_, at, valid(body))
    w.repaired = repaired


def header_text(state: SessionState) -> str:
    """The header JSON text a commit of `state` writes (after `applied`)."""
    return _dumps(state.header())


def applied(state: SessionState, w: Write) -> None:
    """Mirror a successful write on the in-memory state."""
    state.version = w.version
    state.updated_at = w.updated_at
    state.event_seq = w.first_event + len(w.events)
    if w.repaired:
        mirror(state, w.header, w.first_message, w.messages, w.first_record, w.records)


def mirror(state: SessionState, header: str, first_message: int, messages: list[str],
           first_record: int, records: list[str]) -> None:
    """Make `state` hold exactly what these texts say (after some text was repaired)."""
    restore_header(state, header)
    for i, body in enumerate(messages):
        state.messages[first_message + i] = message_from_dict(json.loads(body))
    for i, body in enumerate(records):
        state.handoffs[first_record + i] = HandoffRecord.from_dict(json.loads(body))
    state.cache = None  # the transcript views hold the old message objects


def restore_header(state: SessionState, header: str) -> None:
    """Set every header field of `state` from a header text (`header_text` output)."""
    d: dict[str, Any] = json.loads(header)
    state.active_agent = d.get("active_agent")
    state.shared = dict(d.get("shared", {}))
    state.channel = d.get("channel")
    state.version = d.get("version", 0)
    state.turn = d.get("turn", 0)
    state.view = ViewSpec.from_dict(d.get("view", {}))
    state.status = SessionStatus(d.get("status", "idle"))
    state.created_at = d.get("created_at", 0.0)
    state.updated_at = d.get("updated_at", 0.0)
    state.metadata = dict(d.get("metadata", {}))
    pending = d.get("pending")
    state.pending = None if pending is None else PendingApproval.from_dict(pending)
    state.context = d.get("context")


def decode(header: str, messages: str, records: str) -> SessionState:
    """A state from its header JSON and its rows joined as JSON arrays."""
    d: dict[str, Any] = json.loads(header)
    d["messages"] = json.loads(messages)
    d["handoffs"] = json.loads(records)
    return SessionState.from_dict(d)


def join(bodies: Sequence[str] | None) -> str:
    """Row bodies (already JSON) as one JSON array text, parsed in one go."""
    return "[" + ",".join(bodies) + "]" if bodies else "[]"


def conflict(session_id: str, expected: int) -> HandoffsError:
    if expected == 0:
        what = "was created by another writer meanwhile"
    else:
        what = f"changed since version {expected} (another writer committed meanwhile)"
    return HandoffsError(
        f"Session {session_id!r} {what}; this write was not applied. Run the turn again: "
        "turns hold the session's lock, so this means a lock was lost or bypassed.",
        code="session_conflict",
    )


def import_write(data: Mapping[str, Any] | str) -> tuple[SessionState, Write]:
    """Parse an export (`export_session` output, dict or JSON text) into a full write."""
    d: Mapping[str, Any] = json.loads(data) if isinstance(data, str) else data
    if not isinstance(d, Mapping) or "id" not in d:
        raise HandoffsError("An import needs a session export: an object with an 'id'.",
                            code="invalid_session")
    session_id(d["id"])
    state = SessionState.from_dict(d)
    # Version 0 means "never stored" to `commit`; a stored session is at 1 or later.
    state.version = max(state.version, 1)
    header = state.header()
    events = [
        (int(e.get("turn", 0)), column(str(e.get("type", ""))) or "",
         float(e.get("at", 0.0)), _dumps(e))
        for e in d.get("events", ())
    ]
    w = Write(
        state.id, 0, state.version, column(state.active_agent), str(state.status),
        state.turn, column(state.channel), state.created_at, state.updated_at,
        _dumps(header), len(state.messages), len(state.handoffs),
        0, [_dumps(m.to_dict()) for m in state.messages],
        0, [_dumps(r.to_dict()) for r in state.handoffs], events,
    )
    state.event_seq = len(events)  # an import numbers its events from 0
    w.marks = False
    w.facts = facts(d.get("events", ()))
    w.stats = rows_of(state.handoffs, w.facts)
    make_valid(w)
    if w.repaired:
        mirror(state, w.header, 0, w.messages, 0, w.records)
        w.repaired = False
    return state, w


def sequenced(found: Sequence[Any]) -> list[dict[str, Any]]:
    """Stored events as `(seq, body)` rows, decoded, each with its `seq`."""
    out = []
    for seq, body in found:
        d = json.loads(body)
        d["seq"] = int(seq)
        out.append(d)
    return out


def export_dict(state: SessionState, events: list[Any]) -> dict[str, Any]:
    d = state.to_dict()
    d["events"] = events
    return d


def wrap(joined: str | None) -> str:
    """Rows joined by the database (`string_agg`, NULL when none) as a JSON array."""
    return "[" + joined + "]" if joined else "[]"
