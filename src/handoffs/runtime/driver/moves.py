"""A response's handoff requests applied, as the decisions judge them
(`decisions.handoffs`): each request's `handoff_requested`, its refusal recorded and
said (`handoff_rejected`, its call's result) or its acceptance (a delegation's record; the
transfer's, once it settles: `complete_transfer`), and the main line moved to the target
(`move`: its view written, `agent_handoff`, `agent_changed`). Refusals and acceptances
are logged under `handoffs.runtime.handoffs`."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ...core.agent import Agent
from ...core.handoff import HandoffReason, HandoffRecord, context_json
from ...core.messages import HandoffMark, ToolResult
from ...core.policy import Rejection
from ...core.team import Route
from ...log import fields
from ...telemetry.config import captures
from ..decisions import converge
from ..decisions.asks import HandoffAsk
from ..decisions.handoffs import Decision, judge, record_for, result_for, view_for
from ..state import Fail, Leg, Transfer, Turn
from .tools import told

if TYPE_CHECKING:
    from ...core import event_data as ed

log = logging.getLogger("handoffs.runtime.handoffs")  # a stable name (docs/observability.md)


def judged(t: Turn, leg: Leg, asks: list[HandoffAsk], results: list[ToolResult | None],
           marks: list[HandoffMark | None]) -> Decision:
    """Every handoff request of one response, in call order, judged (`handoffs.judge`)
    and applied before the next is judged: refused ones get their result now, accepted
    delegations are recorded, the accepted transfer waits to settle."""
    name = leg.agent.name
    decision = Decision()
    for ask in asks:
        t.emit("handoff_requested", {"agent": name, "target": ask.target,
                                     "tool": ask.call.name, "call_id": ask.call.id,
                                     "reason": ask.explanation})
        verdict = judge(t, leg, ask, decision.transfer_ask)
        if not ask.returns and decision.transfer_ask is None:
            decision.transfer_ask = ask
        if isinstance(verdict, Rejection):
            reject(t, leg, ask, results, marks, verdict, decision)
        elif ask.returns:
            t.add_record(verdict.record)
            decision.delegations.append((ask, verdict.record, verdict.payload))
        else:  # recorded once its hook and summary succeed (driver.settle)
            decision.transfer = verdict
    return decision


def complete_transfer(t: Turn, leg: Leg, decision: Decision,
                      results: list[ToolResult | None], marks: list[HandoffMark | None]
                      ) -> Transfer | None:
    """The response's accepted transfer, once its hook and summary succeeded
    (`driver.settle.prepare`): its record and its call's result; then the refusals that
    waited for its record. On the main line the caller moves the session (`move`);
    inside a delegation the transfer changes who answers the delegation, here. None: the
    response has no transfer (its refusals are recorded), or it moved a delegation."""
    transfer = decision.transfer
    ask = decision.transfer_ask
    if transfer is None or ask is None:
        flush(t, decision)
        return None
    record = transfer.record
    t.add_record(record)
    if decision.later:
        flush(t, decision)
    target = transfer.target
    result = result_for(leg, ask, f"Transferred to {target.display_name or target.name}.",
                        False, "transferred")
    results[ask.index] = result
    mark = result.handoff
    if mark is not None:
        marks[ask.index] = mark
    else:  # a programmatic request: its tool ran, and its result is told
        told(t, result)
    if leg.main:
        return transfer
    name = leg.agent.name
    leg.switch(t.team.plan(target.name))
    leg.handed(record, transfer.payload, transfer.route)
    t.emit("agent_handoff", handoff_data(record, name, target.name))
    if log.isEnabledFor(logging.INFO):
        log_accepted(t, record)
    t.emit("agent_started", {"agent": target.name, "display_name": target.label})
    return None


def flush(t: Turn, decision: Decision) -> None:
    """Record the refusals that waited for the transfer's record."""
    later = decision.later
    if later:
        for record in later:
            t.add_record(record)
        later.clear()


def failed_after(t: Turn, leg: Leg, ask: HandoffAsk, record: HandoffRecord,
                 results: list[ToolResult | None], marks: list[HandoffMark | None],
                 code: str, message: str, exc: BaseException, decision: Decision) -> Fail:
    """A handoff that passed the policy but could not be completed: refused, and the
    agent that asked fails (the error-recovery rule then applies)."""
    refuse(t, leg, record, Rejection(code, message), exc)
    flush(t, decision)
    answer_call(t, leg, ask, results, marks, message, True, "rejected")
    return Fail(code, message, leg.agent.name, exception=exc)


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
    answer_call(t, leg, ask, results, marks, rejection.message, True, "rejected")


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


def answer_call(t: Turn, leg: Leg, ask: HandoffAsk, results: list[ToolResult | None],
                marks: list[HandoffMark | None], text: str, is_error: bool,
                mark: HandoffMark, task: str | None = None) -> None:
    """The request's call answered (`handoffs.result_for`): its result and its mark (how
    views replay it); a programmatic request's result is told (`tool_result`)."""
    result = result_for(leg, ask, text, is_error, mark, task)
    results[ask.index] = result
    if result.handoff is not None:
        marks[ask.index] = mark
    else:
        told(t, result)


def move(t: Turn, leg: Leg | None, record: HandoffRecord, target: Agent,
         route: Route | None, payload: Any = None) -> None:
    """Make `target` the active agent of the main line after an accepted handoff: write
    where its view starts (`handoffs.view_for`; no history is copied), and say so."""
    state = t.state
    previous = state.active_agent
    state.view = view_for(t, record, route)
    state.active_agent = target.name
    state.shared["handoff_context"] = context_json(record)
    if leg is not None:
        leg.handed(record, payload, route)
    t.emit("agent_handoff", handoff_data(record, record.source, target.name))
    if log.isEnabledFor(logging.INFO):
        log_accepted(t, record)
    t.emit("agent_changed", {
        "agent": target.name, "previous": previous,
        "display_name": target.display_name or target.name,
        "icon": target.icon, "color": target.color,
    })


def log_accepted(t: Turn, record: HandoffRecord) -> None:
    """An accepted handoff at INFO: who handed to whom, of which kind, and why (the
    requester's reason only when content is captured, as on spans: it may hold personal
    data; an error recovery's, which the runtime writes, always). Its callers ask
    `log.isEnabledFor(logging.INFO)` first: a handoff logs nothing more otherwise."""
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
