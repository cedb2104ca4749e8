"""SessionState: everything a conversation is, as one plain, versioned value.

It is JSON-serialisable (`to_dict` / `from_dict`) so that any store can keep it, and it
holds no live objects: the derived caches that make handoffs cheap are rebuilt on demand.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ..errors import HandoffsError
from .handoff import HandoffRecord
from .messages import Message, message_from_dict

if TYPE_CHECKING:  # loaded once a session holds a pending approval
    from .pending import PendingApproval

SCHEMA = 1
"""The version of the `to_dict` layout."""


class SessionStatus(StrEnum):
    """Where a session stands between and during turns (`SessionState.status`). Each is
    its plain string value in JSON and in every store (`"idle"`), and compares equal to it.
    """

    IDLE = "idle"
    """No turn runs and nothing waits: the next message starts a turn."""
    RUNNING = "running"
    """A turn is in progress (stored while it runs)."""
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    """A tool call waits for a person's decision or a client's result (`pending`)."""
    WAITING_FOR_HUMAN = "waiting_for_human"
    """A human agent holds the session: an operator answers the next message."""
    INTERRUPTED = "interrupted"
    """Read from a store only: a turn died mid-way (stored `running`, its lock free);
    the next turn or `resume` answers its message."""


@dataclass(slots=True)
class ViewSpec:
    """Where the active agent's view of the transcript starts and what it filters.

    Messages before `pivot` are seen through `mode` (from `start`); messages from
    `pivot` on are seen in full, after the note of the handoff that opened the view (the
    pivot is where the handoff happened). A handoff therefore never copies history: it
    writes these three numbers.
    """

    mode: str = "full"
    """`own_tools`, `full`, `conversation`, `last_user`, `none`, `summary` or `custom`
    (`full` here, from `pivot` 0, is the entry agent's view before any handoff)."""
    start: int = 0
    pivot: int = 0
    record_id: str | None = None
    """The handoff that opened the view (for its note, payload, summary and route)."""

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "start": self.start, "pivot": self.pivot,
                "record_id": self.record_id}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ViewSpec:
        return cls(d.get("mode", "full"), d.get("start", 0), d.get("pivot", 0),
                   d.get("record_id"))


@dataclass(slots=True)
class Checkpoint:
    """How much of a session a store has already written: the next write appends the rest."""

    messages: int
    handoffs: int
    version: int
    turn: int = -1
    """The session's turn when taken (-1: not known); a commit past it starts a turn, and
    the store keeps that turn's mark (`stores.marks`)."""


