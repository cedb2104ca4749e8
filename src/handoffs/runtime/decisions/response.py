"""What a model's response means for the turn, as decisions: DESIGN.md's step 3 after
the model answered. An answer in words (checked: delivered, or `converge.Again`:
feedback), a provider's failure, the calls sorted into ordinary tools, handoff requests
and unknown tools, a person's decisions applied, the tools' outcomes. A failure handed
to the team's fallback or given up, whether a move of the main line ends the turn, and
how the active agent got the conversation. Each returns what it decides and changes
nothing: the driver (`driver.loop`) puts the response into the line, says the events,
adds the records, sets the counters and moves the line.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...core.handoff import HandoffReason, HandoffRecord
from ...core.messages import (
    AssistantMessage,
    HandoffMark,
    Message,
    Note,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ...core.output import OUTPUT_ATTEMPTS, output_feedback, output_json, parse_output
from ...core.session import SessionState
from ...core.team import Route
from ...core.tools import HandoffTo, Tool
from ...errors import HandoffsError, ModelError
from ...models.base import Model, ModelResponse
from ..state import Answer, Fail, Leg, Transfer, Turn
from ..state.result import RunStatus
from . import converge, handoffs, truncation
from .asks import HandoffAsk, validation_error
from .converge import Again
from .recovery import rejected_text
from .truncation import LENGTH, CutCall

_LLM = HandoffReason.LLM
_PROGRAMMATIC = HandoffReason.PROGRAMMATIC

EMPTY_RESPONSE_FEEDBACK = (
    "Your last response was empty. Answer the user, call a tool, or hand off."
)
IN_DELEGATION = ("{tool!r} needs a person's approval, which this delegated task cannot wait "
                 "for; answer your caller without it (the caller may call it itself).")

if TYPE_CHECKING:
    from ...core.pending import CallDecision


def no_model(t: Turn, leg: Leg, model: Model | None) -> Fail | None:
    """Why the leg's agent cannot be asked now (no model, `max_steps` reached), or None."""
    name = leg.agent.name
    if model is None:
        return Fail("no_model", f"{name} has no model and cannot answer here.",
                    name, recoverable=False)
    if t.steps >= t.max_steps:
        return Fail(
            "max_steps",
            f"The turn reached max_steps ({t.max_steps} model calls) without an answer.",
            name, recoverable=False,
        )
    return None


def model_failed(t: Turn, leg: Leg, exc: Exception) -> Fail | Again:
    """A model call that raised: the agent's failure (with its code), or, when the
    provider refused the model's own output (`malformed_output`), feedback (`Again`)."""
    name = leg.agent.name
    if isinstance(exc, ModelError):
        if exc.code == converge.MALFORMED_OUTPUT:  # the model's fault: feedback
            return converge.malformed(t, leg, str(exc))
        return Fail(exc.code, str(exc), name, exception=exc)
    if isinstance(exc, HandoffsError):
        return Fail(exc.code, str(exc), name, recoverable=False, exception=exc)
    return Fail("model_error", f"{type(exc).__name__}: {exc}", name, exception=exc)


def model_name(model: Model) -> str:
    """The name a model's usage is counted under when its response names none."""
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else type(model).__name__


def answered(t: Turn, leg: Leg, response: ModelResponse) -> Answer | Again:
    """A response with no calls (and not cut, or cut and delivered: `truncation`): the
    agent's answer, which the driver puts into its line and says, or `Again`: feedback,
    and the agent is asked again or fails.

    An empty answer is feedback; an answer held back (a narrated handoff, a forced call
    not made, a refusal echoed, a call written as text: `converge`) is asked again; an
    agent with an output type must answer with it (three tries in an activation,
    counted on `Leg.invalid`). The answer keeps the response's reasoning state
    (`AssistantMessage.reasoning`), for its provider to get back."""
    name = leg.agent.name
    output = leg.plan.output
    text = response.text
    if not text.strip():
        return converge.no_progress(t, leg, (Note(EMPTY_RESPONSE_FEEDBACK, name,
                                                  to_model=True),))
    if output is None:
        held = converge.held_back(t, leg, text, response.reasoning)
        if held is not None:
            return held
        return Answer(text, name)
    data, problems = parse_output(output, text)
    if problems is None:
        return Answer(output_json(data), name, data)
    said = AssistantMessage(text, name, (), response.reasoning)  # kept, not delivered
    invalid = leg.invalid + 1
    if invalid >= OUTPUT_ATTEMPTS:
        return Again(said=said, invalid=invalid, fail=Fail(
            "invalid_output", f"{name} gave no valid {output.name} in {invalid} answers; "
            f"the last: {problems}", name))
    return Again((Note(output_feedback(output, problems), name, to_model=True),), said,
                 invalid=invalid)


