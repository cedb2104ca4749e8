"""What an agent's model is sent: its system text, its view of the transcript, its tools.

DESIGN.md's first step of the loop, as pure functions of the turn's state: the agent's
instructions (plus the handoff instructions, the source's transferred instructions, the
handoff note and the summary a handoff brings: `compose`), the transcript seen through
the agent's history view (`window`), its tools and its enabled handoffs (`request`).
Instructions given as a function and MCP servers' tools are resolved by the driver
(`driver.requests`), which then asks `request` for the request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.context import RunContext
from ...core.handoff import Handoff, HandoffRecord, handoff_note
from ...core.history import CustomFilter, TranscriptViews, Window, views_of
from ...core.messages import AssistantMessage, Message, UserMessage
from ...core.team import AgentPlan
from ...core.tools import ToolSpec
from ...errors import HandoffsError
from ...models.base import NO_SETTINGS, ModelRequest
from ..state import Leg, Turn, history_of


def request(t: Turn, leg: Leg, system: str, extra: tuple[ToolSpec, ...] = ()) -> ModelRequest:
    """The model request for the leg's current agent, as of now, given its system text
    (the driver resolves an instructions function and MCP servers' tools: `extra`). After
    a narrated handoff the request offers only the transfer tools, once; routes refused
    twice in a row are not offered (`decisions.converge`)."""
    agent = leg.agent
    plan = leg.plan
    force = leg.force
    if force is not None:  # once: the transfer tools after a narrated handoff
        leg.force = None
        return ModelRequest(agent.name, system, window(t, leg), force[0], force[1],
                            agent.model_settings or NO_SETTINGS, plan.output,
                            plan.parallel_tool_calls)
    choice = agent.tool_choice
    if choice is not None and agent.name in t.forced:
        choice = "auto"  # the forced call was made this turn (Agent.reset_tool_choice)
    tools = plan.specs if plan.static else specs(plan, ctx_of(t, leg))
    hidden = leg.hidden
    if hidden:  # routes refused twice in a row (decisions.converge)
        tools = tuple(s for s in tools if s.name not in hidden)
    if extra:
        tools = (*tools, *extra)
    return ModelRequest(
        agent.name, system, window(t, leg), tools,
        choice, agent.model_settings or NO_SETTINGS, plan.output, plan.parallel_tool_calls,
    )


def ctx_of(t: Turn, leg: Leg) -> RunContext:
    """The `RunContext` tools, instructions, guardrails and hooks of the leg's agent get."""
    ctx = leg.ctx
    if ctx is None:
        state = t.state
        ctx = leg.ctx = RunContext(state.id, leg.agent.name, state.turn, state.shared,
                                   t.context, leg.handoff, state.channel)
    return ctx


def window(t: Turn, leg: Leg) -> Window:
    """The leg's agent's view of the transcript (a delegate: its base plus its own work)."""
    if not leg.main:
        assert leg.base is not None
        return leg.base.extended(leg.rendered)
    state = t.state
    spec = state.view
    custom = None
    if spec.mode == "custom":
        route = leg.route  # the route that opened the view, if it still exists
        history = history_of(route, t) if route is not None else None
        if callable(history) and route is not None:
            custom = checked_filter(history, f"{route.source} -> {route.target.name}")
    views: TranscriptViews | None = state.cache
    if views is None:
        views = views_of(state)
    return views.window(state.messages, spec, custom, leg.agent.name)


def checked_filter(fn: CustomFilter, route: str) -> CustomFilter:
    """A route's history filter whose output must be a sequence of messages."""
    def run(messages: Sequence[Message]) -> Sequence[Message]:
        out = fn(messages)
        if not isinstance(out, list | tuple):
            what = f"{type(out).__name__} {out!r:.80}"
        else:
            bad = next((m for m in out if not isinstance(m, Message)), None)
            if bad is None:
                return out
            what = f"a {type(out).__name__} holding {type(bad).__name__} {bad!r:.80}"
        raise HandoffsError(
            f"The history filter of the route {route} must return a list of messages "
            f"(UserMessage, AssistantMessage, ToolResult, Note), not {what}.",
            code="invalid_history")
    return run


def enabled(h: Handoff, ctx: RunContext) -> bool:
    """Whether a route is offered now (`Handoff.enabled` may be a callable of the context)."""
    e = h.enabled
    return bool(e(ctx)) if callable(e) else e


def specs(plan: AgentPlan, ctx: RunContext) -> tuple[Any, ...]:
    """The tool specs of an agent whose routes are enabled per context."""
    out = [tl.spec for tl in plan.tools.values()]
    for r in plan.routes.values():
        if r.target.enabled and enabled(r.handoff, ctx):
            out.append(r.spec)
    return tuple(out)


def taking_over(t: Turn, record: HandoffRecord) -> bool:
    """Whether the target of `record` has yet to answer the user since the handoff: in the
    handoff's own turn, or in the next one after a transfer that ended its turn (a
    `next_turn` route, the user's pick). Reads back two turns at most."""
    state = t.state
    if record.turn == state.turn or record.returns:
        return True
    if record.turn != state.turn - 1:
        return False
    messages = state.messages
    users = 0
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, UserMessage):
            users += 1
            if users == 2:
                break
        elif isinstance(m, AssistantMessage) and m.text and m.agent == record.target:
            return False
    return True


def compose(t: Turn, leg: Leg, text: str) -> str:
    """The agent's instructions plus how to hand off (`Team(handoff_instructions=...)`)
    and what its handoff brings: note, source, summary."""
    record = leg.record
    routing = leg.plan.handoff_text
    if record is None:
        if not routing:
            return text
        return f"{text}\n\n{routing}" if text else routing
    parts = [text] if text else []
    if routing:
        parts.append(routing)
    route = leg.route
    if route is not None and route.handoff.transfer_system_message:
        src = t.team.get(record.source)
        if src is not None and isinstance(src.instructions, str) and src.instructions:
            parts.append(f"# Instructions of {src.label} (transferred)\n{src.instructions}")
    note = handoff_note(record, leg.payload, taking_over=(
        record.turn == t.state.turn or taking_over(t, record)))
    if note:
        parts.append(note)
    summary = leg.summary or record.summary
    if summary:
        parts.append(f"# Summary of the conversation so far\n{summary}")
    return "\n\n".join(parts)
