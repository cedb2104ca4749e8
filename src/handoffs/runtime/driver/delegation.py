"""Return-control handoffs: a delegate works on its own line and answers its caller.

A delegate sees a fixed window of the conversation (through the route's history view)
followed by its own messages, which never enter the shared transcript: only its answer
does, as the caller's call result. Its activation is the same as the main line's; the
loop passes it in (`activate`), so this module does not depend on the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ...core.handoff import HandoffRecord
from ...core.history import Window, own_tools_filter, render_conversation
from ...core.messages import HandoffMark, Message, ToolResult, UserMessage
from ...core.policy import Rejection
from ...core.team import Route
from ..decisions.asks import HandoffAsk
from ..decisions.views import checked_filter, window
from ..state import Answer, Fail, Leg, Outcome, Pause, Turn, append, history_of, turn_text
from . import guardrails
from .context import ctx_of
from .moves import answer_call, handoff_data, log, log_accepted, refuse
from .settle import call_hook, summary_for

Activate = Callable[[Turn, Leg], Awaitable[Outcome]]


async def run_all(t: Turn, leg: Leg, delegations: list[tuple[HandoffAsk, HandoffRecord, Any]],
                  results: list[ToolResult | None], marks: list[HandoffMark | None],
                  activate: Activate) -> tuple[HandoffAsk, Pause] | None:
    """Run a response's accepted delegations concurrently; each answer is its call's
    result. A delegate that waits for a person's approval is returned with its ask (the
    others finish first); a second one at the same time is told it cannot wait."""
    answers = await asyncio.gather(*(
        delegate(t, leg, ask.route, record, payload, activate,  # type: ignore[arg-type]
                 record.extra.get("task"))
        for ask, record, payload in delegations))
    paused: tuple[HandoffAsk, Pause] | None = None
    for (ask, record, _), (text, fail) in zip(delegations, answers, strict=True):
        if isinstance(fail, Pause):
            if paused is None:
                paused = (ask, fail)
                continue
            text = (f"{fail.agent} needed a person's approval while another delegation of "
                    "this response was waiting for one; it was not made.")
        answer_call(t, leg, ask, results, marks, text, fail is not None, "delegated",
                    record.extra.get("task"))
    return paused


async def delegate(t: Turn, leg: Leg, route: Route, record: HandoffRecord, payload: Any,
                   activate: Activate, task: str | None = None, pausable: bool = True
                   ) -> tuple[str, Fail | Pause | None]:
    """Run a delegation to its answer: the text for the caller, and the failure if any
    (or the `Pause` of a delegate that waits for a person's approval).

    `task` (the model's `task` argument, or a plan step's) is the last thing the delegate
    sees, after its history view, as a user message.
    """
    target = route.target
    base = _base(t, leg, route)
    sub = Leg(t.team.plan(target.name), main=False, depth=leg.depth + 1, base=base,
              line=record.id)
    sub.pausable = pausable and leg.main
    sub.handed(record, payload, route)
    step = "on_handoff hook"
    try:  # a hook or summary that fails refuses the delegation: the caller is told
        if route.handoff.on_handoff is not None:
            await call_hook(route, ctx_of(t, sub), payload)
        step = "summary"
        if history_of(route, t) == "summary":
            sub.summary = record.summary = await summary_for(t, leg, route)
    except Exception as exc:
        code = "handoff_hook_failed" if step != "summary" else "summary_failed"
        message = (f"The {step} of the delegation to {target.name!r} failed "
                   f"({type(exc).__name__}: {exc}); the delegation was not made.")
        refuse(t, leg, record, Rejection(code, message), exc)
        return message, Fail(code, message, leg.agent.name, exception=exc)
    t.emit("agent_handoff", handoff_data(record, record.source, target.name, returns=True))
    if log.isEnabledFor(logging.INFO):
        log_accepted(t, record)
    if task is not None and not _shown(base, task):
        append(t, sub, UserMessage(task, target.name))
    t.emit("agent_started", {"agent": target.name, "display_name": target.label})
    outcome: Outcome | None = None
    if target.input_guardrails:
        outcome = await guardrails.check(
            t, sub, "input", task if task is not None else turn_text(t))
    if outcome is None:
        coro = activate(t, sub)
        if route.handoff.timeout is not None:
            try:
                outcome = await t.runner.executor.within(coro, route.handoff.timeout)
            except TimeoutError:
                outcome = Fail("timeout", f"{target.name} did not answer within "
                               f"{route.handoff.timeout:g} s.", target.name)
        else:
            outcome = await coro
    if isinstance(outcome, Pause):
        return "", outcome
    return await finish(t, sub, record, outcome)


def resumed_leg(t: Turn, leg: Leg, route: Route, record: HandoffRecord, payload: Any,
                messages: list[Message]) -> Leg:
    """The line of a delegation that waited for approval, as it was when it paused (the
    caller's transcript has not moved since, so its base view is the same)."""
    sub = Leg(t.team.plan(route.target.name), main=False, depth=leg.depth + 1,
              base=_base(t, leg, route), line=record.id)
    sub.pausable = True
    sub.handed(record, payload, route)
    for m in messages:
        append(t, sub, m)
    return sub


async def finish(t: Turn, sub: Leg, record: HandoffRecord,
                 outcome: Outcome) -> tuple[str, Fail | Pause | None]:
    """A delegate's outcome as its caller's call result: the text, and the failure."""
    if isinstance(outcome, Pause):
        return "", outcome
    if isinstance(outcome, Answer):
        outcome = await guardrails.check(t, sub, "output", outcome.text) or outcome
    fail: Fail | None = None
    if isinstance(outcome, Answer):
        text = outcome.text
    elif isinstance(outcome, Fail) and outcome.check is not None and (
            outcome.check.reply is not None):  # a guardrail's reply answers the caller
        text = outcome.check.reply
    elif isinstance(outcome, Fail):
        fail = outcome
        text = f"{outcome.agent} could not answer ({outcome.code}): {outcome.message}"
        record.extra["error"] = {"code": outcome.code, "message": outcome.message,
                                 "agent": outcome.agent}
    else:  # a transfer out of a delegation to a human or a cold route
        assert not isinstance(outcome, Pause)
        text = f"{outcome.target.name} took the request over."
    record.extra["answer"] = text
    t.emit("agent_returned", {"source": sub.agent.name, "target": record.source,
                              "record_id": record.id, "text": text, "ok": fail is None})
    return text, fail


def _shown(base: Window, task: str) -> bool:
    """Whether the delegate already sees `task` as the latest user message of its view
    (a caller that gave no task hands over the user's message, which the view holds)."""
    for i in range(len(base) - 1, -1, -1):
        m = base[i]
        if isinstance(m, UserMessage):
            return m.text == task
    return False


def _base(t: Turn, leg: Leg, route: Route) -> Window:
    """What a delegate sees of the conversation before its own work."""
    current = window(t, leg)
    mode = history_of(route, t)
    if mode == "full":
        return current
    msgs = list(current)
    seq: list[Message]
    if callable(mode):
        seq = list(checked_filter(mode, f"{route.source} -> {route.target.name}")(msgs))
    elif mode == "conversation":
        seq = [c for c in map(render_conversation, msgs) if c is not None]
    elif mode == "own_tools":  # the delegate's own traffic kept, nobody else's
        seq = own_tools_filter(route.target.name)(msgs)
    elif mode == "last_user":
        seq = []
        for m in reversed(msgs):
            if isinstance(m, UserMessage):
                seq.append(m)
                break
    else:
        seq = []
    return Window(((seq, 0, len(seq)),))

