"""The main line of a turn and one agent's activation: DESIGN.md's step 3.

`drive` runs the active agent until someone answers, a handoff ends the turn, or it
fails; `activate` is one agent at work: build the request, call the model, answer, or
run the response's tool calls and decide its handoffs. Delegations recurse into
`activate` on their own line.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..core.handoff import HandoffReason, HandoffRecord
from ..core.messages import (
    AssistantMessage,
    HandoffMark,
    Message,
    Note,
    ToolCall,
    ToolResult,
    UserMessage,
)
from ..core.narration import NARRATED_HANDOFF
from ..core.output import OUTPUT_ATTEMPTS, output_feedback, output_json, parse_output
from ..core.session import SessionState
from ..core.team import Route
from ..core.tools import Tool
from ..errors import HandoffsError, ModelError
from ..models.base import Model, ModelRequest, ModelResponse, TextDelta, Usage
from . import approval, converge, delegation, guardrails, handoffs, limits
from .ids import new_id
from .prompt import ctx_of, request_for
from .requests import HandoffAsk, validation_error
from .result import RunResult, RunStatus
from .state import (
    Answer,
    Fail,
    Leg,
    Outcome,
    Pause,
    Transfer,
    Turn,
    append,
    failed,
    result,
    turn_text,
)
from .tools import run_tools

_LLM = HandoffReason.LLM
_PROGRAMMATIC = HandoffReason.PROGRAMMATIC

EMPTY_RESPONSE_FEEDBACK = (
    "Your last response was empty. Answer the user, call a tool, or hand off."
)


async def drive(t: Turn, name: str, text: str, check_input: bool = True,
                first: Callable[[Leg], Awaitable[Outcome]] | None = None) -> RunResult:
    """Run the main line from the active agent until someone answers (or it fails).

    `first`: what the agent does before its next model call (continuing a response
    after an approval); None: it starts with a model call."""
    state = t.state
    team = t.team
    agent = team[name]
    if agent.is_human:
        t.emit("human_waiting", {"agent": name, "display_name": agent.label})
        return result(t, "", name, RunStatus.WAITING_FOR_HUMAN)
    leg = Leg(team.plan(name), main=True)
    came = incoming(t, state)
    if came is not None:
        leg.handed(*came)
    t.emit("agent_started", {"agent": name, "display_name": agent.label})
    outcome: Outcome | None = None
    if first is not None:
        outcome = await (first(leg) if t.deadline is None
                         else limits.within_deadline(t, leg, lambda _, lg: first(lg)))
    elif check_input and agent.input_guardrails:
        outcome = await guardrails.check(t, leg, "input", text)
    while True:
        if outcome is None:
            outcome = await activate(t, leg)
        if isinstance(outcome, Pause):
            return result(t, "", outcome.agent, RunStatus.WAITING_FOR_APPROVAL)
        if isinstance(outcome, Answer):
            tripped = (await guardrails.check(t, leg, "output", outcome.text)
                       if leg.agent.output_guardrails else None)
            if tripped is None:
                return result(t, outcome.text, outcome.agent, RunStatus.COMPLETED,
                              data=outcome.data)
            outcome = tripped
        if isinstance(outcome, Fail):
            if outcome.code == "max_steps" and t.runner.on_max_steps is not None:
                return await limits.max_steps_output(t, leg, outcome)
            recovery = recover(t, leg, outcome)
            if recovery is None:
                answer = t.team.policy.stuck_answer
                if answer is not None and outcome.code == converge.NO_PROGRESS:
                    append(t, leg, AssistantMessage(answer, leg.agent.name))
                    t.emit("message", {"agent": leg.agent.name, "text": answer})
                    return result(t, answer, leg.agent.name, RunStatus.COMPLETED)
                return failed(t, outcome)
            outcome = recovery
        target = outcome.target
        route = outcome.route
        handoffs.move(t, leg, outcome.record, target, route, outcome.payload)
        if target.is_human:
            t.emit("human_waiting", {"agent": target.name, "display_name": target.label})
            return result(t, "", target.name, RunStatus.WAITING_FOR_HUMAN)
        if route is not None and route.handoff.respond == "next_turn":
            said = _last_text_of(state.messages, outcome.record.source)
            output = said or f"Transferring you to {target.label}."
            if not said:
                state.messages.append(AssistantMessage(output, outcome.record.source))
            return result(t, output, target.name, RunStatus.HANDED_OFF)
        leg.switch(team.plan(target.name))
        t.emit("agent_started", {"agent": target.name, "display_name": target.label})
        if target.input_guardrails:
            outcome = await guardrails.check(t, leg, "input", turn_text(t))
        else:
            outcome = None


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
    """Hand a failure to the team's fallback, once per turn, or give up."""
    team = t.team
    fallback = team.fallback
    if (fallback is None or not fail.recoverable or t.recovered
            or fail.agent == fallback or leg.agent.name == fallback):
        return None
    target = team[fallback]
    if not target.enabled:
        return None
    t.recovered = True
    limits.grace_for_fallback(t)
    record = HandoffRecord(
        id=new_id(), source=leg.agent.name, target=fallback,
        reason=HandoffReason.ERROR_RECOVERY,
        explanation=f"{fail.agent} failed ({fail.code}): {fail.message}",
        at=time.time(), turn=t.state.turn,
        extra={"error": {"code": fail.code, "message": fail.message, "agent": fail.agent}},
    )
    t.add_record(record)
    return Transfer(None, record, target, None)


