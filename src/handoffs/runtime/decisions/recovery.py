"""A turn that finds the one before it died: where it numbers its events, what it says,
and what becomes of a response that was continuing after a person's approval.

A turn dies unfinished when its process is killed, its task is cancelled from outside,
its lock is lost or its last commit fails: its user message is stored and the session
reads `interrupted`. The turn after it (a new message, the same message again,
`runner.resume`, or deciding again) first:

- numbers its events `TURN_EVENTS` past the session's last stored number, beyond any the
  dead turn may have shown live, so a number a client saw never goes to another event;
- says so: `run_interrupted` is its first event, stored with its first commit, before
  anything of it is shown, so a client that reconnects reads it where the dead turn's
  events would have been;
- settles a response that was continuing after an approval (`approval.decide` stores
  the decisions before any call runs): nothing of it runs again. Each call gets a result
  the model reads: a rejected call its rejection, every other call that its outcome is
  unknown (an approved tool may have run before the process died: at most once, never
  twice), and the agent goes on from there.

These decisions say how many numbers to skip (`skipped`) and what a continuing response
comes to (`settled`); the driver makes the turn and applies them (`driver.restart`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...core.messages import AssistantMessage, ToolCall, ToolResult
from ...core.session import SessionState
from ..state import TURN_EVENTS

if TYPE_CHECKING:
    from ...core.pending import PausedResponse, PendingApproval

REJECTED = ("A person did not approve this call of {tool!r}{why}. Do not retry it; tell "
            "the user or take another step.")
UNKNOWN = ("The turn stopped (its process ended) after a person decided on this response "
           "and before {tool!r} reported back: whether it ran is unknown. It is not run "
           "again on its own; check its effect before calling it again.")
DELEGATE_UNKNOWN = ("The turn stopped (its process ended) while {agent!r} worked on this "
                    "task after a person's decision: what it did is unknown, and it is not "
                    "run again on its own. Check before asking again.")


def rejected_text(tool: str, reason: str) -> str:
    """The result of a call a person rejected (`reason`: why, if they said)."""
    return REJECTED.format(tool=tool, why=f" ({reason})" if reason else "")


DIED = ("running", "interrupted")
"""The statuses of a session whose last turn died unfinished (read under its lock)."""


def continuing(pending: PendingApproval) -> bool:
    """Whether a waiting response has every decision: its continuation had started
    (the decisions are stored before it runs), so its process died during it."""
    decided = pending.decisions
    return all(c in decided for c in pending.waiting)


def skipped(state: SessionState) -> int:
    """How many event numbers to skip before storing events on a session (what every
    operation that stores events does): `TURN_EVENTS` past any the dead turn may have
    shown when its last turn died, else none."""
    return TURN_EVENTS if state.status in DIED else 0


class Settled:
    """A response that was continuing when its turn died, answered without running any
    of its calls: what goes into the transcript, and who goes on."""

    __slots__ = ("agent", "answered", "message", "results")

    def __init__(self, agent: str, message: AssistantMessage, results: list[ToolResult],
                 answered: list[tuple[ToolResult, bool]]) -> None:
        self.agent = agent
        """The agent whose response it was: the active agent from here on."""
        self.message = message
        """The response, into the transcript first."""
        self.results = results
        """Every call's result, in call order, after it."""
        self.answered = answered
        """The results given now (the others were known before the turn died), in call
        order, each with whether it is the client's (a `tool_result` event each)."""


def settled(pending: PendingApproval) -> Settled:
    """What a response that was continuing when its turn died comes to: every call
    answered without running any (a rejection, the client's result, or that its outcome
    is unknown)."""
    caller = pending.caller
    frame: PausedResponse = pending if caller is None else caller
    agent = frame.agent
    calls = frame.calls
    n = len(calls)
    marks: list[Any] = [None] * n if caller is None else list(caller.marks)
    known: list[Any] = [None] * n if caller is None else caller.tool_results()
    decisions = pending.decisions if caller is None else {}
    results: list[ToolResult] = []
    answered: list[tuple[ToolResult, bool]] = []
    for i, c in enumerate(calls):
        if known[i] is not None:
            results.append(known[i])
            continue
        d = decisions.get(c.id)
        if d is not None and d.result is not None:  # a client's tool: the client's result
            r = ToolResult(c.id, c.name, d.result, agent, d.is_error, marks[i])
            results.append(r)
            answered.append((r, True))
            continue
        if d is not None and not d.approved:
            text = rejected_text(c.name, d.reason)
        elif caller is not None and i == caller.delegation:
            text = DELEGATE_UNKNOWN.format(agent=pending.agent)
        else:
            text = UNKNOWN.format(tool=c.name)
        r = ToolResult(c.id, c.name, text, agent, True, marks[i])
        results.append(r)
        answered.append((r, False))
    message = AssistantMessage(frame.text, agent, tuple(
        ToolCall(c.id, c.name, c.arguments, marks[i]) for i, c in enumerate(calls)),
        frame.reasoning)
    return Settled(agent, message, results, answered)
