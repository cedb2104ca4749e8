"""Continuing a turn that waited for a person's approval (`approval.decide`).

The stored response runs from where it stopped, through the loop's own code: on the main
line, `continue_response`; when a delegate of the main line was the one waiting,
`continue_delegation` rebuilds the delegate's line as it was, lets it go on to its answer,
then runs the rest of the caller's response and lets the caller go on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from ...core.handoff import HandoffRecord
from ...core.messages import HandoffMark, ToolCall
from ...core.pending import CallDecision, PendingApproval
from ...models.base import ModelResponse
from ..decisions import handoffs
from ..decisions.approvals import stored_response
from ..decisions.asks import HandoffAsk, validation_error
from ..decisions.response import Calls
from ..state import Fail, Leg, Outcome, Pause, Transfer, Turn
from . import delegation, moves
from .loop import activate, after_delegations, respond
from .pause import suspend


async def continue_response(t: Turn, leg: Leg, response: ModelResponse,
                            decided: Mapping[str, CallDecision]) -> Outcome:
    """A response that waited for approval, now decided: run it, then go on working."""
    outcome = await respond(t, leg, response, decided)
    if outcome is None:
        outcome = await activate(t, leg)
    return outcome


async def continue_delegation(t: Turn, leg: Leg, pending: PendingApproval,
                              response: ModelResponse,
                              decided: Mapping[str, CallDecision]) -> Outcome:
    """A main-line response whose delegate waited for approval, now decided: the delegate
    goes on to its answer (its `response` continued), then the rest of the caller's
    response runs (its transfer, the response into the transcript), and the caller goes on."""
    caller = pending.caller
    assert caller is not None  # `decide` continues a delegation only with its caller
    own = stored_response(caller)
    calls = own.tool_calls
    results = caller.tool_results()
    marks: list[HandoffMark | None] = list(caller.marks)
    escalate = None if caller.escalate is None else Fail(*caller.escalate)
    record = None if pending.record is None else t.state.record(pending.record)
    if record is None:
        return Fail("invalid_history", "The delegation that waited for approval is not in "
                    "the session.", leg.agent.name, recoverable=False)
    i = caller.delegation
    ask, payload = _asked(t, leg, i, calls[i], record)
    sub = delegation.resumed_leg(t, leg, ask.route, record, payload,  # type: ignore[arg-type]
                                 pending.delegate_messages())
    t.emit("agent_started", {"agent": sub.agent.name, "display_name": sub.agent.label})
    text, fail = await delegation.finish(t, sub, record,
                                         await continue_response(t, sub, response, decided))
    if isinstance(fail, Pause):  # the delegate waits for another approval
        return suspend(t, leg, own, results, marks, i, fail, caller.transfer,
                       escalate, stored=True)
    moves.answer_call(t, leg, ask, results, marks, text, fail is not None, "delegated",
                      record.extra.get("task"))
    decision = handoffs.Decision()
    transfer = caller.transfer_record()
    if transfer is not None:
        j, planned = transfer
        decision.transfer_ask, target_payload = _asked(t, leg, j, calls[j], planned)
        decision.transfer = Transfer(decision.transfer_ask.route, planned,
                                     t.team[planned.target], target_payload)
    outcome = await after_delegations(t, leg, own, Calls(results, marks, escalate=escalate),
                                      decision)
    return outcome if outcome is not None else await activate(t, leg)


def _asked(t: Turn, leg: Leg, index: int, c: ToolCall,
           record: HandoffRecord) -> tuple[HandoffAsk, Any]:
    """The handoff request a stored record answered, and its payload, rebuilt."""
    route = leg.plan.routes_by_target.get(record.target)
    ask = HandoffAsk(index, c, record.target, route, record.reason)
    payload: Any = record.payload
    if route is not None and route.handoff.payload is not None and payload is not None:
        with contextlib.suppress(validation_error()):
            payload = route.handoff.payload.model_validate(payload)
    return ask, payload
