"""A remote agent's step, as decisions: what it is sent (`outgoing`: the A2A message made
of its view, continuing the task it left waiting for input) and what its reply means for
the turn (`replied`: an answer, an escalation to the team's person, or a failure with a
stable code, which the error-recovery rule hands to the fallback). The task a remote
agent left waiting is kept in the session (`SessionState.metadata["a2a_tasks"]`), so the
next message continues it. Pure: the call itself is the executor's (`t.fx.remote`), and
the driver (`driver.remote`) applies what a reply comes to (`Replied`).
"""

from __future__ import annotations

from typing import Any

from ...core.handoff import HandoffReason, HandoffRecord, handoff_note
from ...core.messages import AssistantMessage, Message, Note, ToolResult, UserMessage
from ...core.remote import INTERRUPTED, RemoteReply, RemoteRequest
from ..state import Answer, Fail, Leg, Outcome, Transfer, Turn, turn_text
from .views import window

TASKS = "a2a_tasks"
"""The session metadata key of the tasks remote agents left waiting: agent -> task id."""
BRIEFED = "a2a_briefed"
"""The session metadata key of the handoff each remote agent was last told about: agent
-> record id. A new task carries the handoff (its note) only when the agent has not been
told about it yet, so the note comes once, right after the handoff."""
TOKENS = "a2a_tokens"
"""The session metadata key of the tokens remote teams gave this conversation (a team
served with `handoffs serve --a2a` opens a context with one): agent -> token."""

_FAILED = {"failed": ("remote_failed", "failed"),
           "canceled": ("remote_failed", "had its task cancelled"),
           "rejected": ("remote_rejected", "rejected the task")}


def outgoing(t: Turn, leg: Leg) -> RemoteRequest:
    """The message for the leg's remote agent: the latest user message (a delegate: its
    task) as text; for a new task also, as data, the handoff that brought the agent in
    (source, reason, kind, payload, and the note a local agent's system text would carry)
    and the conversation before that message as the route's history view shows it, from
    the agent's own last answer in this context on (the remote side has seen the rest)."""
    name = leg.agent.name
    state = t.state
    task = (state.metadata.get(TASKS) or {}).get(name)
    token = (state.metadata.get(TOKENS) or {}).get(name)
    view = window(t, leg)
    last = _last_user(view)
    text = view[last].text if last is not None else turn_text(t)
    if task is not None:
        return RemoteRequest(name, state.id, task, text, None, t.fx.new_id(), token)
    # What the agent said last in this context it has seen already, and all before it.
    seen = next((i + 1 for i in range(len(view) - 1, -1, -1)
                 if isinstance(view[i], AssistantMessage) and view[i].agent == name), 0)
    data: dict[str, Any] = {"history": [m for m in map(_rendered, view[seen:last]) if m]}
    record = leg.record
    briefed = state.metadata.get(BRIEFED) or {}
    if record is not None and briefed.get(name) != record.id:
        data["handoff"] = {"source": record.source, "reason": str(record.reason),
                           "kind": "delegation" if record.returns else "transfer",
                           "explanation": record.explanation, "payload": record.payload,
                           "note": handoff_note(record)}
    return RemoteRequest(name, state.id, None, text, data, t.fx.new_id(), token)


def _last_user(view: Any) -> int | None:
    for i in range(len(view) - 1, -1, -1):
        if isinstance(view[i], UserMessage):
            return i
    return None


def _rendered(m: Message) -> dict[str, str] | None:
    """A message of the view as the remote side gets it: who said what."""
    if isinstance(m, UserMessage):
        return {"role": "user", "text": m.text}
    if isinstance(m, AssistantMessage) and m.text:
        return {"role": "agent", "agent": m.agent, "text": m.text}
    if isinstance(m, ToolResult | Note):
        return None
    return None


def failed_call(leg: Leg, exc: BaseException) -> Fail:
    """The call raised (its code: `remote_unreachable`, `remote_timeout`, `remote_rejected`,
    `remote_failed`): the agent failed, and the fallback may take over."""
    code = getattr(exc, "code", None) or "remote_failed"
    return Fail(code, str(exc), leg.agent.name, exception=exc)


class Replied:
    """What a remote agent's reply comes to, for the driver to apply: the session's
    memory of the agent's task, handoff and token, what the agent said, the outcome."""

    __slots__ = ("briefed", "outcome", "said", "tasks", "tokens")

    def __init__(self, outcome: Outcome, tasks: dict[str, str],
                 briefed: dict[str, str] | None, tokens: dict[str, str] | None,
                 said: str = "") -> None:
        self.outcome = outcome
        """The activation's outcome (a `Transfer`'s record is new: the driver adds it)."""
        self.tasks = tasks
        """The tasks remote agents leave waiting after this reply (`TASKS`; empty: the
        key goes)."""
        self.briefed = briefed
        """The handoffs remote agents were told about (`BRIEFED`; None: unchanged)."""
        self.tokens = tokens
        """The tokens remote teams gave this conversation (`TOKENS`; None: unchanged)."""
        self.said = said
        """The agent's text, into its line (a `message` event) before the outcome ("":
        nothing)."""


def replied(t: Turn, leg: Leg, reply: RemoteReply) -> Replied:
    """What the remote agent's reply comes to. `completed` and `input-required` are its
    answer (the task waiting for input is kept, so the agent stays and the next message
    continues it); `auth-required` hands the conversation to the team's person when it
    has one (the task kept for after); a task `failed`, `canceled` or `rejected` is the
    agent's failure with its code."""
    name = leg.agent.name
    state = t.state
    tasks = dict(state.metadata.get(TASKS) or {})
    # Only the main line's question is the user's to answer: a delegate's question goes
    # back to the agent that asked, and its next delegation is a new task.
    if reply.state in INTERRUPTED and reply.task_id and leg.main:
        tasks[name] = reply.task_id
    else:
        tasks.pop(name, None)
    briefed = None if leg.record is None else {**(state.metadata.get(BRIEFED) or {}),
                                               name: leg.record.id}
    tokens = None if not reply.token else {**(state.metadata.get(TOKENS) or {}),
                                           name: reply.token}
    text = reply.text
    if reply.state in _FAILED:
        code, words = _FAILED[reply.state]
        why = f": {text}" if text else "."
        return Replied(Fail(code, f"Remote agent {name!r} {words}{why}", name),
                       tasks, briefed, tokens)
    if reply.state == "auth-required":
        person = next((a for a in t.team.agents if a.is_human and a.enabled), None)
        if person is None or not leg.main:
            return Replied(Fail("remote_rejected", f"Remote agent {name!r} needs the user "
                                "to authenticate, and no person of the team can take "
                                f"over: {text}", name), tasks, briefed, tokens)
        record = HandoffRecord(
            id=t.fx.new_id(), source=name, target=person.name,
            reason=HandoffReason.ESCALATION,
            explanation=f"{name} needs the user to authenticate: {text}",
            at=t.fx.now(), turn=state.turn,
            extra={"remote": {"state": reply.state, "task_id": reply.task_id}})
        return Replied(Transfer(None, record, person, None), tasks, briefed, tokens, text)
    if reply.state not in ("completed", "input-required"):
        return Replied(Fail("remote_failed", f"Remote agent {name!r} ended its answer in "
                            f"state {reply.state!r}, which is neither an answer nor a "
                            "question.", name), tasks, briefed, tokens)
    if not text.strip():
        return Replied(Fail("remote_failed", f"Remote agent {name!r} answered with "
                            "nothing.", name), tasks, briefed, tokens)
    return Replied(Answer(text, name), tasks, briefed, tokens, text)
