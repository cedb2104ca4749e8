"""Deciding a response's handoff requests: asks → policy → records → moves.

Where DESIGN.md's short form needed a precise reading:
- "One handoff per response" applies to one-way transfers. Delegations (`returns=True`)
  in the same response are each validated and run concurrently before the transfer; only
  a second one-way request is refused (`multiple_handoffs`).
- Accepted one-way handoff calls are never replayed to a model. Refused ones are: the
  refusal is the call's result, and the model must read it to act on it. They stay a valid
  call/result pair in every view.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.agent import Agent
from ...core.handoff import Handoff, HandoffReason, HandoffRecord, context_json
from ...core.history import last_user_index
from ...core.messages import HandoffMark, ToolResult
from ...core.policy import MULTIPLE_HANDOFFS, HandoffRequest, Rejection
from ...core.session import ViewSpec
from ...core.team import Route
from ...core.usage import Usage
from ...log import fields
from ...telemetry.config import captures
from ..state import Fail, Leg, Transfer, Turn, turn_text
from . import converge
from .asks import HandoffAsk, payload_json
from .views import ctx_of, enabled

if TYPE_CHECKING:
    from ...core import event_data as ed

log = logging.getLogger("handoffs.runtime.handoffs")  # a stable name (docs/observability.md)

_LLM = HandoffReason.LLM
_PROGRAMMATIC = HandoffReason.PROGRAMMATIC


@dataclass(slots=True)
class Decision:
    """The accepted requests of one response: delegations to run, and at most one transfer."""

    delegations: list[tuple[HandoffAsk, HandoffRecord, Any]] = field(default_factory=list)
    transfer: Transfer | None = None
    transfer_ask: HandoffAsk | None = None
    later: list[HandoffRecord] | None = None
    """Refused requests made after the accepted transfer, recorded after it (records keep
    the order of the response's calls, and the transfer's is written when it settles)."""

    def flush(self, t: Turn) -> None:
        """Record the refusals that waited for the transfer's record."""
        later = self.later
        if later:
            for record in later:
                t.add_record(record)
            later.clear()


def judge_asks(t: Turn, leg: Leg, asks: list[HandoffAsk], results: list[ToolResult | None],
               marks: list[HandoffMark | None]) -> Decision:
    """Validate every handoff request of one response, in call order; refused ones get
    their result now, accepted ones are recorded."""
    name = leg.agent.name
    state = t.state
    team = t.team
    policy = team.policy
    decision = Decision()
    for ask in asks:
        t.emit("handoff_requested", {"agent": name, "target": ask.target,
                                     "tool": ask.call.name, "call_id": ask.call.id,
                                     "reason": ask.explanation})
        is_delegation = ask.route is not None and ask.route.handoff.returns
        if not is_delegation:
            first = decision.transfer_ask
            if first is not None:
                reject(t, leg, ask, results, marks, Rejection(
                    MULTIPLE_HANDOFFS,
                    f"Only one handoff per response: the handoff to {first.target!r} came "
                    f"first, so this one to {ask.target!r} was not made.",
                ), decision)
                continue
            decision.transfer_ask = ask
        payload, payload_error = ask.payload_of()
        if payload_error is not None and ask.route is not None:
            payload_error = f"{payload_error} A call that works: {ask.route.example}."
        h = ask.route.handoff if ask.route is not None else None
        rejection = policy.review(team, HandoffRequest(
            name, ask.target, h, t.accepted, payload_error, leg.depth,
            h is None or h.enabled is True or enabled(h, ctx_of(t, leg)), leg.line), state)
        if rejection is not None:
            reject(t, leg, ask, results, marks, rejection, decision)
            continue
        record = record_for(t, name, ask, payload, True, None, leg.line, leg.spent)
        target = team[ask.target]
        if target.is_human and record.reason is _LLM:
            record.reason = HandoffReason.ESCALATION
        if is_delegation:
            task = ask.args.get("task")
            record.extra["task"] = (task if isinstance(task, str) and task.strip()
                                    else ask.explanation or turn_text(t))
            t.add_record(record)
            decision.delegations.append((ask, record, payload))
        else:  # recorded once its hook and summary succeed (driver.settle)
            decision.transfer = Transfer(ask.route, record, target, payload)
    return decision


