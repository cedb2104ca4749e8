"""A model request whose building takes awaiting: an agent's instructions given as a
function (sync or async, of the `RunContext`) and its MCP servers' tools. Whether it does
is one rule (`awaits`): when it does not, the driver asks the decisions for the request at
once (`decisions.views.request`), without a coroutine, with what it keeps per agent and
handoff (the system text, the handoff's note, the context: `loop._steps`, and `keep`
here)."""

from __future__ import annotations

import inspect

from ...models.base import ModelRequest
from ..decisions.views import compose, note_of, request
from ..state import Leg, Turn
from .context import ctx_of


def awaits(leg: Leg) -> bool:
    """Whether building the leg's next model request takes awaiting (`request_for`): its
    agent's instructions are a function, or its MCP servers' tools are offered (not when
    the request's tools are forced: `Leg.force`)."""
    agent = leg.agent
    return (leg.force is None and bool(agent.mcp)) or callable(agent.instructions)


async def request_for(t: Turn, leg: Leg) -> ModelRequest:
    """The model request for the leg's current agent, as of now, with what building it
    takes awaiting (`awaits`): its instructions function's text, its MCP servers' tools
    (and a note of those that could not be listed, after the system text)."""
    agent = leg.agent
    instructions = agent.instructions
    if callable(instructions):
        value = instructions(ctx_of(t, leg))
        if inspect.isawaitable(value):
            value = await value
        system = compose(t, leg, str(value))
        keep(t, leg)
    else:
        kept = leg.system  # instructions as text: composed once per agent and handoff
        if kept is None:
            kept = leg.system = compose(t, leg, instructions)
            keep(t, leg)
        system = kept
    if leg.force is not None or not agent.mcp:
        return request(t, leg, system)
    plan = leg.plan
    offered, down = await t.runner.executor.mcp_offer(t, agent, (*plan.tools, *plan.routes))
    if down:  # told after the system text
        system = f"{system}\n\n{down}" if system else down
    return request(t, leg, system, tuple(offered))


def keep(t: Turn, leg: Leg) -> None:
    """What the agent's requests reuse until it or its handoff changes, kept on the line:
    the handoff's note (`views.note_of`) and, when its routes are enabled per context,
    its `RunContext`."""
    if leg.note is None and leg.record is not None:
        leg.note = note_of(leg)
    if not leg.plan.static:
        ctx_of(t, leg)
