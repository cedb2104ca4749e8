"""Running an agent's own input and output guardrails (never inherited through a handoff)."""

from __future__ import annotations

import inspect

from ...core.guardrails import GuardrailResult, guardrail_name
from ..decisions.views import ctx_of
from ..state import Fail, Leg, Turn


async def check(t: Turn, leg: Leg, stage: str, text: str) -> Fail | None:
    """Run the leg's agent's guardrails for `stage`; the first trip fails the agent."""
    agent = leg.agent
    checks = agent.input_guardrails if stage == "input" else agent.output_guardrails
    if not checks:
        return None
    ctx = ctx_of(t, leg)
    for g in checks:
        verdict = g(ctx, text)
        if inspect.isawaitable(verdict):
            verdict = await verdict
        if verdict is None or verdict is True or (
            isinstance(verdict, GuardrailResult) and not verdict.tripped
        ):
            continue
        message = verdict.message if isinstance(verdict, GuardrailResult) else (
            f"{guardrail_name(g)} refused the {stage}.")
        t.emit("guardrail_tripped", {"agent": agent.name, "guardrail": guardrail_name(g),
                                     "stage": stage, "message": message})
        return Fail("guardrail_tripped", message, agent.name)
    return None