def complete_transfer(t: Turn, leg: Leg, decision: Decision,
                      results: list[ToolResult | None], marks: list[HandoffMark | None]
                      ) -> Transfer | None:
    """The response's accepted transfer, once its hook and summary succeeded
    (`driver.settle.prepare`): its record and its call's result; then the refusals that
    waited for its record. On the main line the caller moves the session; inside a
    delegation the transfer changes who answers the delegation, here. None: the response
    has no transfer (its refusals are recorded), or it moved a delegation."""
    transfer = decision.transfer
    ask = decision.transfer_ask
    if transfer is None or ask is None:
        decision.flush(t)
        return None
    t.add_record(transfer.record)
    decision.flush(t)
    target = transfer.target
    result_for(t, leg, ask, results, marks,
               f"Transferred to {target.display_name or target.name}.", False, "transferred")
    if leg.main:
        return transfer
    name = leg.agent.name
    leg.switch(t.team.plan(transfer.target.name))
    leg.handed(transfer.record, transfer.payload, transfer.route)
    t.emit("agent_handoff", handoff_data(transfer.record, name, transfer.target.name))
    log_accepted(t, transfer.record)
    t.emit("agent_started", {"agent": transfer.target.name,
                             "display_name": transfer.target.label})
    return None


def failed_after(t: Turn, leg: Leg, ask: HandoffAsk, record: HandoffRecord,
                  results: list[ToolResult | None], marks: list[HandoffMark | None],
                  code: str, message: str, exc: BaseException, decision: Decision) -> Fail:
    """A handoff that passed the policy but could not be completed: refused, and the
    agent that asked fails (the error-recovery rule then applies)."""
    refuse(t, leg, record, Rejection(code, message), exc)
    decision.flush(t)
    result_for(t, leg, ask, results, marks, message, True, "rejected")
    return Fail(code, message, leg.agent.name, exception=exc)


def refuse(t: Turn, leg: Leg, record: HandoffRecord, rejection: Rejection,
           exc: BaseException | None = None, later: list[HandoffRecord] | None = None
           ) -> None:
    """Mark a record refused (adding it to the turn if it is not there yet, or to
    `later`) and say so."""
    if record.accepted and record in t.records:
        t.accepted -= 1
    record.accepted = False
    record.rejection = rejection.code
    record.message = rejection.message
    if later is not None:
        later.append(record)
    elif record not in t.records:
        t.add_record(record)
    t.emit("handoff_rejected", {"agent": leg.agent.name, "target": record.target,
                                "code": rejection.code, "message": rejection.message,
                                "record_id": record.id})
    t.refusals.append(rejection.message)
    leg.hidden, leg.last_refusal = converge.refused(leg, record.target, rejection.code)
    state = t.state
    log.log(logging.WARNING if exc is not None else logging.INFO,
            "handoff %s -> %s refused (%s): %s", record.source, record.target,
            rejection.code, rejection.message, exc_info=exc,
            extra=fields(state.id, state.turn, leg.agent.name))


def log_accepted(t: Turn, record: HandoffRecord) -> None:
    """An accepted handoff at INFO: who handed to whom, of which kind, and why (the
    requester's reason only when content is captured, as on spans: it may hold personal
    data; an error recovery's, which the runtime writes, always)."""
    if log.isEnabledFor(logging.INFO):
        state = t.state
        why = record.explanation
        if record.reason is not HandoffReason.ERROR_RECOVERY and not captures(t.runner):
            why = ""
        log.info("handoff %s -> %s accepted (%s%s)%s", record.source, record.target,
                 record.reason.value, ", delegation" if record.returns else "",
                 f": {why[:200]}" if why else "",
                 extra=fields(state.id, state.turn, record.source))


def handoff_data(record: HandoffRecord, source: str, target: str,
                 returns: bool = False) -> ed.AgentHandoff:
    """The `agent_handoff` event's fields (`usage`: what the source spent, when known)."""
    data: ed.AgentHandoff = {
        "source": source, "target": target, "reason": record.reason,
        "explanation": record.explanation, "record_id": record.id, "returns": returns}
    if record.usage is not None:
        data["usage"] = record.usage.to_dict()
    return data


