"""`baseline="single"`: the same cases played by one agent holding every tool of the team,
judged on the answer's labels only, reported beside the team."""

from __future__ import annotations

import json

import pytest

from handoffs import Agent, HumanAgent, RunContext, Team
from handoffs.errors import HandoffsError
from handoffs.eval import parse_jsonl, run_eval
from handoffs.eval.baseline import PREAMBLE, SINGLE_AGENT, single_agent_team
from handoffs.testing import ScriptedModel, call, reply, transfer

from .teams import DeskModel, build_team, refund

CASES = parse_jsonl(
    '{"id": "hello", "user": "Hello", "agent": "front", "no_handoff": true}\n'
    '{"id": "refund", "user": "It is broken, refund please", "agent": "repairs", '
    '"path": ["front", "repairs"], "tools_called": ["refund"]}\n'
    '{"id": "thanks", "user": "Thanks, that is all", "agent": "front", '
    '"tools_not_called": ["refund"]}\n')


def test_the_single_agent_holds_every_tool_and_every_instruction_and_no_route() -> None:
    single = single_agent_team(build_team())

    (agent,) = single.agents
    assert agent.name == SINGLE_AGENT == "single" and single.entry == "single"
    assert [t.name for t in agent.tools] == ["refund"] and agent.tools[0] is refund
    assert agent.handoffs == ()
    assert isinstance(agent.instructions, str)
    assert agent.instructions.startswith(PREAMBLE)
    assert "## As front (Routes.)\nRoute." in agent.instructions
    assert "## As repairs (Broken things.)\nRepair." in agent.instructions
    assert single.plan("single").routes == {}


async def test_people_are_left_out_and_callable_instructions_are_called() -> None:
    def greeting(ctx: RunContext) -> str:
        return f"Greet the customer of session {ctx.session_id[:5]}."

    team = Team([Agent("front", instructions=greeting, handoffs=["operator"]),
                 Agent("desk", instructions="Answer.", tools=[refund]),
                 HumanAgent("operator")], entry="front")
    cases = parse_jsonl('{"id": "h", "user": "hi", "agent": "front"}\n')

    (agent,) = single_agent_team(team).agents
    report = await run_eval(team, cases, model=ScriptedModel(
        {"front": [reply("Hi.")], "single": [reply("Hi.")]}), baseline="single")

    assert [t.name for t in agent.tools] == ["refund"] and callable(agent.instructions)
    seen = report.runs[1].turns[0].calls[0]
    assert "## As front\nGreet the customer of session eval-." in seen.system
    assert "## As desk\nAnswer." in seen.system and "operator" not in seen.system
    assert seen.tools == ["refund"]
    with pytest.raises(HandoffsError, match="no agent with a model"):
        single_agent_team(Team([HumanAgent("only")]))


async def test_the_baseline_is_played_beside_the_team_on_the_answer_labels() -> None:
    model = ScriptedModel({"front": [reply("Hello!"), transfer("repairs"),
                                     reply("Glad to help.")],
                           "repairs": [call("refund", order="A-1"), reply("Refunded.")],
                           "single": [reply("Hello!"), reply("Please wait."),
                                      call("refund", order="A-1"), reply("Refunded.")]})

    report = await run_eval(build_team(), CASES, model=model, baseline="single",
                            concurrency=1)
    team, single = report.runs

    assert (team.baseline, single.baseline) == (None, "single")
    assert single.label == "ScriptedModel · history own_tools · single agent"
    assert single.setup == {"model": "ScriptedModel", "history": "history own_tools",
                            "player": "single agent"}
    assert team.accuracy == team.answer_accuracy == 1.0
    # the single agent never calls refund for the refund, and calls it after "thanks"
    assert [t.problems for t in single.turns] == [[], ["refund was not called"],
                                                  ["refund was called"]]
    assert single.accuracy == single.answer_accuracy == pytest.approx(1 / 3)
    assert single.routing_accuracy is None
    assert all(t.path == ["single"] for t in single.turns)
    # a baseline is a comparison, not held to a threshold
    assert report.accuracy == 1.0 and report.below(0.9) == []


async def test_routing_labels_do_not_fail_the_baseline() -> None:
    cases = parse_jsonl(
        '{"id": "p", "user": "price", "agent": "sales", "path": ["front", "sales"], '
        '"kind": "llm", "status": "completed"}\n'
        '{"id": "h", "user": "a person please", "agent": "front", '
        '"status": "waiting_for_human"}\n')
    model = ScriptedModel({"single": [reply("It costs $89."), reply("Here I am.")]})

    run = (await run_eval(build_team(), cases, model=model, baseline="single")).runs[1]

    assert [t.passed for t in run.turns] == [True, True]
    assert run.summary()["routing_accuracy"] is None
    assert run.summary()["matrix"] == {} and run.summary()["per_route"] == {}


async def test_the_reports_set_the_baseline_beside_the_team() -> None:
    report = await run_eval(build_team(), CASES, model=DeskModel(), baseline="single")
    text = report.text()
    html = report.html()
    data = json.loads(json.dumps(report.to_dict()))

    header = text.splitlines()[2]
    assert "DeskModel · history own_tools" in header
    assert header.rstrip().endswith("DeskModel · history own_tools · single agent")
    routing = next(line for line in text.splitlines() if line.startswith("routing accuracy"))
    assert routing.split()[-1] == "n/a"
    assert any(line.startswith("answer accuracy") for line in text.splitlines())
    assert "note: single agent: one agent with every tool of the team and no routes" in text
    single_part = text.split("== DeskModel · history own_tools · single agent")[1]
    assert "expected \\ answered" not in single_part
    assert "Routing labels do not apply to the single agent" in html
    assert [r["baseline"] for r in data["runs"]] == [None, "single"]
    assert data["runs"][1]["setup"]["player"] == "single agent"
    assert data["runs"][1]["model_calls"] > 0 and data["runs"][1]["prompt_bytes"] > 0


async def test_an_unknown_baseline_is_refused_before_playing() -> None:
    with pytest.raises(HandoffsError, match="Unknown baseline 'double'; one of single"):
        await run_eval(build_team(), CASES, model=DeskModel(), baseline="double")


async def test_the_offline_model_plays_the_baseline_with_the_teams_tools() -> None:
    from handoffs.eval import support_cases
    from handoffs.examples.support import build_team as support_team

    cases = [c for c in support_cases() if c.id in ("greeting-en", "duplicate-en")]

    report = await run_eval(support_team(), cases, model="offline", baseline="single")
    single = report.runs[1]

    refund = next(t for t in single.turns if t.case == "duplicate-en")
    assert refund.path == ["single"]
    assert "lookup_order" in refund.tools
    assert all(c.agent == "single" for t in single.turns for c in t.calls)
    assert {"lookup_order", "issue_refund"} <= set(single.turns[0].calls[0].tools)
