"""The main line of a turn and one agent's activation, as the driver performs them:
DESIGN.md's step 3.

`drive` runs the active agent until someone answers, a handoff ends the turn, or it
fails; `activate` is one agent at work: build the request, call the model through the
executor (`t.fx`), and let the decisions (`decisions.response`, `converge`,
`truncation`) say what the response means; run its tool calls (`tools`), its
delegations (`delegation`) and its transfer's hook and summary (`settle`), each decided
before and after by the decisions. The decisions change nothing: what they return is
applied here (the answer, the response and its results into the line, an `Again`'s
feedback and counters, the usage, the events, the main line moved), inline where it
runs for every response. Delegations recurse into `activate` on their own line.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from functools import partial
from typing import TYPE_CHECKING

from ...core.messages import AssistantMessage, ToolCall
from ...core.usage import Usage
from ...errors import HandoffsError
from ...log import fields
from ...models.base import Model, ModelResponse
from ..decisions import converge, handoffs, truncation, views
from ..decisions import response as on_response
from ..decisions.converge import Again, Nudge
from ..state import (
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
from ..state.result import RunResult, RunStatus
from . import delegation, guardrails, limits, moves, requests, settle
from .context import ctx_of
from .pause import pause, suspend
from .tools import needing, run_tools, told

if TYPE_CHECKING:
    from ...core.pending import CallDecision

log = logging.getLogger("handoffs.runtime.converge")  # a stable name (docs/observability.md)


async def drive(t: Turn, name: str, text: str, check_input: bool = True,
                first: Callable[[Leg], Awaitable[Outcome]] | None = None) -> RunResult:
    """Run the main line from the active agent until someone answers (or it fails).

    `first`: what the agent does before its next model call (continuing a response
    after an approval); None: it starts with a model call."""
    state = t.state
    team = t.team
    if t.asker is None:
        t.asker = partial(guardrails.ask, t)
    plan = team.plan(name)  # (the turn's active agent is one of the team's)
    agent = plan.agent
    if agent.is_human:
        t.emit("human_waiting", {"agent": name, "display_name": agent.label})
        return result(t, "", name, RunStatus.WAITING_FOR_HUMAN)
    leg = Leg(plan, main=True)
    came = on_response.incoming(t, state)
    if came is not None:
        leg.handed(*came)
    t.emit("agent_started", {"agent": name, "display_name": agent.label})
    outcome: Outcome | None = None
    if first is not None:
        outcome = await (first(leg) if t.deadline is None
                         else limits.within_deadline(t, leg, lambda _, lg: first(lg)))
    elif check_input and agent.input_guardrails:
        outcome = await guardrails.begin(t, leg, text)
    try:  # (no coroutine of its own: every await of the turn would pass through it)
        while True:
            if outcome is None:
                outcome = await activate(t, leg)
                if leg.guard is not None:  # the activation ended before its first response
                    outcome = await guardrails.verdict(leg) or outcome
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
                check = outcome.check
                if check is not None and check.reply is not None:
                    return guardrails.refuse(t, leg, outcome)
                if outcome.code == "max_steps" and t.runner.on_max_steps is not None:
                    return await limits.max_steps_output(t, leg, outcome)
                recovery = on_response.recover(t, leg, outcome)
                if recovery is None:
                    given = on_response.given_up(t, leg, outcome)
                    if isinstance(given, Answer):  # the policy's stuck_answer
                        append(t, leg, AssistantMessage(given.text, given.agent))
                        t.emit("message", {"agent": given.agent, "text": given.text})
                        return result(t, given.text, given.agent, RunStatus.COMPLETED)
                    if given is not None:  # a remote agent gives the conversation back
                        t.add_record(given.record)
                        moves.move(t, None, given.record, given.target, None)
                    return failed(t, outcome)
                t.recovered = True
                t.add_record(recovery.record)
                limits.grace_for_fallback(t)
                outcome = recovery
            target = outcome.target
            moves.move(t, leg, outcome.record, target, outcome.route, outcome.payload)
            ends = on_response.moved(t, outcome)
            if ends is not None:
                if ends.status is RunStatus.WAITING_FOR_HUMAN:
                    t.emit("human_waiting", {"agent": target.name,
                                             "display_name": target.label})
                elif ends.said is not None:
                    t.state.messages.append(ends.said)
                return result(t, ends.output, target.name, ends.status)
            leg.switch(team.plan(target.name))
            t.emit("agent_started", {"agent": target.name,
                                     "display_name": target.display_name or target.name})
            # The message was checked when it came: a target checks it again only when
            # its route asks (`Handoff(check_input=True)`).
            route = leg.route
            if (leg.agent.input_guardrails and route is not None
                    and route.handoff.check_input):
                outcome = await guardrails.begin(t, leg, turn_text(t))
            else:
                outcome = None
    finally:
        if leg.guard is not None:  # the turn ended before its input check was awaited
            guardrails.drop(leg)


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
        return await t.runner.executor.within(_steps(t, leg), timeout)
    except TimeoutError:
        return Fail("timeout", f"{leg.agent.name} did not finish within {timeout:g} s.",
                    leg.agent.name)


async def _steps(t: Turn, leg: Leg) -> Outcome:
    leg.invalid = 0  # answers of this activation that were not the agent's output type
    while True:
        agent = leg.agent
        if agent.is_remote:  # answered over A2A, not by a model of ours (loaded then)
            from . import remote

            return await remote.step(t, leg)
        name = agent.name
        model = t.models.get(name)
        if model is None and not agent.is_human:
            try:
                model = t.models[name]  # resolved on first need
            except HandoffsError as exc:
                return Fail(exc.code, str(exc), name, recoverable=False, exception=exc)
        cannot = on_response.no_model(t, leg, model)
        if cannot is not None:
            return cannot
        assert model is not None
        if requests.awaits(leg):
            request = await requests.request_for(t, leg)
        else:  # the common case, without a coroutine
            if leg.system is None:  # a new agent or handoff: what its requests reuse
                if leg.record is not None:
                    leg.note = views.note_of(leg)
                if not leg.plan.static:
                    ctx_of(t, leg)
            request = views.request(t, leg, leg.system)
            leg.system = request.system  # composed once per agent and handoff
        leg.force = None  # forced tools are offered once (a narrated handoff)
        t.steps += 1
        guarded = leg.guard is not None  # its input check runs beside this call
        try:
            call = t.fx.model(guardrails.UNSTREAMED if guarded and t.streaming else t,
                              model, request)
            seen = t.runner.inspector  # Runner(inspect=True): the request and response
            response = await (call if seen is None else seen.watch(t, leg, request, call))
        except Exception as exc:
            if guarded and (tripped := await guardrails.verdict(leg)) is not None:
                return tripped
            failure = on_response.model_failed(t, leg, exc)
            if isinstance(failure, Again):  # feedback: asked again, or out of steps
                fail = _again(t, leg, failure)
                if fail is None:
                    continue
                return fail
            return failure
        if response.usage is not None:
            _count(t, leg, response, model)
        if guarded:  # a trip throws the response away: none of it runs
            tripped = await guardrails.verdict(leg)
            if tripped is not None:
                return tripped
            if t.streaming and response.text:
                t.emit("text_delta", {"agent": name, "text": response.text})
        if leg.last_word and response.tool_calls:  # no tools were offered: still calls
            return converge.stuck(leg)
        if not response.tool_calls:
            if response.stop == truncation.LENGTH:  # the output limit cut it
                cut = truncation.cut_answer(leg, response)
                t.emit("answer_truncated", {"agent": name, "limit": cut.limit,
                                            "delivered": cut.again is None})
                if cut.again is not None:
                    fail = _again(t, leg, cut.again)
                    if fail is not None:
                        return fail
                    continue  # asked again: feedback is in its line
            answer = on_response.answered(t, leg, response)
            if isinstance(answer, Answer):  # into its line (`append`, inlined), and said
                text = response.text
                said = AssistantMessage(text, name, (), response.reasoning)
                if leg.main:
                    t.state.messages.append(said)
                else:
                    append(t, leg, said)
                t.emit("message", {"agent": name, "text": text})
                return answer
            fail = _again(t, leg, answer)
            if fail is not None:
                return fail
            continue  # asked again: feedback is in its line
        text = response.text
        if text:
            t.emit("message", {"agent": name, "text": text})
        next_ = await respond(t, leg, response)
        if next_ is not None:
            return next_


async def respond(t: Turn, leg: Leg, response: ModelResponse,
                  decided: Mapping[str, CallDecision] | None = None) -> Outcome | None:
    """Run ordinary tools, then decide handoffs; append the response and its results.

    Calls whose tool needs approval stop the response on the main line
    (`decisions.approvals`); `decided` holds a person's decisions when it continues."""
    calls = on_response.sort_calls(t, leg, response)
    if calls.forced:  # the call its forcing tool_choice asked for: `auto` from now on
        t.forced = {*t.forced, leg.agent.name}
    if calls.told:  # a cut call, unknown tools: their results, said before any call runs
        cut = calls.cut
        if cut is not None:
            r = cut.result
            t.emit("answer_truncated", {"agent": r.agent, "limit": cut.limit,
                                        "delivered": False, "tool": r.name,
                                        "call_id": r.call_id})
        for r in calls.told:
            told(t, r)
    if calls.ordinary and (leg.plan.approvals or t.client is not None):
        waiting = await needing(ctx_of(t, leg), calls.ordinary)
        waiting, answered = on_response.apply_decisions(leg, calls, waiting, decided)
        for r, client in answered:  # a client's results, the calls not run
            told(t, r, client)
        if waiting:
            return pause(t, leg, response, waiting)
    if calls.ordinary:
        outs = await run_tools(t, ctx_of(t, leg), leg.agent.name, calls.ordinary)
        on_response.tools_done(leg, calls, outs)
    if not calls.asks:
        return _settled(t, leg, response, calls, None)
    decision = moves.judged(t, leg, calls.asks, calls.results, calls.marks)
    if decision.delegations:
        paused = await delegation.run_all(t, leg, decision.delegations, calls.results,
                                          calls.marks, activate)
        if paused is not None:  # a delegate waits for approval: so does this response
            moves.flush(t, decision)
            ask = decision.transfer_ask
            planned = (None if ask is None or decision.transfer is None
                       else (ask.index, decision.transfer.record))
            return suspend(t, leg, response, calls.results, calls.marks, paused[0].index,
                           paused[1], planned, calls.escalate)
    if settle.awaits(t, decision.transfer):  # its hook or its summary
        return await after_delegations(t, leg, response, calls, decision)
    return _settled(t, leg, response, calls, moves.complete_transfer(
        t, leg, decision, calls.results, calls.marks))


