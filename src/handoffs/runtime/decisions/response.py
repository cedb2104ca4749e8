"""What a model's response means for the turn, as decisions: DESIGN.md's step 3 after
the model answered. An answer in words (checked, then delivered, or sent back with
feedback), a provider's failure, the calls sorted into ordinary tools, handoff requests
and unknown tools, a person's decisions applied, the tools' outcomes, the response and
its results into the line, and what the agent does next. A failure handed to the team's
fallback, and how the active agent got the conversation. No I/O and nothing awaited: the
driver (`driver.loop`) performs what these decide.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
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
from ...core.narration import NARRATED_HANDOFF
from ...core.output import OUTPUT_ATTEMPTS, output_feedback, output_json, parse_output
from ...core.session import SessionState
from ...core.team import Route
from ...core.tools import HandoffTo, Tool
from ...errors import HandoffsError, ModelError
from ...models.base import Model, ModelResponse, Usage
from ..state import Answer, Fail, Leg, Outcome, Transfer, Turn, append, failed, result
from ..state.result import RunResult, RunStatus
from . import converge, handoffs, truncation
from .asks import HandoffAsk, validation_error
from .recovery import rejected_text
from .truncation import LENGTH

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


def model_failed(t: Turn, leg: Leg, exc: Exception) -> Fail | None:
    """A model call that raised: the agent's failure (with its code), or None to ask
    again when the provider refused the model's own output (`malformed_output`)."""
    name = leg.agent.name
    if isinstance(exc, ModelError):
        if exc.code == converge.MALFORMED_OUTPUT:  # the model's fault: feedback
            converge.malformed(t, leg, str(exc))
            return converge.no_progress(t, leg) or None
        return Fail(exc.code, str(exc), name, exception=exc)
    if isinstance(exc, HandoffsError):
        return Fail(exc.code, str(exc), name, recoverable=False, exception=exc)
    return Fail("model_error", f"{type(exc).__name__}: {exc}", name, exception=exc)


def model_name(model: Model) -> str:
    """The name a model's usage is counted under when its response names none."""
    name = getattr(model, "model", None)
    return name if isinstance(name, str) and name else type(model).__name__


def count(t: Turn, leg: Leg, response: ModelResponse, model: Model) -> None:
    """Add a response's usage to the turn's, its agent's, its model's and its line's
    (what a handoff record says the source spent)."""
    usage = response.usage
    if usage is None:
        return
    t.usage.add(usage)
    name = response.model or model_name(model)
    by_model = t.usage_by_model.get(name)
    if by_model is None:
        by_model = t.usage_by_model[name] = Usage()
    by_model.add(usage)
    spent = leg.spent
    if spent is None:
        spent = leg.spent = Usage()
    spent.add(usage)
    agent = leg.agent.name
    per = t.usage_by_agent.get(agent)
    if per is None:
        per = t.usage_by_agent[agent] = Usage()
    per.add(usage)


def answered(t: Turn, leg: Leg, response: ModelResponse) -> Outcome | None:
    """A response with no calls: the agent's answer, a failure, or None: the agent is
    asked again (feedback is in its line).

    An answer the output limit cut is not delivered (`truncation`); an empty answer is
    feedback; an answer held back (a narrated handoff, a forced call not made, a refusal
    echoed, a call written as text: `converge`) is asked again; an agent with an output
    type must answer with it (three tries in an activation, counted on `Leg.invalid`).
    The answer keeps the response's reasoning state (`AssistantMessage.reasoning`), for
    its provider to get back."""
    name = leg.agent.name
    output = leg.plan.output
    text = response.text
    if response.stop == LENGTH:
        cut = truncation.cut_answer(t, leg, response)
        if isinstance(cut, Fail):
            return cut
        if not cut:
            return None
    if not text.strip():
        append(t, leg, Note(EMPTY_RESPONSE_FEEDBACK, name, to_model=True))
        return converge.no_progress(t, leg)
    reasoning = response.reasoning
    if output is None:
        held = converge.held_back(t, leg, text, reasoning)
        if held is not None:
            if leg.last_word:
                return converge.stuck(leg)
            if held == NARRATED_HANDOFF or held == converge.FORCED_CALL:
                return None
            return converge.no_progress(t, leg)
    append(t, leg, AssistantMessage(text, name, (), reasoning))
    t.emit("message", {"agent": name, "text": text})
    if output is None:
        return Answer(text, name)
    data, problems = parse_output(output, text)
    if problems is None:
        return Answer(output_json(data), name, data)
    invalid = leg.invalid = leg.invalid + 1
    if invalid >= OUTPUT_ATTEMPTS:
        return Fail("invalid_output", f"{name} gave no valid {output.name} in {invalid} "
                    f"answers; the last: {problems}", name)
    append(t, leg, Note(output_feedback(output, problems), name, to_model=True))
    return None


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


