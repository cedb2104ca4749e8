"""The operator's queue: the customers waiting for a person, oldest first, each with how
long it has waited and why (the escalation that brought a human agent in, or the tool
calls that wait for approval). Copies of a conversation made by going back in it (a fork,
a replay's fork, what a rewind kept) are the operator's own, never a customer waiting:
they are left out."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.session import SessionState
from ..core.team import Team

WAITING = ("waiting_for_human", "waiting_for_approval")
"""The statuses a person must act on."""

COPIES = ("forked_from", "rewound_from")
"""Metadata that marks a session as a copy made by going back (`runtime.timetravel`)."""

LIMIT = 1000
"""At most this many waiting sessions are read per status (a queue longer than that is
not one a person works through from a page)."""


@dataclass(slots=True, frozen=True)
class Waiting:
    """One customer waiting for a person."""

    id: str
    """The session."""
    status: str
    """`waiting_for_human` or `waiting_for_approval`."""
    agent: str
    """Who holds the session: the human agent, or the agent whose call waits."""
    reason: str
    """`escalation` (a human agent holds it) or `approval` (tool calls wait)."""
    since: float
    """When the wait began: the escalation's time, or the last update of a session whose
    calls wait (Unix seconds)."""
    source: str | None = None
    """For an escalation: the agent that handed the conversation to the person."""
    explanation: str = ""
    """For an escalation: the reason its handoff gave (empty when it gave none)."""
    kind: str | None = None
    """For an escalation: how it came about (the record's `reason`: `llm`,
    `user_request`, ...)."""
    tools: tuple[str, ...] = ()
    """For an approval: the tools whose calls wait, in order."""
    turn: int = 0
    """The session's turns so far."""
    messages: int = 0
    """The session's messages so far."""

    def to_dict(self, now: float) -> dict[str, Any]:
        """The entry as JSON, with `waited`: seconds from `since` to `now`."""
        return {"id": self.id, "status": self.status, "agent": self.agent,
                "reason": self.reason, "since": self.since,
                "waited": max(0.0, now - self.since), "source": self.source,
                "explanation": self.explanation, "kind": self.kind,
                "tools": list(self.tools), "turn": self.turn, "messages": self.messages}


def waiting(team: Team, state: SessionState) -> Waiting | None:
    """Why `state` waits for a person, or None when it does not (or is a copy)."""
    if state.status not in WAITING or any(k in state.metadata for k in COPIES):
        return None
    agent = state.active_agent or team.entry
    sid, status, turn, count = state.id, state.status, state.turn, len(state.messages)
    if status == "waiting_for_approval":
        pending = state.pending
        if pending is None:
            return Waiting(sid, status, agent, "approval", state.updated_at, turn=turn,
                           messages=count)
        calls = {c.id: c.name for c in pending.calls}
        return Waiting(sid, status, pending.agent or agent, "approval", state.updated_at,
                       tools=tuple(calls.get(cid, "") for cid in pending.waiting),
                       turn=turn, messages=count)
    human = team.get(agent)
    escalation = next((r for r in reversed(state.handoffs) if r.accepted
                       and r.target == agent and human is not None and human.is_human), None)
    if escalation is None:  # a session started with a human agent
        return Waiting(sid, status, agent, "escalation", state.created_at, turn=turn,
                       messages=count)
    return Waiting(sid, status, agent, "escalation", escalation.at, escalation.source,
                   escalation.explanation, escalation.reason.value, turn=turn,
                   messages=count)

async def queue(team: Team, list_sessions: Callable[..., Awaitable[Sequence[Any]]],
                load: Callable[[str], Awaitable[SessionState | None]]) -> list[Waiting]:
    """Every customer waiting for a person, oldest first (the store's `list_sessions`
    and `load`)."""
    found: list[Waiting] = []
    for status in WAITING:
        for summary in await list_sessions(LIMIT, 0, status=status):
            state = await load(summary.id)
            entry = waiting(team, state) if state is not None else None
            if entry is not None:
                found.append(entry)
    found.sort(key=lambda w: (w.since, w.id))
    return found