@dataclass(slots=True)
class SessionState:
    """One conversation: who is active, what was said, every handoff, shared memory."""

    id: str
    active_agent: str | None = None
    """The agent that receives the user's next message (None: the team's entry)."""
    messages: list[Message] = field(default_factory=list)
    """The append-only shared transcript."""
    handoffs: list[HandoffRecord] = field(default_factory=list)
    """Every handoff request, accepted or rejected, in order."""
    shared: dict[str, Any] = field(default_factory=dict)
    """Memory every agent and tool of the team can read and write; JSON values only."""
    channel: str | None = None
    version: int = 0
    """Bumped by every committed write; stores use it to detect lost updates."""
    turn: int = 0
    """Number of user turns so far."""
    view: ViewSpec = field(default_factory=ViewSpec)
    """The active agent's view of the transcript."""
    status: SessionStatus = SessionStatus.IDLE
    """Where the session stands (`SessionStatus`; a plain string in JSON)."""
    created_at: float = field(default_factory=time.time)
    updated_at: float = field(default_factory=time.time)
    metadata: dict[str, Any] = field(default_factory=dict)
    """Free-form data about the session (links to transferred sessions, labels)."""
    pending: PendingApproval | None = None
    """While a turn waits for approval (status `waiting_for_approval`): the agent, the
    model's response (text and calls), the calls that wait and the decisions so far
    (`core.pending`). It also reads as the mapping of its stored form, as when it was
    that dict; a dict in that form assigned here is made typed where a store writes it
    (`header`, the memory store's commit)."""
    context: dict[str, Any] | None = None
    """The team's typed context as JSON (`Team(context_type=...)`, `core.typed_context`);
    None: the team declares none, or no turn ran yet. Replaced, never changed in place."""
    event_seq: int = field(default=0, repr=False, compare=False)
    """Kept by the store, never serialised: the sequence number the session's next stored
    event gets. Numbers only grow; a turn that died may have shown numbers it never
    stored, and the next turn starts past them (`runtime.turn`), so none is used twice."""
    cache: Any = field(default=None, repr=False, compare=False)
    """Derived, never serialised: the transcript views (see `core.history`)."""

    def checkpoint(self) -> Checkpoint:
        """How much of the session is written: what a store's next `commit` appends after
        (take it right after `load`, pass it to `commit`)."""
        return Checkpoint(len(self.messages), len(self.handoffs), self.version, self.turn)

    def snapshot(self) -> SessionState:
        """A copy a caller may keep while turns go on (lists copied, messages shared)."""
        return SessionState(
            self.id, self.active_agent, list(self.messages), list(self.handoffs),
            json.loads(json.dumps(self.shared)), self.channel, self.version, self.turn,
            ViewSpec.from_dict(self.view.to_dict()), self.status, self.created_at,
            self.updated_at, dict(self.metadata),
            None if self.pending is None else _copied(self.pending),
            self.context, self.event_seq,
        )

    def header(self) -> dict[str, Any]:
        """Everything but the transcript and the records: the session row of a store.
        A pending approval assigned as a dict in its stored form is made typed here."""
        pending = self.pending
        if pending is not None:
            from .pending import pending_of

            self.pending = pending = pending_of(pending)
        return {
            "schema": SCHEMA, "id": self.id, "active_agent": self.active_agent,
            "shared": self.shared, "channel": self.channel, "version": self.version,
            "turn": self.turn, "view": self.view.to_dict(), "status": str(self.status),
            "created_at": self.created_at, "updated_at": self.updated_at,
            "metadata": self.metadata,
        } | ({} if pending is None else {"pending": pending.to_dict()}) | (
            {} if self.context is None else {"context": self.context})

    def to_dict(self) -> dict[str, Any]:
        """The whole session as JSON-ready data: its header (id, active agent, status,
        shared memory, typed context, view, version, turn, times, metadata, pending
        approval, `schema`), `messages` and `handoffs`. `from_dict` reads it back; a store's
        `export_session` is this plus the stored `events`."""
        d = self.header()
        d["messages"] = [m.to_dict() for m in self.messages]
        d["handoffs"] = [r.to_dict() for r in self.handoffs]
        return d

    def to_json(self) -> str:
        """`to_dict()` as JSON text (UTF-8 kept as is, not escaped)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SessionState:
        """A session from `to_dict()`'s data (an older schema is upgraded; one written by
        a newer handoffs is refused with `schema_too_new`)."""
        schema = d.get("schema", SCHEMA)
        if schema > SCHEMA:
            raise HandoffsError(
                f"This session was written by a newer handoffs (layout {schema}; this "
                f"library reads up to {SCHEMA}). Upgrade handoffs to read it.",
                code="schema_too_new",
            )
        pending = d.get("pending")
        return cls(
            id=d["id"],
            active_agent=d.get("active_agent"),
            messages=[message_from_dict(m) for m in d.get("messages", ())],
            handoffs=[HandoffRecord.from_dict(r) for r in d.get("handoffs", ())],
            shared=dict(d.get("shared", {})),
            channel=d.get("channel"),
            version=d.get("version", 0),
            turn=d.get("turn", 0),
            view=ViewSpec.from_dict(d.get("view", {})),
            status=SessionStatus(d.get("status", "idle")),
            created_at=d.get("created_at", 0.0),
            updated_at=d.get("updated_at", 0.0),
            metadata=dict(d.get("metadata", {})),
            pending=None if pending is None else _pending(pending),
            context=d.get("context"),
        )

    @classmethod
    def from_json(cls, text: str) -> SessionState:
        """A session from `to_json()`'s text."""
        return cls.from_dict(json.loads(text))

    def record(self, record_id: str) -> HandoffRecord | None:
        """The handoff record with this id (searched from the newest)."""
        for r in reversed(self.handoffs):
            if r.id == record_id:
                return r
        return None


def _pending(d: Mapping[str, Any]) -> PendingApproval:
    """A stored pending approval, typed (`core.pending`, imported only then)."""
    from .pending import PendingApproval

    return PendingApproval.from_dict(d)


def _copied(pending: PendingApproval) -> PendingApproval:
    return _pending(json.loads(json.dumps(pending.to_dict())))
