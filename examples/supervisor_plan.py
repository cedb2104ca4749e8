"""A planner runs sequential and parallel steps over specialists; a failing step goes to
the team's fallback.

`runner.run_plan` delegates each step (`plan_step`); a list is a group run at once; each
step's answer reaches later steps (`ctx.handoff.results` and the handoff note). The
pricing agent's model is down, so its step is recovered by the fallback
(`error_recovery`) and the plan still completes.

    python examples/supervisor_plan.py
    handoffs chat examples/supervisor_plan.py:team     (the planner, on the offline model)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from playback import announce, printer, real_model

from handoffs import Agent, ModelError, Runner, Team
from handoffs.core.plan import PlanStep
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta
from handoffs.testing import ScriptedModel, reply


class Outage:
    """A model whose provider is down: every call fails with `model_error`."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("pricing-model: 503 Service Unavailable", retryable=True)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        raise ModelError("pricing-model: 503 Service Unavailable", retryable=True)
        yield  # an async generator that fails on first use


def build(model: str | None, scripted: bool = True) -> Team:
    """The team; offline each agent plays its own script, so parallel steps stay ordered.
    `scripted=False` leaves the agents without a model of their own (the pricing agent's
    outage stays), so whatever runs the team gives them one: the plan's scripts are for
    `main()`, not for a conversation (`handoffs chat` uses its offline model)."""

    def own(*texts: str) -> ScriptedModel | None:
        return None if model or not scripted else ScriptedModel([reply(t) for t in texts])

    return Team([
        Agent("planner", description="Breaks a request into steps.", icon="🗂",
              instructions="Plan the work.", model=own()),
        Agent("research", description="Finds facts.", icon="🔎",
              instructions="Find the facts asked for, in two sentences.",
              model=own("Competitors charge $10-$14 per seat; none offers a free tier.")),
        Agent("writer", description="Writes copy.", icon="✍",
              instructions="Write the copy asked for, in two sentences.",
              model=own("Draft: 'Handoffs Team: $12 per seat, the first 3 seats free.'")),
        Agent("legal", description="Checks claims.", icon="⚖",
              instructions="List claims that need checking.",
              model=own("'first 3 seats free' must state the limit: up to 3 seats.")),
        Agent("pricing", description="Sets prices.", icon="💲",
              instructions="Propose a price.", model=Outage()),
        Agent("generalist", description="Picks up failed work.", icon="🧰",
              instructions="Do the task another agent could not finish, from the results "
              "so far.", model=own("Recovered: $12 per seat, first 3 seats free, per the "
                                   "research and legal notes.")),
    ], supervisor="planner", fallback="generalist")


team = build(real_model(), scripted=False)
"""For `handoffs chat`, `run` and `check examples/supervisor_plan.py:team`."""

PLAN = [
    PlanStep("research", "What do competitors charge per seat?", name="facts"),
    [PlanStep("writer", "Draft a one-line pricing announcement.", name="draft"),
     PlanStep("legal", "Which claims in a free-seats offer need care?", name="review")],
    PlanStep("pricing", "Propose the final price.", name="price"),
]


async def main() -> int:
    model = real_model()
    announce(model)
    team = build(model)
    runner = Runner(team, model=model, store="memory://")
    result = await runner.run_plan("plan-1", PLAN)
    out = printer(team)
    for event in result.events:  # a plan's events, in order
        out.show(event)
    out.line()
    for step, text in result.steps.items():
        print(f"{step}: {text}")
    recovered = [r.extra["step"] for r in result.handoffs if r.reason == "error_recovery"]
    print(f"status {result.status}; steps recovered by the fallback: {recovered}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