@dataclass(slots=True)
class Calls:
    """A response's calls, sorted: each call's result and mark as they are known, the
    handoff requests, and the ordinary tool calls to run."""

    results: list[ToolResult | None]
    marks: list[HandoffMark | None]
    asks: list[HandoffAsk] = field(default_factory=list)
    ordinary: list[tuple[int, ToolCall, Tool]] = field(default_factory=list)
    escalate: Fail | None = None
    """The failure of a tool that says `on_error="escalate"` (the agent fails after)."""
    told: tuple[ToolResult, ...] = ()
    """Results known before any call runs (a cut call's, then unknown tools'), for the
    driver to say (`tool_result`), in order."""
    cut: CutCall | None = None
    """The call the output limit cut (not run), for its `answer_truncated` event."""
    forced: bool = False
    """The agent made the call its forcing `tool_choice` asked for: its later requests in
    this turn use `auto` (`Turn.forced`)."""


def sort_calls(t: Turn, leg: Leg, response: ModelResponse) -> Calls:
    """The response's calls: routes' tools and `transfer_to_*` / `ask_<agent>` names are
    handoff requests, the agent's tools (and its MCP servers') ordinary calls, anything
    else an error result naming the tools there are."""
    plan = leg.plan
    agent = plan.agent
    name = agent.name
    calls = response.tool_calls
    n = len(calls)
    sorted_ = Calls([None] * n, [None] * n)
    if agent.reset_tool_choice and agent.tool_choice not in (None, "auto", "none"):
        sorted_.forced = True
    asks, ordinary, results = sorted_.asks, sorted_.ordinary, sorted_.results
    told: list[ToolResult] | None = None  # made when needed: a response is rarely cut
    cut = truncation.cut_call(leg, response) if response.stop == LENGTH else None
    if cut is not None:
        sorted_.cut = cut
        told = [cut.result]
    for i, c in enumerate(calls):
        if cut is not None and i == cut.index:  # half written: never run, never a handoff
            results[i] = cut.result
            continue
        route = plan.routes.get(c.name)
        if route is not None:
            asks.append(HandoffAsk(i, c, route.target.name, route, _LLM))
        elif c.name in plan.tools:
            ordinary.append((i, c, plan.tools[c.name]))
        elif leg.main and t.client is not None and c.name in t.client:
            ordinary.append((i, c, t.client[c.name]))  # waits for the client's result
        elif agent.mcp and (remote := t.runner.mcp.tool(name, c.name)) is not None:
            ordinary.append((i, c, remote))
        elif c.name.startswith("transfer_to_") or (
                c.name.startswith("ask_") and handoffs.target_of(t, c.name) in t.team):
            target = handoffs.target_of(t, c.name)
            asks.append(HandoffAsk(i, c, target, plan.routes_by_target.get(target), _LLM))
        else:
            known = ", ".join(s.name for s in plan.specs) or "none"
            text = f"There is no tool named {c.name!r}. Available tools: {known}."
            results[i] = r = ToolResult(c.id, c.name, text, name, is_error=True)
            if told is None:
                told = []
            told.append(r)
    if told is not None:
        sorted_.told = tuple(told)
    return sorted_


def apply_decisions(leg: Leg, calls: Calls, waiting: list[tuple[int, ToolCall, Tool]],
                    decided: Mapping[str, CallDecision] | None
                    ) -> tuple[list[tuple[int, ToolCall, Tool]], list[tuple[ToolResult, bool]]]:
    """The calls that still wait for a person, once `decided` (a person's decisions, when
    a response continues) is applied: a rejected call's result is the person's no. A
    delegate that cannot wait gets that said as its calls' results (`pausable`: it may
    wait, and the caller pauses the response). Second: the results so made, in order,
    for the driver to say (True: a client's tool's result, as the client sent it)."""
    name = leg.agent.name
    results = calls.results
    told: list[tuple[ToolResult, bool]] = []
    if decided is not None:
        waiting = [w for w in waiting if w[1].id not in decided]
        for i, c, _ in calls.ordinary:
            d = decided.get(c.id)
            if d is None:
                continue
            result = d.result
            if result is not None:  # a client's tool: its result, as the client sent it
                results[i] = r = ToolResult(c.id, c.name, result, name, d.is_error)
                told.append((r, True))
            elif not d.approved:
                results[i] = r = not_run(name, c, rejected_text(c.name, d.reason))
                told.append((r, False))
    if waiting and leg.pausable:
        return waiting, told
    for i, c, _ in waiting:  # inside a delegation: not run
        results[i] = r = not_run(name, c, IN_DELEGATION.format(tool=c.name))
        told.append((r, False))
    calls.ordinary = [o for o in calls.ordinary if results[o[0]] is None]
    return [], told


def tools_done(leg: Leg, calls: Calls,
               outs: Sequence[tuple[str, bool, HandoffTo | None]]) -> None:
    """The ordinary calls' outcomes into the response's results; a tool that asked for a
    handoff (`HandoffTo`) becomes a programmatic request, in call order."""
    plan = leg.plan
    name = plan.agent.name
    for (i, c, tl), (text, is_error, handoff_to) in zip(calls.ordinary, outs, strict=True):
        if handoff_to is not None:
            target = handoff_to.target
            calls.asks.append(HandoffAsk(i, c, target, plan.routes_by_target.get(target),
                                         _PROGRAMMATIC, handoff_to))
            continue
        calls.results[i] = ToolResult(c.id, c.name, text, name, is_error)
        if is_error and tl.on_error == "escalate" and calls.escalate is None:
            calls.escalate = Fail("tool_error", f"Tool {c.name!r} failed: {text}", name)
    calls.asks.sort(key=lambda a: a.index)