def record_for(t: Turn, source: str, ask: HandoffAsk, payload: Any, accepted: bool,
               rejection: Rejection | None = None, line: str | None = None,
               spent: Usage | None = None) -> HandoffRecord:
    """The record of one request, accepted or refused (`spent`: what the source spent so
    far, copied: it goes on counting)."""
    route = ask.route
    call = ask.call
    record = HandoffRecord(
        t.fx.new_id(), source, ask.target, ask.reason, ask.explanation,
        None if payload is None else payload_json(payload), accepted,
        rejection.code if rejection else None, rejection.message if rejection else "",
        t.fx.now(), t.state.turn, call.name, call.id,
        route is not None and route.handoff.returns,
    )
    if spent is not None:
        record.usage = spent.copy()
    if line is not None:
        record.extra["line"] = line  # made inside that delegation: its loop rule's line
    if ask.ignored:
        record.extra["ignored_arguments"] = sorted(set(ask.ignored))
    return record


def reject(t: Turn, leg: Leg, ask: HandoffAsk, results: list[ToolResult | None],
           marks: list[HandoffMark | None], rejection: Rejection,
           decision: Decision | None = None) -> None:
    """Record a refused request and give the model the refusal as the call's result
    (recorded after the response's accepted transfer, if it has one)."""
    payload, _ = ask.payload_of()
    later = None
    if decision is not None and decision.transfer is not None:
        later = decision.later
        if later is None:
            later = decision.later = []
    refuse(t, leg, record_for(t, leg.agent.name, ask, payload, False, rejection, leg.line,
                              leg.spent),
           rejection, later=later)
    result_for(t, leg, ask, results, marks, rejection.message, True, "rejected")


def result_for(t: Turn, leg: Leg, ask: HandoffAsk, results: list[ToolResult | None],
               marks: list[HandoffMark | None], text: str, is_error: bool,
               mark: HandoffMark, task: str | None = None) -> None:
    """The call's result; a model's handoff call is also marked (how views replay it).
    A delegation's result names its delegate and the `task` it was given (its own
    answer, in its `own_tools` view of later turns)."""
    c = ask.call
    programmatic = ask.reason is _PROGRAMMATIC
    if not programmatic:
        marks[ask.index] = mark
    delegated = mark == "delegated" and not programmatic
    results[ask.index] = ToolResult(c.id, c.name, text, leg.agent.name, is_error,
                                    None if programmatic else mark,
                                    ask.target if delegated else None,
                                    task if delegated else None)
    if programmatic:
        # The tool ran; its handoff is reported by agent_handoff / handoff_rejected.
        t.emit("tool_result", {"agent": leg.agent.name, "tool": c.name, "call_id": c.id,
                               "text": text, "is_error": is_error})


def move(t: Turn, leg: Leg | None, record: HandoffRecord, target: Agent,
         route: Route | None, payload: Any = None) -> None:
    """Make `target` the active agent of the main line after an accepted handoff: write
    where its view starts (no history is copied), and say so."""
    state = t.state
    previous = state.active_agent
    pivot = len(state.messages)
    if route is not None:  # `history_of`, inlined: this runs for every handoff
        mode = route.handoff.history
        if mode is None:
            mode = t.runner.history
    else:
        mode = "full"
    if mode == "own_tools" or mode == "conversation":
        spec = ViewSpec(mode, 0, pivot, record.id)
    elif callable(mode):
        spec = ViewSpec("custom", 0, pivot, record.id)
    elif mode == "full":  # (the pivot places the handoff's note)
        spec = ViewSpec("full", 0, pivot, record.id)
    elif mode == "last_user":
        start = t.user_index if t.user_index >= 0 else last_user_index(state.messages)
        spec = ViewSpec("last_user", start, pivot, record.id)
    else:  # none, summary
        spec = ViewSpec(mode, pivot, pivot, record.id)
    state.view = spec
    state.active_agent = target.name
    state.shared["handoff_context"] = context_json(record)
    if leg is not None:
        leg.handed(record, payload, route)
    t.emit("agent_handoff", handoff_data(record, record.source, target.name))
    log_accepted(t, record)
    t.emit("agent_changed", {
        "agent": target.name, "previous": previous,
        "display_name": target.display_name or target.name,
        "icon": target.icon, "color": target.color,
    })


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
