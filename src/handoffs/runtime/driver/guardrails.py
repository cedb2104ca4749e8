"""Running an agent's own input and output guardrails (never inherited through a handoff).

An agent's guardrails for one stage run concurrently (`check`); its input guardrails
may also run beside its first model call (`begin`, then `verdict` once the call is
back): a trip then throws the response away before any of it (tool calls, handoffs)
runs. Every verdict is a `guardrail_checked` event and a `GuardrailCheck` of the turn;
a trip is also a `guardrail_tripped` event, and with a reply the agent answers with it
(`refuse`).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import TYPE_CHECKING, Any

from ...core.context import RunContext
from ...core.guardrails import GuardrailCheck, GuardrailResult, blocks, guardrail_name
from ...core.history import drop_views
from ...core.messages import AssistantMessage
from ...log import fields
from ..effects.executor import UNSTREAMED as UNSTREAMED
from ..state import Fail, Leg, Turn, append, result
from ..state.result import RunResult, RunStatus
from .context import ctx_of

if TYPE_CHECKING:
    from ...core import event_data as ed

log = logging.getLogger("handoffs.runtime.guardrails")


async def check(t: Turn, leg: Leg, stage: str, text: str) -> Fail | None:
    """Run the leg's agent's guardrails for `stage`, all at once; the first trip in the
    order they are declared fails the agent (None: every one passed)."""
    agent = leg.agent
    checks = agent.input_guardrails if stage == "input" else agent.output_guardrails
    if not checks:
        return None
    ctx = ctx_of(t, leg)
    if len(checks) == 1:
        verdicts = [await _verdict(checks[0], ctx, text)]
    else:
        verdicts = await asyncio.gather(*(_verdict(g, ctx, text) for g in checks))
    tripped: Fail | None = None
    for g, verdict in zip(checks, verdicts, strict=True):
        name = guardrail_name(g)
        passed = verdict is None or verdict is True or (
            isinstance(verdict, GuardrailResult) and not verdict.tripped)
        if isinstance(verdict, GuardrailResult):
            c = GuardrailCheck(name, agent.name, stage, passed,
                               "" if passed else verdict.message, verdict.reasoning,
                               None if passed else verdict.reply)
        else:
            c = GuardrailCheck(name, agent.name, stage, passed,
                               "" if passed else f"{name} refused the {stage}.")
        if t.checks is None:
            t.checks = []
        t.checks.append(c)
        t.emit("guardrail_checked", c.to_dict())
        if passed or tripped is not None:
            continue
        data: ed.GuardrailTripped = {"agent": agent.name, "guardrail": name, "stage": stage,
                                     "message": c.message}
        if c.reply is not None:
            data["reply"] = c.reply
        t.emit("guardrail_tripped", data)
        tripped = Fail("guardrail_tripped", c.message, agent.name, check=c)
    return tripped


async def _verdict(g: Any, ctx: RunContext, text: str) -> Any:
    verdict = g(ctx, text)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    return verdict


async def begin(t: Turn, leg: Leg, text: str) -> Fail | None:
    """Start the leg's agent's input guardrails on `text`: beside its first model call
    (`leg.guard`, None returned), or to their end first when one asks to block
    (`guardrail(block=True)`) or the agent is remote."""
    checks = leg.agent.input_guardrails
    if leg.agent.is_remote or any(blocks(g) for g in checks):
        return await check(t, leg, "input", text)
    leg.guard = asyncio.ensure_future(check(t, leg, "input", text))
    return None


async def verdict(leg: Leg) -> Fail | None:
    """The input check running beside the leg's first model call, once it ended (None:
    it passed, or there is none left to wait for)."""
    pending = leg.guard
    if pending is None:
        return None
    leg.guard = None
    return await pending


def drop(leg: Leg) -> None:
    """Stop an input check nobody will wait for (its turn ended another way)."""
    pending = leg.guard
    leg.guard = None
    if isinstance(pending, asyncio.Future) and not pending.done():
        pending.cancel()


def refuse(t: Turn, leg: Leg, fail: Fail) -> RunResult:
    """The turn's result when a guardrail tripped with a reply: the checking agent says
    it, the turn completes, and the refused exchange leaves the models' views."""
    c = fail.check
    assert c is not None and c.reply is not None
    append(t, leg, AssistantMessage(c.reply, c.agent, refused=c.name))
    if leg.main:
        drop_views(t.state)  # rendered again, the refused exchange left out
    if t.streaming:  # a reader shows it as it shows any streamed answer
        t.emit("text_delta", {"agent": c.agent, "text": c.reply})
    # ... and, like any answer, a `message` ends it (the page's bubble stops streaming).
    t.emit("message", {"agent": c.agent, "text": c.reply})
    state = t.state
    if log.isEnabledFor(logging.INFO):
        log.info("turn %d of %s: guardrail %s refused the %s (%s)", state.turn, state.id,
                 c.name, c.stage, c.message, extra=fields(state.id, state.turn, c.agent))
    return result(t, c.reply, c.agent, RunStatus.COMPLETED)




async def ask(t: Turn, agent: Any, text: str, output_type: Any = None) -> Any:
    """`ctx.ask` of the turn's contexts (bound to the turn with `functools.partial`): a
    one-shot call through the turn's executor, its tokens counted in the turn
    (`effects.ask`)."""
    from ..effects.ask import ask as one_shot

    return await one_shot(t.runner, t, agent, text, output_type)
