"""A general agent hands calculus to a specialist, who answers in the same turn.

    python examples/math_specialist.py
    handoffs chat examples/math_specialist.py:team
"""

from __future__ import annotations

import asyncio

from playback import announce, play, real_model

from handoffs import Agent, Runner, Team
from handoffs.testing import ScriptedModel, reply, transfer

general = Agent(
    "general", description="Everyday questions.", display_name="Generalist", icon="💬",
    instructions="Answer everyday questions. Hand calculus (derivatives, integrals, "
    "limits) to the calculus specialist.",
    handoffs=["calculus"],
)
calculus = Agent(
    "calculus", description="Derivatives, integrals and limits, step by step.",
    display_name="Calculus specialist", icon="∫", color="#7c3aed",
    instructions="Solve calculus problems step by step; end with the result on its own line.",
    handoffs=["general"],
)
team = Team([general, calculus])

QUESTION = "What is the derivative of x^3 * sin(x)?"


def script() -> ScriptedModel:
    return ScriptedModel([
        transfer("calculus", reason="A derivative: calculus work."),
        reply("Product rule: (x^3)' sin(x) + x^3 (sin x)' = 3x^2 sin(x) + x^3 cos(x)."),
    ], stream_chunks=12)


async def main() -> int:
    model = real_model() or script()
    announce(model)
    result = await play(Runner(team, model=model, store="memory://"), "math-1", [QUESTION])
    print(f"answered by {result.agent} after {len(result.handoffs)} handoff(s)")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
