"""A model request, with what building it takes awaiting: an agent's instructions given
as a function (sync or async, of the `RunContext`) and its MCP servers' tools. The rest
is the decisions' (`decisions.views`)."""

from __future__ import annotations

import inspect

from ...models.base import ModelRequest
from ..decisions.views import compose, ctx_of, request
from ..state import Leg, Turn


def request_now(t: Turn, leg: Leg) -> ModelRequest | None:
    """`request_for` when nothing needs awaiting (instructions as text, no MCP servers
    to ask): the common case, made without a coroutine. None: await `request_for`."""
    agent = leg.agent
    if agent.mcp and leg.force is None:
        return None
    system = leg.system
    if system is None:
        instructions = agent.instructions
        if callable(instructions):
            return None
        system = leg.system = compose(t, leg, instructions)
    return request(t, leg, system)


async def request_for(t: Turn, leg: Leg) -> ModelRequest:
    """The model request for the leg's current agent, as of now."""
    system = leg.system
    if system is None:
        system = await system_text(t, leg)
    agent = leg.agent
    if agent.mcp and leg.force is None:
        plan = leg.plan
        offered, down = await t.runner.executor.mcp_offer(
            t, agent, (*plan.tools, *plan.routes))
        if down:
            system = f"{system}\n\n{down}" if system else down
        return request(t, leg, system, tuple(offered))
    return request(t, leg, system)


async def system_text(t: Turn, leg: Leg) -> str:
    """The agent's instructions with what its handoff brings (cached when they are text)."""
    cached = leg.system
    if cached is not None:
        return cached
    instructions = leg.agent.instructions
    if callable(instructions):
        value = instructions(ctx_of(t, leg))
        if inspect.isawaitable(value):
            value = await value
        return compose(t, leg, str(value))
    leg.system = text = compose(t, leg, instructions)
    return text
