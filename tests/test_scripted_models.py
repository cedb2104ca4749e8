"""`ScriptedModel` with one script per agent: concurrent delegations each play their own
steps, whatever order their model calls interleave in."""

from __future__ import annotations

import asyncio

import pytest

from handoffs import Agent, Handoff, Runner, RunStatus, Team, ToolResult, tool
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool
async def check(order_id: str) -> str:
    """Check the refund rules for an order (slow)."""
    await asyncio.sleep(0.01)
    return f"{order_id}: within 30 days"


def desk_team() -> Team:
    billing = Agent("billing", handoffs=[Handoff("policy", returns=True),
                                         Handoff("fraud", returns=True)])
    return Team([billing, Agent("policy", tools=[check]), Agent("fraud")])


async def test_parallel_delegations_play_their_own_scripts() -> None:
    model = ScriptedModel({
        "billing": [[transfer("policy", reason="allowed?"), transfer("fraud", reason="fraud?")],
                    reply("Refund approved.")],
        # policy calls a slow tool, so fraud's answer comes in between its two steps
        "policy": [call("check", order_id="A-1"), reply("Allowed: within 30 days.")],
        "fraud": [reply("No fraud.")],
    })
    result = await Runner(desk_team(), model=model).run("s", "refund A-1")

    assert result.status is RunStatus.COMPLETED and result.output == "Refund approved."
    order = [r.agent for r in model.requests]
    assert order == ["billing", "policy", "fraud", "policy", "billing"]
    answers = {m.name: m.text for m in model.requests[-1].messages
               if isinstance(m, ToolResult)}
    assert answers == {"ask_policy": "Allowed: within 30 days.",  # delegations ask
                       "ask_fraud": "No fraud."}
    assert model.remaining == 0


async def test_an_agent_without_a_script_fails_the_run_with_a_clear_message() -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = ScriptedModel({"triage": [transfer("billing")]})
    result = await Runner(team, model=model).run("s", "refund A-1")

    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "script_exhausted"
    assert result.error.message == (
        "The scripted model has no script for agent 'billing' (it has scripts for "
        "triage). Add one: {'billing': [...]}.")


async def test_an_agents_script_runs_out_on_its_own() -> None:
    model = ScriptedModel({"billing": [reply("one")]})
    team = Team([Agent("billing")])
    runner = Runner(team, model=model)
    assert (await runner.run("s", "hi")).output == "one"
    second = await runner.run("s", "again")
    assert second.error is not None and "played all 1 of 'billing'" in second.error.message
    model.add(reply("two"), agent="billing")
    assert (await runner.run("s", "again")).output == "two"


def test_add_says_whose_steps_are_meant() -> None:
    with pytest.raises(TypeError, match="say whose steps"):
        ScriptedModel({"billing": []}).add(reply("x"))
    with pytest.raises(TypeError, match="one shared script"):
        ScriptedModel([]).add(reply("x"), agent="billing")


async def test_the_shared_script_still_plays_in_order() -> None:
    model = ScriptedModel([transfer("policy"), reply("Allowed."), reply("Approved.")])
    result = await Runner(desk_team(), model=model).run("s", "refund")
    assert result.output == "Approved." and model.remaining == 0