def sort_calls(t: Turn, leg: Leg, response: ModelResponse) -> Calls:
    """The response's calls: routes' tools and `transfer_to_*` / `ask_<agent>` names are
    handoff requests, the agent's tools (and its MCP servers') ordinary calls, anything
    else an error result naming the tools there are."""
    if leg.agent.reset_tool_choice and leg.agent.tool_choice not in (None, "auto", "none"):
        t.forced = {*t.forced, leg.agent.name}
    plan = leg.plan
    name = plan.agent.name
    calls = response.tool_calls
    n = len(calls)
    sorted_ = Calls([None] * n, [None] * n)
    asks, ordinary, results = sorted_.asks, sorted_.ordinary, sorted_.results
    cut = truncation.cut_call(t, leg, response) if response.stop == LENGTH else None
    for i, c in enumerate(calls):
        if cut is not None and i == cut[0]:  # half written: never run, never a handoff
            results[i] = cut[1]
            continue
        route = plan.routes.get(c.name)
        if route is not None:
            asks.append(HandoffAsk(i, c, route.target.name, route, _LLM))
        elif c.name in plan.tools:
            ordinary.append((i, c, plan.tools[c.name]))
        elif leg.main and t.client is not None and c.name in t.client:
            ordinary.append((i, c, t.client[c.name]))  # waits for the client's result
        elif plan.agent.mcp and (remote := t.runner.mcp.tool(name, c.name)) is not None:
            ordinary.append((i, c, remote))
        elif c.name.startswith("transfer_to_") or (
                c.name.startswith("ask_") and handoffs.target_of(t, c.name) in t.team):
            target = handoffs.target_of(t, c.name)
            asks.append(HandoffAsk(i, c, target, plan.routes_by_target.get(target), _LLM))
        else:
            known = ", ".join(s.name for s in plan.specs) or "none"
            text = f"There is no tool named {c.name!r}. Available tools: {known}."
            results[i] = ToolResult(c.id, c.name, text, name, is_error=True)
            t.emit("tool_result", {"agent": name, "tool": c.name, "call_id": c.id,
                                   "text": text, "is_error": True})
    return sorted_


def apply_decisions(t: Turn, leg: Leg, calls: Calls,
                    waiting: list[tuple[int, ToolCall, Tool]],
                    decided: Mapping[str, CallDecision] | None
                    ) -> list[tuple[int, ToolCall, Tool]]:
    """The calls that still wait for a person, once `decided` (a person's decisions, when
    a response continues) is applied: a rejected call's result is the person's no. A
    delegate that cannot wait gets that said as its calls' results (`pausable`: it may
    wait, and the caller pauses the response)."""
    name = leg.agent.name
    results = calls.results
    if decided is not None:
        waiting = [w for w in waiting if w[1].id not in decided]
        for i, c, _ in calls.ordinary:
            d = decided.get(c.id)
            if d is None:
                continue
            result = d.result
            if result is not None:  # a client's tool: its result, as the client sent it
                results[i] = ToolResult(c.id, c.name, result, name, d.is_error)
                t.emit("tool_result", {"agent": name, "tool": c.name, "call_id": c.id,
                                       "text": result, "is_error": d.is_error,
                                       "client": True})
            elif not d.approved:
                results[i] = not_run(t, name, c, rejected_text(c.name, d.reason))
    if waiting and leg.pausable:
        return waiting
    for i, c, _ in waiting:  # inside a delegation: not run
        results[i] = not_run(t, name, c, IN_DELEGATION.format(tool=c.name))
    calls.ordinary = [o for o in calls.ordinary if results[o[0]] is None]
    return []


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


