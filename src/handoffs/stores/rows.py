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
from dataclasses import dataclass
from typing import Any

from ..core.events import Event
from ..core.session import Checkpoint, SessionState
from ..errors import HandoffsError

_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


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


def encode_commit(state: SessionState, since: Checkpoint, events: Sequence[Event]) -> Write:
    """The rows a commit of `state` past `since` adds, and its new header."""
    version = state.version + 1
    now = time.time()
    header = state.header()
    header["version"] = version
    header["updated_at"] = now
    msgs = state.messages
    recs = state.handoffs
    return Write(
        state.id, state.version, version, state.active_agent, state.status, state.turn,
        state.channel, state.created_at, now, _dumps(header), len(msgs), len(recs),
        since.messages, [_dumps(m.to_dict()) for m in msgs[since.messages:]],
        since.handoffs, [_dumps(r.to_dict()) for r in recs[since.handoffs:]],
        [encode_event(e) for e in events],
    )


def encode_event(e: Event) -> tuple[int, str, float, str]:
    return (e.turn, e.type, e.at, _dumps(e.to_dict()))


def header_text(state: SessionState) -> str:
    """The header JSON text a commit of `state` writes (after `applied`)."""
    return _dumps(state.header())


def applied(state: SessionState, w: Write) -> None:
    """Mirror a successful write on the in-memory state."""
    state.version = w.version
    state.updated_at = w.updated_at


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
    state = SessionState.from_dict(d)
    # Version 0 means "never stored" to `commit`; a stored session is at 1 or later.
    state.version = max(state.version, 1)
    header = state.header()
    events = [
        (int(e.get("turn", 0)), str(e.get("type", "")), float(e.get("at", 0.0)), _dumps(e))
        for e in d.get("events", ())
    ]
    w = Write(
        state.id, 0, state.version, state.active_agent, state.status, state.turn,
        state.channel, state.created_at, state.updated_at, _dumps(header),
        len(state.messages), len(state.handoffs),
        0, [_dumps(m.to_dict()) for m in state.messages],
        0, [_dumps(r.to_dict()) for r in state.handoffs], events,
    )
    return state, w


def export_dict(state: SessionState, events: list[Any]) -> dict[str, Any]:
    d = state.to_dict()
    d["events"] = events
    return d


def wrap(joined: str | None) -> str:
    """Rows joined by the database (`string_agg`, NULL when none) as a JSON array."""
    return "[" + joined + "]" if joined else "[]"
