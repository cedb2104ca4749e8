"""Triage on one provider, the specialist on another, in one conversation.

Each agent names its own model (`Agent(model=...)`). The transcript is neutral, so
each provider's adapter renders a history its API accepts: the specialist never sees the
triage model's tool-call ids or its handoff call, only a note saying who handed over.

    python examples/cross_provider.py
    TRIAGE_MODEL=openai:gpt-4.1-mini SPECIALIST_MODEL=anthropic:claude-sonnet-4-6 \\
        python examples/cross_provider.py
    handoffs chat examples/cross_provider.py:team   (offline: the offline model for both)
"""

from __future__ import annotations

import asyncio
import os

from playback import play

from handoffs import Agent, Runner, Team
from handoffs.testing import ScriptedModel, reply, transfer


def models(scripted: bool = True) -> tuple[object, object]:
    """Two models: the providers named by TRIAGE_MODEL and SPECIALIST_MODEL (or
    HANDOFFS_MODEL for both), else two scripted ones standing in for two providers (or,
    with `scripted=False`, none: whatever runs the team gives the agents a model)."""
    default = os.environ.get("HANDOFFS_MODEL")
    triage_model = os.environ.get("TRIAGE_MODEL") or default
    specialist_model = os.environ.get("SPECIALIST_MODEL") or default
    if triage_model and specialist_model:
        return triage_model, specialist_model
    if not scripted:
        return None, None
    return (ScriptedModel([transfer("visa", reason="A visa question for Japan.")]),
            ScriptedModel([reply("Citizens of most EU countries need no visa for stays "
                                 "of up to 90 days; bring a passport valid for the stay.")]))


def build(scripted: bool = True) -> Team:
    first, second = models(scripted)
    triage = Agent("triage", description="Routes travellers.", icon="🧭", model=first,
                   instructions="Route travel questions; visas go to the visa desk.",
                   handoffs=["visa"])
    visa = Agent("visa", description="Visa and entry rules.", icon="🛂", model=second,
                 instructions="Answer visa questions in two sentences.",
                 handoffs=["triage"])
    return Team([triage, visa])


team = build(scripted=False)
"""For `handoffs chat`, `run` and `check examples/cross_provider.py:team`: the two scripts
play one conversation once, so a chat gets the offline model (or the env's models)."""


async def main() -> int:
    team = build()
    for agent in team.agents:
        model = agent.model if isinstance(agent.model, str) else type(agent.model).__name__
        print(f"{agent.name} runs on {model}")
    print()
    runner = Runner(team, store="memory://")
    result = await play(runner, "trip-1", ["Do I need a visa for Japan? I'm German."])
    for agent, usage in result.usage_by_agent.items():
        print(f"{agent}: {usage.requests} model call(s)")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