def settled(t: Turn, leg: Leg, response: ModelResponse, calls: Calls,
            transfer: Transfer | None) -> Outcome | None:
    """Append the response (calls marked) and its results; what the agent does next:
    fail (an escalating tool), move (a transfer), or None: ask the model again (a step
    without progress counted, `converge`)."""
    name = leg.agent.name
    marks = calls.marks
    said = AssistantMessage(response.text, name, tuple(
        c if marks[i] is None else ToolCall(c.id, c.name, c.arguments, marks[i])
        for i, c in enumerate(response.tool_calls)
    ), response.reasoning)
    if leg.main:  # `append`, inlined: this runs for every response with calls
        messages = t.state.messages
        messages.append(said)
        for r in calls.results:
            if r is not None:
                messages.append(r)
    else:
        append(t, leg, said)
        for r in calls.results:
            if r is not None:
                append(t, leg, r)
    if calls.escalate is not None:
        return calls.escalate
    if transfer is None and leg.plan.agent.name == name:
        return converge.step_done(t, leg, calls.results, False)
    leg.failures = 0
    return transfer


def not_run(t: Turn, agent: str, c: ToolCall, text: str) -> ToolResult:
    """The result of a call that was not run (a person rejected it, or it cannot wait)."""
    t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id, "text": text,
                           "is_error": True})
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
    """Hand a failure to the team's fallback, once per turn, or give up (None)."""
    team = t.team
    fallback = team.fallback
    if (fallback is None or not fail.recoverable or t.recovered
            or fail.agent == fallback or leg.agent.name == fallback):
        return None
    target = team[fallback]
    if not target.enabled:
        return None
    t.recovered = True
    record = HandoffRecord(
        id=t.fx.new_id(), source=leg.agent.name, target=fallback,
        reason=HandoffReason.ERROR_RECOVERY,
        explanation=f"{fail.agent} failed ({fail.code}): {fail.message}",
        at=t.fx.now(), turn=t.state.turn,
        extra={"error": {"code": fail.code, "message": fail.message, "agent": fail.agent}},
        usage=None if leg.spent is None else leg.spent.copy(),
    )
    t.add_record(record)
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


def given_up(t: Turn, leg: Leg, fail: Fail, move: Callable[..., None]) -> RunResult:
    """The turn's result when a failure found no fallback: the policy's `stuck_answer`
    for an agent that made no progress (when set), else FAILED with its code (`move`:
    the driver's, for a remote agent's hand-back: `driver.moves.move`)."""
    answer = t.team.policy.stuck_answer
    if answer is not None and fail.code == converge.NO_PROGRESS:
        append(t, leg, AssistantMessage(answer, leg.agent.name))
        t.emit("message", {"agent": leg.agent.name, "text": answer})
        return result(t, answer, leg.agent.name, RunStatus.COMPLETED)
    if leg.main and leg.agent.is_remote and fail.agent == leg.agent.name:
        _hand_back(t, leg, fail, move)
    return failed(t, fail)


def _hand_back(t: Turn, leg: Leg, fail: Fail, move: Callable[..., None]) -> None:
    """A remote agent that failed with no fallback to take over gives the conversation
    back to the agent that handed it over (else the team's entry), so the user's next
    message is not sent to it again."""
    team = t.team
    name = leg.agent.name
    record = leg.record
    back = record.source if record is not None and record.source in team else team.entry
    target = team[back]
    if back == name or target.is_remote or not target.enabled:
        target = team[team.entry]
        if target.name == name:
            return
    giving = HandoffRecord(
        id=t.fx.new_id(), source=name, target=target.name,
        reason=HandoffReason.ERROR_RECOVERY,
        explanation=f"{name} failed ({fail.code}); {target.name} answers the next message.",
        at=t.fx.now(), turn=t.state.turn,
        extra={"error": {"code": fail.code, "message": fail.message, "agent": name}})
    t.add_record(giving)
    move(t, None, giving, target, None)


def moved(t: Turn, leg: Leg, transfer: Transfer) -> RunResult | None:
    """Once the main line moved to the transfer's target (`driver.moves.move`): the
    turn's result when that ends it (a person takes over, or the target answers the next
    message), else None: the target goes on in this turn."""
    target = transfer.target
    route = transfer.route
    if target.is_human:
        t.emit("human_waiting", {"agent": target.name, "display_name": target.label})
        return result(t, "", target.name, RunStatus.WAITING_FOR_HUMAN)
    if route is not None and route.handoff.respond == "next_turn":
        messages = t.state.messages
        said = last_text_of(messages, transfer.record.source)
        output = said or f"Transferring you to {target.label}."
        if not said:
            messages.append(AssistantMessage(output, transfer.record.source))
        return result(t, output, target.name, RunStatus.HANDED_OFF)
    leg.switch(t.team.plan(target.name))
    t.emit("agent_started", {"agent": target.name,
                             "display_name": target.display_name or target.name})
    return None
