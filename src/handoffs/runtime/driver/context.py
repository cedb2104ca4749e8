"""The `RunContext` of a line's agent, made once per agent and handoff and kept on the
line (`Leg.ctx`, cleared when the agent or its handoff changes): every tool, hook,
guardrail and instructions function of that agent gets the same one. The decisions read
the kept one (`decisions.views.run_context`), and keep none themselves."""

from __future__ import annotations

from ...core.context import RunContext
from ..state import Leg, Turn


def ctx_of(t: Turn, leg: Leg) -> RunContext:
    """The `RunContext` tools, instructions, guardrails and hooks of the leg's agent get
    (made on first need, then kept)."""
    ctx = leg.ctx
    if ctx is None:
        state = t.state
        ctx = leg.ctx = RunContext(state.id, leg.agent.name, state.turn, state.shared,
                                   t.context, leg.handoff, state.channel, asker=t.asker)
    return ctx
