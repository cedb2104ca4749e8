"""Human escalation, supervisor plans, summary history."""

from __future__ import annotations

import pytest

from handoffs import (
    Agent,
    Handoff,
    HandoffsError,
    HumanAgent,
    ModelError,
    RunContext,
    Runner,
    RunStatus,
    Summarizer,
    Team,
)
from handoffs.core.plan import PlanStep
from handoffs.testing import ScriptedModel, reply, transfer


def support() -> Team:
    bot = Agent("bot", handoffs=["operator"])
    operator = HumanAgent("operator", description="A person.", handoffs=["bot"])
    return Team([bot, operator])


async def test_a_handoff_to_a_human_waits_for_the_human() -> None:
    model = ScriptedModel([transfer("operator", reason="angry customer")])
    runner = Runner(support(), model=model)
    events = [e async for e in runner.stream("s", "I want a person")]
    result = events[-1].result
    assert result.status is RunStatus.WAITING_FOR_HUMAN and result.agent == "operator"
    assert result.handoffs[0].reason.value == "escalation"
    assert "human_waiting" in [e.type for e in events]
    state = await runner.get_session("s")
    assert state is not None and state.active_agent == "operator"


async def test_messages_while_a_human_holds_the_session_make_no_model_call() -> None:
    model = ScriptedModel([transfer("operator")])
    runner = Runner(support(), model=model)
    await runner.run("s", "person please")
    result = await runner.run("s", "hello? anyone?")
    assert result.status is RunStatus.WAITING_FOR_HUMAN
    assert len(model.requests) == 1
    state = await runner.get_session("s")
    assert state is not None and state.messages[-1].text == "hello? anyone?"


async def test_the_human_replies_and_hands_back_to_an_ai_agent() -> None:
    model = ScriptedModel([transfer("operator"), reply("Bot again: anything else?")])
    runner = Runner(support(), model=model)
    await runner.run("s", "person please")

    posted = await runner.reply_as_human("s", "Hi, Sam here. Fixed it.", handoff_to="bot")
    assert posted.agent == "bot"
    state = await runner.get_session("s")
    assert state is not None
    assert (state.messages[-1].text, state.messages[-1].agent) == (
        "Hi, Sam here. Fixed it.", "operator")
    assert state.active_agent == "bot"

    result = await runner.run("s", "thanks")
    assert result.agent == "bot"
    assert "Hi, Sam here. Fixed it." in [m.text for m in model.requests[-1].messages]


async def test_reply_as_human_without_a_waiting_human_is_refused() -> None:
    runner = Runner(support(), model=ScriptedModel([reply("hi")]))
    await runner.run("s", "hello")
    with pytest.raises(HandoffsError) as info:
        await runner.reply_as_human("s", "hi")
    assert info.value.code == "not_waiting_for_human"


def planning_team() -> Team:
    return Team([Agent("planner"), Agent("research"), Agent("writer"),
                 Agent("auditor", system_only=True), Agent("fixer")],
                supervisor="planner", fallback="fixer")


async def test_a_plan_runs_each_step_as_a_plan_step_delegation() -> None:
    seen_results: list[object] = []

    def writer_instructions(ctx: RunContext) -> str:
        seen_results.append(ctx.handoff.results if ctx.handoff else None)
        return "You write."

    team = Team([Agent("planner"), Agent("research"),
                 Agent("writer", instructions=writer_instructions)], supervisor="planner")
    model = ScriptedModel([reply("facts: A, B"), reply("essay about A and B")])
    runner = Runner(team, model=model)

    result = await runner.run_plan("s", [
        PlanStep("research", "Find facts", name="facts"),
        {"agent": "writer", "task": "Write it up", "name": "essay"},
    ])

    assert result.status is RunStatus.COMPLETED
    assert result.steps == {"facts": "facts: A, B", "essay": "essay about A and B"}
    assert result.output == "essay about A and B" and result.agent == "writer"
    assert [r.reason.value for r in result.handoffs] == ["plan_step", "plan_step"]
    assert [r.source for r in result.handoffs] == ["planner", "planner"]
    assert seen_results == [{"facts": "facts: A, B"}]
    assert model.requests[1].messages[-1].text == "Write it up"
    kinds = [e.type for e in result.events]
    assert kinds.count("plan_step_started") == 2 and kinds.count("plan_step_completed") == 2


async def test_parallel_plan_steps_run_as_a_group() -> None:
    model = ScriptedModel([reply("r1"), reply("r2"), reply("summary")])
    runner = Runner(planning_team(), model=model)
    result = await runner.run_plan("s", [
        {"parallel": [{"agent": "research", "task": "a"}, {"agent": "writer", "task": "b"}]},
        PlanStep("writer", "combine"),
    ])
    assert result.steps == {"step1": "r1", "step2": "r2", "step3": "summary"}


async def test_only_the_supervisor_may_plan_a_system_only_agent() -> None:
    model = ScriptedModel([reply("audited")])
    result = await Runner(planning_team(), model=model).run_plan(
        "s", [PlanStep("auditor", "audit")])
    assert result.status is RunStatus.COMPLETED

    team = Team([Agent("lead"), Agent("auditor", system_only=True)])
    failed = await Runner(team, model=ScriptedModel([])).run_plan(
        "s", [PlanStep("auditor", "audit")])
    assert failed.status is RunStatus.FAILED and failed.error is not None
    assert failed.error.code == "system_only"


async def test_a_failed_plan_step_goes_to_the_fallback() -> None:
    model = ScriptedModel([ModelError("down"), reply("fixer did it")])
    result = await Runner(planning_team(), model=model).run_plan(
        "s", [PlanStep("research", "dig", name="dig")])
    assert result.status is RunStatus.COMPLETED
    assert result.steps == {"dig": "fixer did it"}
    assert [r.reason.value for r in result.handoffs] == ["plan_step", "error_recovery"]


async def test_a_plan_fails_when_the_fallback_fails_too() -> None:
    model = ScriptedModel([ModelError("down"), ModelError("also down")])
    result = await Runner(planning_team(), model=model).run_plan(
        "s", [PlanStep("research", "dig")])
    assert result.status is RunStatus.FAILED


async def test_summary_history_gives_the_target_a_summary_made_once() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", history="summary")])
    team = Team([triage, Agent("billing")], summarizer=Summarizer())
    model = ScriptedModel([
        reply("Hello!"),
        transfer("billing", reason="charge"),
        reply("SUMMARY: customer was charged twice for A1."),  # the summariser's response
        reply("Billing: refunding A1."),
        reply("Billing again."),
    ])
    runner = Runner(team, model=model)
    await runner.run("s", "hi")
    result = await runner.run("s", "charged twice for A1")

    summarizer_request = model.requests[2]
    assert "Summarise the conversation" in summarizer_request.system
    assert "charged twice for A1" in summarizer_request.messages[0].text
    billing_request = model.requests[3]
    (note,) = billing_request.messages  # no raw history: the note with the summary
    assert "SUMMARY: customer was charged twice" in note.text
    assert result.handoffs[0].summary == "SUMMARY: customer was charged twice for A1."

    await runner.run("s", "and?")
    assert len(model.requests) == 5  # the summary was not made again
    assert "SUMMARY: customer was charged twice" in model.requests[4].messages[0].text
