"""A model request whose building takes awaiting: an agent's instructions given as a
function (sync or async, of the `RunContext`) and its MCP servers' tools. Whether it does
is one rule (`awaits`): when it does not, the driver asks the decisions for the request at
once (`decisions.views.request`), without a coroutine."""

from __future__ import annotations

import inspect

from ...models.base import ModelRequest
from ..decisions.views import compose, ctx_of, request
from ..state import Leg, Turn


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
    system: str | None = None  # instructions as text: `request` composes them (cached)
    if callable(instructions):
        value = instructions(ctx_of(t, leg))
        if inspect.isawaitable(value):
            value = await value
        system = compose(t, leg, str(value))
    if leg.force is not None or not agent.mcp:
        return request(t, leg, system)
    plan = leg.plan
    offered, down = await t.runner.executor.mcp_offer(t, agent, (*plan.tools, *plan.routes))
    if down:  # told after the system text
        if system is None:
            assert isinstance(instructions, str)
            system = compose(t, leg, instructions)
        system = f"{system}\n\n{down}" if system else down
    return request(t, leg, system, tuple(offered))
