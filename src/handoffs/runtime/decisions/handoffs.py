"""Deciding a response's handoff requests: asks → policy → records → moves.

Each function reads the turn and returns what happens; the driver (`driver.moves`)
applies it, in call order: `judge` says, of one request, the accepted handoff (a
`Transfer`, a delegation when its record `returns`) or the `Rejection`; `record_for` is
its record, `result_for` its call's result, `view_for` where the target's view of the
transcript starts once the main line moves.

Where DESIGN.md's short form needed a precise reading:
- "One handoff per response" applies to one-way transfers. Delegations (`returns=True`)
  in the same response are each validated and run concurrently before the transfer; only
  a second one-way request is refused (`multiple_handoffs`).
- Accepted one-way handoff calls are never replayed to a model. Refused ones are: the
  refusal is the call's result, and the model must read it to act on it. They stay a valid
  call/result pair in every view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...core.handoff import Handoff, HandoffReason, HandoffRecord
from ...core.history import last_user_index
from ...core.messages import HandoffMark, ToolResult
from ...core.policy import MULTIPLE_HANDOFFS, HandoffRequest, Rejection
from ...core.session import ViewSpec
from ...core.team import Route
from ...core.usage import Usage
from ..state import Leg, Transfer, Turn, turn_text
from .asks import HandoffAsk, payload_json
from .views import enabled, run_context

_LLM = HandoffReason.LLM
_PROGRAMMATIC = HandoffReason.PROGRAMMATIC


@dataclass(slots=True)
class Decision:
    """The accepted requests of one response, as the driver gathers them from `judge`:
    delegations to run, and at most one transfer."""

    delegations: list[tuple[HandoffAsk, HandoffRecord, Any]] = field(default_factory=list)
    transfer: Transfer | None = None
    transfer_ask: HandoffAsk | None = None
    """The response's first one-way request (accepted or not): a second is refused."""
    later: list[HandoffRecord] | None = None
    """Refused requests made after the accepted transfer, recorded after it (records keep
    the order of the response's calls, and the transfer's is written when it settles)."""


def judge(t: Turn, leg: Leg, ask: HandoffAsk, first: HandoffAsk | None
          ) -> Transfer | Rejection:
    """One handoff request of a response, as of the requests before it (the driver
    applies each verdict before the next request is judged): the accepted handoff, its
    record made (a delegation's with its task), or why it is refused. `first`: the
    response's one-way request before this one, if any (one transfer per response)."""
    if first is not None and not ask.returns:
        return Rejection(
            MULTIPLE_HANDOFFS,
            f"Only one handoff per response: the handoff to {first.target!r} came "
            f"first, so this one to {ask.target!r} was not made.")
    name = leg.agent.name
    team = t.team
    payload, payload_error = ask.payload_of()
    route = ask.route
    if payload_error is not None and route is not None:
        payload_error = f"{payload_error} A call that works: {route.example}."
    h = route.handoff if route is not None else None
    rejection = team.policy.review(team, HandoffRequest(
        name, ask.target, h, t.accepted, payload_error, leg.depth,
        h is None or h.enabled is True or enabled(h, run_context(t, leg)), leg.line),
        t.state)
    if rejection is not None:
        return rejection
    record = record_for(t, name, ask, payload, True, None, leg.line, leg.spent)
    target = team[ask.target]
    if target.is_human and record.reason is _LLM:
        record.reason = HandoffReason.ESCALATION
    if ask.returns:
        task = ask.args.get("task")
        record.extra["task"] = (task if isinstance(task, str) and task.strip()
                                else ask.explanation or turn_text(t))
    return Transfer(route, record, target, payload)


def record_for(t: Turn, source: str, ask: HandoffAsk, payload: Any, accepted: bool,
               rejection: Rejection | None = None, line: str | None = None,
               spent: Usage | None = None) -> HandoffRecord:
    """The record of one request, accepted or refused (`spent`: what the source spent so
    far, copied: it goes on counting)."""
    call = ask.call
    record = HandoffRecord(
        t.fx.new_id(), source, ask.target, ask.reason, ask.explanation,
        None if payload is None else payload_json(payload), accepted,
        rejection.code if rejection else None, rejection.message if rejection else "",
        t.fx.now(), t.state.turn, call.name, call.id, ask.returns,
    )
    if spent is not None:
        record.usage = spent.copy()
    if line is not None:
        record.extra["line"] = line  # made inside that delegation: its loop rule's line
    if ask.ignored:
        record.extra["ignored_arguments"] = sorted(set(ask.ignored))
    return record


def result_for(leg: Leg, ask: HandoffAsk, text: str, is_error: bool, mark: HandoffMark,
               task: str | None = None) -> ToolResult:
    """The call's result, marked as views replay it (`handoff`; None for a programmatic
    request, whose tool ran: its handoff is reported by `agent_handoff` or
    `handoff_rejected`). A delegation's result names its delegate and the `task` it was
    given (its own answer, in its `own_tools` view of later turns)."""
    c = ask.call
    if ask.reason is _PROGRAMMATIC:
        return ToolResult(c.id, c.name, text, leg.agent.name, is_error)
    delegated = mark == "delegated"
    return ToolResult(c.id, c.name, text, leg.agent.name, is_error, mark,
                      ask.target if delegated else None, task if delegated else None)


def view_for(t: Turn, record: HandoffRecord, route: Route | None) -> ViewSpec:
    """Where the view of the main line's new agent starts after an accepted handoff
    (`record`, by `route`; None: the runtime's own, which sees everything): three
    numbers over the transcript, no history copied."""
    pivot = len(t.state.messages)
    if route is not None:  # `history_of`, inlined: this runs for every handoff
        mode = route.handoff.history
        if mode is None:
            mode = t.runner.history
    else:
        mode = "full"
    if mode == "own_tools" or mode == "conversation":
        return ViewSpec(mode, 0, pivot, record.id)
    if callable(mode):
        return ViewSpec("custom", 0, pivot, record.id)
    if mode == "full":  # (the pivot places the handoff's note)
        return ViewSpec("full", 0, pivot, record.id)
    if mode == "last_user":
        start = t.user_index if t.user_index >= 0 else last_user_index(t.state.messages)
        return ViewSpec("last_user", start, pivot, record.id)
    return ViewSpec(mode, pivot, pivot, record.id)  # none, summary


HANDOFF_PREFIXES = ("transfer_to_", "ask_")
"""How the default handoff tools are named: a call named so is read as a handoff request
even when the agent has no such tool (a model that calls `transfer_to_policy` on a
delegation route, or a route it does not have, is understood, and the policy decides)."""


def target_of(t: Turn, tool_name: str) -> str:
    """The agent a `transfer_to_*` or `ask_*` name points at, even if no route declares it."""
    for a in t.team.agents:
        if tool_name in (Handoff.default_tool_name(a.name), Handoff.default_ask_name(a.name)):
            return a.name
    for prefix in HANDOFF_PREFIXES:
        if tool_name.startswith(prefix):
            return tool_name[len(prefix):]
    return tool_name
