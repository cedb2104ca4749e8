"""A forcing tool_choice is relaxed once the agent made the forced call in the turn."""

from __future__ import annotations

from handoffs import Agent, Runner, RunStatus, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: paid"


async def test_a_required_tool_choice_lets_the_agent_answer_after_its_call() -> None:
    agent = Agent("solo", tools=[lookup], tool_choice="required")
    model = ScriptedModel([call("lookup", order_id="A1"), reply("A1 is paid.")])

    result = await Runner(Team([agent]), model=model).run("s", "status of A1?")

    assert result.status is RunStatus.COMPLETED and result.output == "A1 is paid."
    assert [r.tool_choice for r in model.requests] == ["required", "auto"]


async def test_a_forced_handoff_is_not_forced_again_when_control_comes_back() -> None:
    triage = Agent("triage", handoffs=["billing"], tool_choice="billing")
    billing = Agent("billing", handoffs=["triage"])
    model = ScriptedModel([transfer("billing"), transfer("triage"), reply("Triage again.")])

    result = await Runner(Team([triage, billing]), model=model).run("s", "hi")

    assert result.agent == "triage" and result.output == "Triage again."
    assert [r.tool_choice for r in model.requests] == ["billing", None, "auto"]


async def test_the_choice_is_forced_again_on_the_next_turn() -> None:
    agent = Agent("solo", tools=[lookup], tool_choice="required")
    model = ScriptedModel([call("lookup", order_id="A1"), reply("Paid."),
                           call("lookup", order_id="A2"), reply("Paid too.")])
    runner = Runner(Team([agent]), model=model)

    await runner.run("s", "A1?")
    await runner.run("s", "A2?")

    assert [r.tool_choice for r in model.requests] == ["required", "auto", "required", "auto"]


async def test_reset_tool_choice_false_keeps_every_request_forced() -> None:
    agent = Agent("solo", tools=[lookup], tool_choice="required", reset_tool_choice=False)
    model = ScriptedModel([call("lookup", order_id="A1"), reply("A1 is paid.")])

    await Runner(Team([agent]), model=model).run("s", "status of A1?")

    assert [r.tool_choice for r in model.requests] == ["required", "required"]