# -- one agent at work ---------------------------------------------------------------


def activate(t: Turn, leg: Leg) -> Awaitable[Outcome]:
    """Let the leg's agent work until it answers, hands off or fails, within its timeout
    (and, on the main line, within the turn's time limit)."""
    if t.deadline is not None and leg.main:
        return limits.within_deadline(t, leg, _steps)
    if leg.agent.timeout is None:
        return _steps(t, leg)  # no wrapper coroutine on the common path
    return _timed_steps(t, leg)


async def _timed_steps(t: Turn, leg: Leg) -> Outcome:
    timeout = leg.agent.timeout
    assert timeout is not None
    try:
        return await asyncio.wait_for(_steps(t, leg), timeout)
    except TimeoutError:
        return Fail("timeout", f"{leg.agent.name} did not finish within {timeout:g} s.",
                    leg.agent.name)


async def _steps(t: Turn, leg: Leg) -> Outcome:
    invalid = 0  # answers that were not the agent's output type, this activation
    while True:
        agent = leg.agent
        name = agent.name
        model = t.models.get(name)
        if model is None and not agent.is_human:
            try:
                model = t.models[name]  # resolved on first need
            except HandoffsError as exc:
                return Fail(exc.code, str(exc), name, recoverable=False, exception=exc)
        if model is None:
            return Fail("no_model", f"{name} has no model and cannot answer here.",
                        name, recoverable=False)
        if t.steps >= t.max_steps:
            return Fail(
                "max_steps",
                f"The turn reached max_steps ({t.max_steps} model calls) without an answer.",
                name, recoverable=False,
            )
        request = await request_for(t, leg)
        t.steps += 1
        try:
            call = _streamed(t, model, request) if t.streaming else model.complete(request)
            seen = t.runner.inspector  # Runner(inspect=True): the request and response
            response = await (call if seen is None else seen.watch(t, leg, request, call))
        except ModelError as exc:
            if exc.code == converge.MALFORMED_OUTPUT:  # the model's fault: feedback
                converge.malformed(t, leg, str(exc))
                stuck = converge.no_progress(t, leg)
                if stuck is not None:
                    return stuck
                continue
            return Fail(exc.code, str(exc), name, exception=exc)
        except HandoffsError as exc:
            return Fail(exc.code, str(exc), name, recoverable=False, exception=exc)
        except Exception as exc:
            return Fail("model_error", f"{type(exc).__name__}: {exc}", name, exception=exc)
        if response.usage is not None:
            t.usage.add(response.usage)
            per = t.usage_by_agent.get(name)
            if per is None:
                per = t.usage_by_agent[name] = Usage()
            per.add(response.usage)
        if leg.last_word and response.tool_calls:  # no tools were offered: still calls
            return converge.stuck(leg)
        text = response.text
        if not response.tool_calls:
            if not text.strip():
                append(t, leg, Note(EMPTY_RESPONSE_FEEDBACK, name, to_model=True))
                stuck = converge.no_progress(t, leg)
                if stuck is not None:
                    return stuck
                continue
            if leg.plan.output is None:
                held = converge.held_back(t, leg, text)
                if held is not None:
                    if leg.last_word:
                        return converge.stuck(leg)
                    stuck = None if held == NARRATED_HANDOFF else converge.no_progress(t, leg)
                    if stuck is not None:
                        return stuck
                    continue
            append(t, leg, AssistantMessage(text, name))
            t.emit("message", {"agent": name, "text": text})
            if leg.plan.output is None:
                return Answer(text, name)
            data, problems = parse_output(leg.plan.output, text)
            if problems is None:
                return Answer(output_json(data), name, data)
            invalid += 1
            if invalid >= OUTPUT_ATTEMPTS:
                return Fail("invalid_output", f"{name} gave no valid {leg.plan.output.name} "
                            f"in {invalid} answers; the last: {problems}", name)
            append(t, leg, Note(output_feedback(leg.plan.output, problems), name,
                                to_model=True))
            continue
        if text:
            t.emit("message", {"agent": name, "text": text})
        if agent.reset_tool_choice and agent.tool_choice not in (None, "auto", "none"):
            t.forced = {*t.forced, name}
        outcome = await respond(t, leg, response)
        if outcome is not None:
            return outcome


async def _streamed(t: Turn, model: Model, request: ModelRequest) -> ModelResponse:
    """A streamed model call: text deltas become events, the last piece is the response."""
    response: ModelResponse | None = None
    async for piece in model.stream(request):
        if isinstance(piece, TextDelta):
            t.emit("text_delta", {"agent": request.agent, "text": piece.text})
        else:
            response = piece
    if response is None:
        raise ModelError("The model's stream ended without a response.")
    return response


