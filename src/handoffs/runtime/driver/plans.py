"""A supervisor's plan: steps delegated in order, parallel groups at once (`plan_step`)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ...core.handoff import Handoff, HandoffReason, HandoffRecord
from ...core.messages import AssistantMessage, Note
from ...core.plan import PlanStep
from ...core.team import Route
from ...core.tools import ToolSpec
from ...errors import HandoffsError
from ...stores.edits import Held, session_turn
from ...telemetry.config import observe
from ..decisions.recovery import skipped
from ..state import Fail, Leg, Pause, Turn, failed, finish, result
from ..state.result import RunResult, RunStatus
from . import guardrails
from .delegation import delegate
from .loop import activate
from .turn import new_session

if TYPE_CHECKING:
    from ...core.idempotency import IdempotencyKey
    from ..state.host import Host


async def run_plan(runner: Host, session_id: str,
                   steps: Sequence[PlanStep | Mapping[str, Any] | Sequence[Any]],
                   context: Any, key: IdempotencyKey | None = None) -> RunResult:
    """See `Runner.run_plan`. `key`: the plan's idempotency key; it is stored with the
    plan's one commit, and a retry gets that plan's result, running no step again."""
    plan = [PlanStep.of(s) for s in steps]
    if not plan:
        raise HandoffsError("A plan needs at least one step.", code="invalid_plan")
    team = runner.team

    async def run(held: Held) -> RunResult:
        state = held.state
        if key is not None:
            from ...core.idempotency import fingerprint, remember, seen
            from . import retried

            print_ = fingerprint("plan", repr(plan))
            now = runner.executor.now()
            hit = seen(state, key, print_, now)
            if hit is not None:
                return await retried.outcome(runner, session_id, hit)
        state.turn += 1
        if key is not None:
            remember(state, key, print_, now)
        held.since = state.checkpoint()  # past the raised turn: durable stores keep no mark
        state.event_seq += skipped(state)
        t = Turn(runner, state, context, None)
        t.asker = partial(guardrails.ask, t)
        supervisor = team.supervisor or state.active_agent or team.entry
        state.messages.append(Note(f"Plan of {len(plan)} steps by {supervisor}.", supervisor))
        observe(t)
        t.emit("run_started", {"agent": supervisor, "text": f"plan ({len(plan)} steps)"})
        leg = Leg(team.plan(supervisor), main=True)
        answers: dict[str, str] = {}
        res: RunResult | None = None
        last = ""
        last_agent = supervisor
        counter = 0
        for step in plan:
            group = step.parallel or (step,)
            named = []
            for s in group:
                counter += 1
                named.append((s.name or f"step{counter}", s))
            outs = await asyncio.gather(*(
                _step(t, leg, name, s, dict(answers)) for name, s in named))
            for (name, s), (text, fail) in zip(named, outs, strict=True):
                if fail is not None:
                    res = failed(t, fail)
                    break
                answers[name] = text
                state.messages.append(AssistantMessage(text, s.agent))
                last, last_agent = text, s.agent
            if res is not None:
                break
        if res is None:
            res = result(t, last, last_agent, RunStatus.COMPLETED)
        res.steps = answers
        finish(t, res)
        await held.commit(t.lazy_events)
        return res

    return await session_turn(runner.store, session_id, run, partial(new_session, runner))


async def _step(t: Turn, leg: Leg, name: str, step: PlanStep,
                earlier: dict[str, str]) -> tuple[str, Fail | None]:
    """One plan step as a `plan_step` delegation, with error recovery once."""
    team = t.team
    source = leg.agent.name
    t.emit("plan_step_started", {"step": name, "agent": step.agent, "task": step.task})
    rejection = team.policy.check_plan_step(team, source, step.agent, t.state)
    fail: Fail | None
    if rejection is not None:
        fail = Fail(rejection.code, rejection.message, step.agent)
        text = ""
    else:
        text, fail = await _delegation(t, leg, name, step.agent, step.task, earlier,
                                       HandoffReason.PLAN_STEP)
    if fail is not None and fail.recoverable and team.fallback not in (None, step.agent):
        earlier = {**earlier, "failed": f"{fail.agent}: {fail.code}: {fail.message}"}
        text, fail = await _delegation(
            t, leg, name, team.fallback or "", step.task, earlier,
            HandoffReason.ERROR_RECOVERY,
            {"code": fail.code, "message": fail.message, "agent": fail.agent})
    t.emit("plan_step_completed", {"step": name, "agent": step.agent, "text": text,
                                   "status": "failed" if fail else "completed"})
    return text, fail


async def _delegation(t: Turn, leg: Leg, name: str, agent: str, task: str,
                      earlier: dict[str, str], reason: HandoffReason,
                      error: dict[str, str] | None = None) -> tuple[str, Fail | None]:
    target = t.team[agent]
    route = Route(leg.agent.name, Handoff(agent, returns=True), target, "plan_step",
                  ToolSpec("plan_step", "", {}))
    extra: dict[str, Any] = {"step": name, "task": task, "results": earlier}
    if error is not None:
        extra["error"] = error
    fx = t.runner.executor  # ids and the clock through the executor (a workflow's)
    record = HandoffRecord(fx.new_id(), leg.agent.name, agent, reason, task, at=fx.now(),
                           turn=t.state.turn, returns=True, extra=extra)
    t.add_record(record)
    text, fail = await delegate(t, leg, route, record, None, activate, task, pausable=False)
    assert not isinstance(fail, Pause)  # a plan step's delegate is not pausable
    return text, fail