async def after_delegations(t: Turn, leg: Leg, response: ModelResponse,
                            calls: on_response.Calls, decision: handoffs.Decision
                            ) -> Outcome | None:
    """The rest of a response once its delegations answered: its transfer prepared (its
    hook, its summary: `settle.prepare`) and completed, then the response and its results
    into the line."""
    refused = await settle.prepare(t, leg, decision, calls.results, calls.marks,
                                   response.text)
    if refused is not None:  # the handoff was not made: the agent fails
        calls.escalate = calls.escalate or refused
        return _settled(t, leg, response, calls, None)
    return _settled(t, leg, response, calls, moves.complete_transfer(
        t, leg, decision, calls.results, calls.marks))


def _settled(t: Turn, leg: Leg, response: ModelResponse, calls: on_response.Calls,
            transfer: Transfer | None) -> Outcome | None:
    """Append the response (calls marked) and its results; then what the agent does
    next: fail (an escalating tool), move (a transfer), or None: ask the model again
    (a step without progress counted: `converge.step_done`)."""
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
    if transfer is None:
        step = converge.step_done(t, leg, calls.results)
        return None if step is None else _again(t, leg, step)
    leg.failures = 0  # a transfer is progress
    return transfer


def _again(t: Turn, leg: Leg, step: Again) -> Fail | None:
    """Apply a step that did not end the agent's work (`converge.Again`): what it said
    (kept, not delivered) and the feedback into its line, each nudge said and logged,
    its counters set; then its failure, or None: it is asked again."""
    name = leg.agent.name
    said = step.said
    if said is not None:
        append(t, leg, said)
        t.emit("message", {"agent": said.agent, "text": said.text})
    for n in step.notes:
        if isinstance(n, Nudge):
            note = n.note
            append(t, leg, note)
            t.emit("agent_nudged", {"agent": note.agent, "code": n.code,
                                    "message": note.text})
            state = t.state
            log.info("%s nudged (%s)", note.agent, n.code,
                     extra=fields(state.id, state.turn, note.agent))
        else:
            append(t, leg, n)
    if step.failures is not None:
        leg.failures = step.failures
    if step.last_word is not None:
        leg.last_word = step.last_word
    if step.nudged is not None:
        leg.nudged = step.nudged
    if step.reminded is not None:
        leg.reminded = step.reminded
    if step.force is not None:
        leg.force = step.force
    if step.truncated is not None:
        leg.truncated = step.truncated
    if step.invalid is not None:
        leg.invalid = step.invalid
    if step.forced:
        t.forced = {*t.forced, name}
    return step.fail


def _count(t: Turn, leg: Leg, response: ModelResponse, model: Model) -> None:
    """Add a response's usage to the turn's, its agent's, its model's and its line's
    (what a handoff record says the source spent)."""
    usage = response.usage
    if usage is None:
        return
    t.usage.add(usage)
    name = response.model or on_response.model_name(model)
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