async def respond(t: Turn, leg: Leg, response: ModelResponse,
                   decided: dict[str, Any] | None = None) -> Outcome | None:
    """Run ordinary tools, then decide handoffs; append the response and its results.

    Calls whose tool needs approval stop the response on the main line (`approval`);
    `decided` holds a person's decisions when it continues."""
    plan = leg.plan
    name = plan.agent.name
    calls = response.tool_calls
    n = len(calls)
    results: list[ToolResult | None] = [None] * n
    marks: list[HandoffMark | None] = [None] * n
    asks: list[HandoffAsk] = []
    ordinary: list[tuple[int, ToolCall, Tool]] = []
    for i, c in enumerate(calls):
        route = plan.routes.get(c.name)
        if route is not None:
            asks.append(HandoffAsk(i, c, route.target.name, route, _LLM))
        elif c.name in plan.tools:
            ordinary.append((i, c, plan.tools[c.name]))
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
    escalate: Fail | None = None
    if ordinary and plan.approvals:
        waiting = await approval.needing(ctx_of(t, leg), ordinary)
        if decided is not None:
            waiting = [w for w in waiting if w[1].id not in decided]
            for i, c, _ in ordinary:
                d = decided.get(c.id)
                if d is not None and not d["approved"]:
                    results[i] = _refused(t, name, c, approval.rejected_text(c.name,
                                                                              d["reason"]))
        if waiting and leg.pausable:
            return approval.pause(t, leg, response, waiting)
        for i, c, _ in waiting:  # inside a delegation: not run
            results[i] = _refused(t, name, c, approval.IN_DELEGATION.format(tool=c.name))
        ordinary = [o for o in ordinary if results[o[0]] is None]
    if ordinary:
        outs = await run_tools(t, ctx_of(t, leg), name, ordinary)
        for (i, c, tl), (text, is_error, handoff_to) in zip(ordinary, outs, strict=True):
            if handoff_to is not None:
                target = handoff_to.target
                asks.append(HandoffAsk(i, c, target, plan.routes_by_target.get(target),
                                       _PROGRAMMATIC, handoff_to))
                continue
            results[i] = ToolResult(c.id, c.name, text, name, is_error)
            if is_error and tl.on_error == "escalate" and escalate is None:
                escalate = Fail("tool_error", f"Tool {c.name!r} failed: {text}", name)
        asks.sort(key=lambda a: a.index)
    if not asks:
        return _settled(t, leg, response, results, marks, None, escalate)
    decision = handoffs.decide(t, leg, asks, results, marks)
    if decision.delegations:
        paused = await delegation.run_all(t, leg, decision.delegations, results, marks,
                                          activate)
        if paused is not None:  # a delegate waits for approval: so does this response
            decision.flush(t)
            ask = decision.transfer_ask
            planned = (None if ask is None or decision.transfer is None
                       else (ask.index, decision.transfer.record))
            return approval.suspend(t, leg, response, results, marks, paused[0].index,
                                    paused[1], planned, escalate)
    return await after_delegations(t, leg, response, results, marks, decision, escalate)


async def after_delegations(t: Turn, leg: Leg, response: ModelResponse,
                             results: list[ToolResult | None],
                             marks: list[HandoffMark | None], decision: handoffs.Decision,
                             escalate: Fail | None) -> Outcome | None:
    """The rest of a response once its delegations answered: its transfer, then the
    response and its results into the line."""
    transfer: Transfer | None = None
    settled = await handoffs.settle_transfer(t, leg, decision, results, marks, response.text)
    if isinstance(settled, Fail):
        escalate = escalate or settled
    else:
        transfer = settled
    return _settled(t, leg, response, results, marks, transfer, escalate)


def _settled(t: Turn, leg: Leg, response: ModelResponse, results: list[ToolResult | None],
             marks: list[HandoffMark | None], transfer: Transfer | None,
             escalate: Fail | None) -> Outcome | None:
    """Append the response (calls marked) and its results; what the agent does next."""
    name = leg.agent.name
    calls = response.tool_calls
    append(t, leg, AssistantMessage(response.text, name, tuple(
        c if marks[i] is None else ToolCall(c.id, c.name, c.arguments, marks[i])
        for i, c in enumerate(calls)
    )))
    for r in results:
        if r is not None:
            append(t, leg, r)
    if escalate is not None:
        return escalate
    if transfer is None and leg.plan.agent.name == name:
        return converge.step_done(t, leg, results, False)
    leg.failures = 0
    return transfer


def _last_text_of(messages: Sequence[Message], agent: str) -> str:
    """The text `agent` wrote in its latest response of this turn, if any."""
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, UserMessage):
            return ""
        if isinstance(m, AssistantMessage) and m.agent == agent:
            return m.text
    return ""


def _refused(t: Turn, agent: str, c: ToolCall, text: str) -> ToolResult:
    """The result of a call that was not run (a person rejected it, or it cannot wait)."""
    t.emit("tool_result", {"agent": agent, "tool": c.name, "call_id": c.id, "text": text,
                           "is_error": True})
    return ToolResult(c.id, c.name, text, agent, is_error=True)