def not_run(agent: str, c: ToolCall, text: str) -> ToolResult:
    """The result of a call that was not run (a person rejected it, or it cannot wait)."""
    return ToolResult(c.id, c.name, text, agent, is_error=True)


def incoming(t: Turn, state: SessionState) -> tuple[HandoffRecord, Any, Route | None] | None:
    """How the active agent got the conversation, from the record that opened its view."""
    rid = state.view.record_id
    if rid is None:
        return None
    record = state.record(rid)
    if record is None:
        return None
    payload: Any = record.payload
    team = t.team
    route = team.plan(record.source).routes_by_target.get(record.target) \
        if record.source in team else None
    if route is not None and route.handoff.payload is not None and payload is not None:
        with contextlib.suppress(validation_error()):
            payload = route.handoff.payload.model_validate(payload)
    return record, payload, route


def recover(t: Turn, leg: Leg, fail: Fail) -> Transfer | None:
    """A failure handed to the team's fallback, once per turn (the driver adds its record
    and marks the turn recovered), or None: give up (`given_up`)."""
    team = t.team
    fallback = team.fallback
    if (fallback is None or not fail.recoverable or t.recovered
            or fail.agent == fallback or leg.agent.name == fallback):
        return None
    target = team[fallback]
    if not target.enabled:
        return None
    record = HandoffRecord(
        id=t.fx.new_id(), source=leg.agent.name, target=fallback,
        reason=HandoffReason.ERROR_RECOVERY,
        explanation=f"{fail.agent} failed ({fail.code}): {fail.message}",
        at=t.fx.now(), turn=t.state.turn,
        extra={"error": {"code": fail.code, "message": fail.message, "agent": fail.agent}},
        usage=None if leg.spent is None else leg.spent.copy(),
    )
    return Transfer(None, record, target, None)


def last_text_of(messages: Sequence[Message], agent: str) -> str:
    """The text `agent` wrote in its latest response of this turn, if any."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, UserMessage):
            return ""
        if isinstance(m, AssistantMessage) and m.agent == agent:
            return m.text
    return ""


def given_up(t: Turn, leg: Leg, fail: Fail) -> Answer | Transfer | None:
    """How a turn ends when a failure found no fallback: the policy's `stuck_answer`
    delivered for an agent that made no progress (when set: the turn completes with it),
    else FAILED with its code, after (a `Transfer`) a failed remote agent gives the
    conversation back (`_hand_back`); None: FAILED, nothing else."""
    answer = t.team.policy.stuck_answer
    if answer is not None and fail.code == converge.NO_PROGRESS:
        return Answer(answer, leg.agent.name)
    if leg.main and leg.agent.is_remote and fail.agent == leg.agent.name:
        return _hand_back(t, leg, fail)
    return None


def _hand_back(t: Turn, leg: Leg, fail: Fail) -> Transfer | None:
    """A remote agent that failed with no fallback to take over gives the conversation
    back to the agent that handed it over (else the team's entry), so the user's next
    message is not sent to it again: the move, with its record (None: nobody to give it
    to)."""
    team = t.team
    name = leg.agent.name
    record = leg.record
    back = record.source if record is not None and record.source in team else team.entry
    target = team[back]
    if back == name or target.is_remote or not target.enabled:
        target = team[team.entry]
        if target.name == name:
            return None
    giving = HandoffRecord(
        id=t.fx.new_id(), source=name, target=target.name,
        reason=HandoffReason.ERROR_RECOVERY,
        explanation=f"{name} failed ({fail.code}); {target.name} answers the next message.",
        at=t.fx.now(), turn=t.state.turn,
        extra={"error": {"code": fail.code, "message": fail.message, "agent": name}})
    return Transfer(None, giving, target, None)


class Ends:
    """A transfer that ends the turn once the main line moved: how (`WAITING_FOR_HUMAN`:
    a person takes over; `HANDED_OFF`: the target answers the next message), the turn's
    output, and the words the source is said to have written when it wrote none. A
    plain slotted class, as `converge.Again`."""

    __slots__ = ("output", "said", "status")

    def __init__(self, status: RunStatus, output: str = "",
                 said: AssistantMessage | None = None) -> None:
        self.status = status
        self.output = output
        self.said = said


def moved(t: Turn, transfer: Transfer) -> Ends | None:
    """Whether the main line's move to the transfer's target ends the turn (a person
    takes over, or the target answers the next message); None: the target goes on in
    this turn."""
    target = transfer.target
    if target.is_human:
        return Ends(RunStatus.WAITING_FOR_HUMAN)
    route = transfer.route
    if route is not None and route.handoff.respond == "next_turn":
        source = transfer.record.source
        said = last_text_of(t.state.messages, source)
        if said:
            return Ends(RunStatus.HANDED_OFF, said)
        output = f"Transferring you to {target.label}."
        return Ends(RunStatus.HANDED_OFF, output, AssistantMessage(output, source))
    return None
