"""What an agent's model is sent: its system text, its view of the transcript, its tools.

DESIGN.md's first step of the loop, as pure functions of the turn's state: the agent's
instructions (plus the handoff instructions and the source's transferred instructions:
`compose`), the transcript seen through the agent's history view with the handoff's note
at the handoff (`window`), its tools and its enabled handoffs (`request`). The system
text depends on the agent (and a route that transfers instructions), never on the
handoff that brought it, so a provider's prompt cache keeps its prefix.
Instructions given as a function and MCP servers' tools are resolved by the driver
(`driver.requests`), which then asks `request` for the request. Nothing here is kept:
what an agent's requests reuse until it or its handoff changes (the composed system
text, the handoff's note, its `RunContext`) the driver keeps on the leg, and these read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...core.context import RunContext
from ...core.handoff import Handoff, note_message
from ...core.history import CustomFilter, TranscriptViews, Window, views_of
from ...core.messages import Message, Note
from ...core.team import AgentPlan
from ...core.tools import ToolSpec
from ...errors import HandoffsError
from ...models.base import NO_SETTINGS, ModelRequest
from ..state import Leg, Turn, history_of


def request(t: Turn, leg: Leg, system: str | None = None,
            extra: tuple[ToolSpec, ...] = ()) -> ModelRequest:
    """The model request for the leg's current agent, as of now: `system`, its system
    text (None: composed here of its instructions, text; the driver composes it once per
    agent and handoff and keeps it, `Leg.system`, or makes it of an instructions
    function), and `extra`, its MCP servers' tools the driver listed
    (`driver.requests`). After a narrated handoff the request offers only the transfer
    tools (`Leg.force`, which the driver clears once the request is made); routes refused
    twice in a row are not offered (`decisions.converge`)."""
    agent = leg.agent
    if system is None:
        instructions = agent.instructions
        assert isinstance(instructions, str)  # a function's text is awaited first
        system = compose(t, leg, instructions)
    plan = leg.plan
    force = leg.force
    if force is not None:  # once: the transfer tools after a narrated handoff
        return ModelRequest(agent.name, system, window(t, leg), force[0], force[1],
                            agent.model_settings or NO_SETTINGS, plan.output,
                            plan.parallel_tool_calls, t.state.shared, t.context)
    choice = agent.tool_choice
    if choice is not None and agent.name in t.forced:
        choice = "auto"  # the forced call was made this turn (Agent.reset_tool_choice)
    tools = plan.specs if plan.static else specs(plan, leg.ctx or run_context(t, leg))
    hidden = leg.hidden
    if hidden:  # routes refused twice in a row (decisions.converge)
        tools = tuple(s for s in tools if s.name not in hidden)
    if extra:
        tools = (*tools, *extra)
    client = t.client
    if client is not None and leg.main:  # the client's tools (`core.client_tools`)
        tools = (*tools, *(c.spec for c in client.values()))
    return ModelRequest(
        agent.name, system, window(t, leg), tools,
        choice, agent.model_settings or NO_SETTINGS, plan.output, plan.parallel_tool_calls,
        t.state.shared, t.context,
    )


def run_context(t: Turn, leg: Leg) -> RunContext:
    """The `RunContext` tools, instructions, guardrails and hooks of the leg's agent get:
    the one the driver keeps for the agent (`driver.context.ctx_of`), else a new one."""
    ctx = leg.ctx
    if ctx is not None:
        return ctx
    state = t.state
    return RunContext(state.id, leg.agent.name, state.turn, state.shared, t.context,
                      leg.handoff, state.channel, asker=t.asker)


def window(t: Turn, leg: Leg) -> Window:
    """The leg's agent's view of the transcript (a delegate: its base plus its own work),
    with the note of the handoff that gave it the work where that handoff happened."""
    if not leg.main:
        assert leg.base is not None
        w = leg.base.extended(leg.rendered)
        if leg.record is None:
            return w
        return w.inserted(leg.base._len + leg.note_at, leg.note or note_of(leg))
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
    w = views.window(state.messages, spec, custom, leg.agent.name)
    record = leg.record
    if record is None or record.id != spec.record_id:
        return w
    return w.inserted(w._len - views.since(spec.pivot), leg.note or note_of(leg))


def note_of(leg: Leg) -> Note:
    """The note of the handoff that gave the leg's agent its work (the driver keeps it
    once per agent and handoff, `Leg.note`; `window` reads that one first)."""
    record = leg.record
    assert record is not None
    return note_message(record, leg.summary or record.summary)


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


def compose(t: Turn, leg: Leg, text: str) -> str:
    """The agent's instructions plus how to hand off (`Team(handoff_instructions=...)`)
    and, for a route that transfers them, the source's instructions. The handoff's note
    and summary are not here: they are in the history, at the handoff (`window`)."""
    record = leg.record
    routing = leg.plan.handoff_text
    route = leg.route
    if record is None or route is None or not route.handoff.transfer_system_message:
        if not routing:
            return text
        return f"{text}\n\n{routing}" if text else routing
    parts = [text] if text else []
    if routing:
        parts.append(routing)
    src = t.team.get(record.source)
    if src is not None and isinstance(src.instructions, str) and src.instructions:
        parts.append(f"# Instructions of {src.label} (transferred)\n{src.instructions}")
    return "\n\n".join(parts)
