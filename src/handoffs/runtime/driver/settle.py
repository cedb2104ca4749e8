"""What an accepted handoff takes before it completes: the route's `on_handoff` hook and
a summary route's summary, both awaited (`prepare`), then the decisions record it
(`driver.moves.complete_transfer`). Whether a transfer takes either is one rule
(`awaits`): without, the driver completes it at once, without a coroutine. A hook or
summary that fails refuses the handoff (`handoff_hook_failed`, `summary_failed`) and fails
the agent, so nothing of it is half applied."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ...core.context import RunContext
from ...core.messages import AssistantMessage, HandoffMark, Message, Note, ToolResult
from ...core.team import Route
from ..decisions.handoffs import Decision
from ..decisions.views import window
from ..state import Fail, Leg, Transfer, Turn, history_of
from .context import ctx_of
from .moves import failed_after


def awaits(t: Turn, transfer: Transfer | None) -> bool:
    """Whether completing the transfer takes awaiting (`prepare`): its route has an
    `on_handoff` hook or hands over a summary. False: `complete_transfer` it now."""
    route = None if transfer is None else transfer.route
    if route is None:
        return False
    h = route.handoff
    return h.on_handoff is not None or (h.history if h.history is not None  # history_of,
                                        else t.runner.history) == "summary"  # inlined


async def prepare(t: Turn, leg: Leg, decision: Decision, results: list[ToolResult | None],
                  marks: list[HandoffMark | None], said: str) -> Fail | None:
    """What the response's accepted transfer takes before it completes (`awaits`): its
    route's hook, then its summary (made once, from what the source saw and `said`, before
    the view moves on). A failure refuses the handoff: the agent's `Fail`. None: complete
    it (`complete_transfer`)."""
    transfer = decision.transfer
    ask = decision.transfer_ask
    if transfer is None or ask is None or transfer.route is None:
        return None
    route = transfer.route
    record = transfer.record
    if route.handoff.on_handoff is not None:
        try:
            await call_hook(route, ctx_of(t, leg), transfer.payload)
        except Exception as exc:
            return failed_after(t, leg, ask, record, results, marks, "handoff_hook_failed",
                                f"The on_handoff hook of the route to {ask.target!r} failed "
                                f"({type(exc).__name__}: {exc}); the handoff was not made.",
                                exc, decision)
    if history_of(route, t) == "summary":
        try:
            record.summary = await summary_for(t, leg, route, said)
        except Exception as exc:
            return failed_after(t, leg, ask, record, results, marks, "summary_failed",
                                f"The summary for the handoff to {ask.target!r} could not "
                                f"be made ({type(exc).__name__}: {exc}); the handoff was "
                                "not made.", exc, decision)
    return None


async def call_hook(route: Route | None, ctx: RunContext, payload: Any) -> None:
    """The route's `on_handoff(ctx, payload)` (or `on_handoff(ctx)`), awaited if it is a
    coroutine."""
    hook: Callable[..., Any] | None = None if route is None else route.handoff.on_handoff
    if route is None or hook is None:
        return
    value = hook(ctx, payload) if route.handoff.hook_takes_payload else hook(ctx)
    if inspect.isawaitable(value):
        await value


async def summary_for(t: Turn, leg: Leg, route: Route, said: str = "") -> str:
    """The summary a `history="summary"` route hands over: made once, from everything
    the source saw (its own incoming summary included, so summaries accumulate over
    chained handoffs) and what it said last; the caller stores it on the record."""
    summarizer = route.handoff.summarizer or t.team.summarizer
    messages: list[Message] = []
    incoming = leg.summary or (leg.record.summary if leg.record is not None else None)
    if incoming:
        messages.append(Note(f"Summary of the conversation before {route.source} took "
                             f"over:\n{incoming}", route.source, to_model=True))
    messages.extend(window(t, leg))
    if said:
        messages.append(AssistantMessage(said, route.source))
    from ..effects.summary import summarize  # only routes with history="summary"

    fallback_model = t.models[route.source]
    return await summarize(t.runner.executor, t, summarizer, fallback_model, messages,
                           route.source, route.target.name)
