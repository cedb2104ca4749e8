"""What went wrong in a turn besides who answered, read from its events and model calls
(phantom handoffs, bounces, repeated calls, last-word answers, no_progress), their rates
per turn and per route, and the cost per resolved conversation."""

from __future__ import annotations

import json

import pytest

from handoffs import Agent, HandoffPolicy, Team, ToolCall
from handoffs.core.events import Event
from handoffs.eval import parse_jsonl, run_eval
from handoffs.eval.judge import TurnResult
from handoffs.eval.symptoms import Symptoms, rates, speakers, symptoms_of
from handoffs.models.base import ModelResponse, Usage
from handoffs.testing import ScriptedModel, call, reply, transfer

from .teams import build_team


async def played(script: list, agent: str = "front", team: Team | None = None
                 ) -> TurnResult:
    cases = parse_jsonl(json.dumps({"id": "x", "user": "hello", "agent": agent}) + "\n")
    report = await run_eval(team or build_team(), cases, model=ScriptedModel(script))
    return report.run.turns[0]


async def test_an_announced_transfer_that_reaches_the_user_is_a_phantom_handoff() -> None:
    # the runtime asks once more with the transfer tools forced; the model narrates again
    turn = await played([reply("I'll transfer you to sales now."),
                         reply("I'll transfer you to sales now.")])

    assert turn.symptoms == Symptoms(phantom_handoff=True)
    assert turn.output == "I'll transfer you to sales now."


async def test_an_announced_transfer_then_made_is_no_phantom() -> None:
    turn = await played([reply("I'll transfer you to sales now."), transfer("sales"),
                         reply("Sales here.")], agent="sales")

    assert turn.path == ["front", "sales"] and turn.symptoms == Symptoms()


async def test_a_phantom_is_caught_when_the_policy_does_not_ask_again() -> None:
    team = build_team()
    quiet = Team(team.agents, entry="front", policy=HandoffPolicy(narrated_handoffs=False))

    turn = await played([reply("Let me connect you with our repairs team.")], team=quiet)

    assert turn.symptoms.phantom_handoff
    assert len(turn.calls) == 1  # delivered as it was


async def test_going_back_to_the_agent_just_left_is_a_bounce() -> None:
    turn = await played([transfer("repairs"), transfer("front"), reply("Front here.")])

    assert turn.path == ["front", "repairs", "front"]
    assert turn.symptoms == Symptoms(bounces=1)


async def test_the_same_call_with_the_same_arguments_is_a_repeat() -> None:
    turn = await played([transfer("repairs"), call("refund", order="A-1"),
                         call("refund", order="A-1"), call("refund", order="A-2"),
                         reply("Done.")], agent="repairs")

    assert turn.tools == ["refund", "refund", "refund"]
    assert turn.symptoms == Symptoms(repeated_calls=1)  # A-2 is another call


async def test_an_answer_given_without_tools_after_no_progress_is_a_last_word() -> None:
    # three refused handoffs (the policy's max_failed_steps), then no tools: it answers
    turn = await played([transfer("ghost"), transfer("ghost"), transfer("ghost"),
                         reply("Here is what I know.")])

    assert turn.status == "completed" and turn.output == "Here is what I know."
    assert turn.symptoms == Symptoms(repeated_calls=2, last_word=True)


async def test_no_answer_even_without_tools_is_no_progress() -> None:
    turn = await played([transfer("ghost")] * 4)

    assert turn.error == "no_progress"
    assert turn.symptoms == Symptoms(repeated_calls=3, no_progress=True)


async def test_no_progress_is_counted_when_the_stuck_answer_or_the_fallback_hides_it() -> None:
    team = build_team()
    stuck = Team(team.agents, entry="front",
                 policy=HandoffPolicy(stuck_answer="Sorry, a person will write to you."))
    fallback = Team(team.agents, entry="front", fallback="sales")

    given = await played([transfer("ghost")] * 4, team=stuck)
    recovered = await played([transfer("ghost")] * 4 + [reply("Sales here.")],
                             agent="sales", team=fallback)

    assert given.status == "completed" and given.output.startswith("Sorry, a person")
    assert given.symptoms.no_progress and not given.symptoms.last_word
    assert recovered.path == ["front", "sales"] and recovered.kind == "error_recovery"
    assert recovered.symptoms.no_progress


async def test_rates_per_turn_and_per_route_add_up() -> None:
    cases = parse_jsonl(
        '{"id": "a", "user": "one", "agent": "front"}\n'
        '{"id": "b", "user": "two", "agent": "front"}\n'
        '{"id": "c", "user": "three", "agent": "repairs"}\n'
        '{"id": "d", "user": "four", "agent": "repairs"}\n')
    # a: a phantom; b: fine; c: fine; d: front → repairs → front, a bounce (and a misroute)
    model = ScriptedModel({"front": [reply("I'll transfer you to sales now."),
                                     reply("I'll transfer you to sales now."),
                                     reply("Hello."), transfer("repairs"),
                                     transfer("repairs"), reply("Front again.")],
                           "repairs": [reply("Repairs here."), transfer("front")]})

    report = await run_eval(build_team(), cases, model=model, concurrency=1)
    run = report.run

    rates_ = run.symptom_rates()
    assert rates_["phantom_handoffs"] == {"turns": 1, "count": 1, "rate": 0.25}
    assert rates_["bounces"] == {"turns": 1, "count": 1, "rate": 0.25}
    assert rates_["repeated_calls"]["turns"] == 0
    per_route = run.symptoms_per_route()
    assert per_route["front"]["phantom_handoffs"]["rate"] == 0.5
    assert per_route["repairs"]["bounces"]["turns"] == 1
    summary = run.summary()
    assert summary["symptoms"]["bounces"]["count"] == 1
    assert summary["symptoms_per_route"]["front"]["phantom_handoffs"]["turns"] == 1
    report_text = report.text()
    phantom = next(line for line in report_text.splitlines()
                   if line.startswith("phantom handoffs"))
    assert phantom.split()[-2:] == ["1/4", "25.0%"]
    route_rows = [line.split() for line in report_text.splitlines()
                  if line.startswith(("front ", "repairs "))]
    assert ["front", "2", "1", ".", ".", ".", "."] in route_rows
    assert ["repairs", "2", ".", "1", ".", ".", "."] in route_rows


def test_rates_of_no_turns_are_zero() -> None:
    assert rates([])["bounces"] == {"turns": 0, "count": 0, "rate": 0.0}
    assert rates([Symptoms(repeated_calls=3), Symptoms()])["repeated_calls"] == {
        "turns": 1, "count": 3, "rate": 0.5}


async def test_cost_per_resolved_conversation_divides_by_the_conversations_that_passed(
        ) -> None:
    def answer(text: str, tokens_in: int, tokens_out: int) -> ModelResponse:
        return ModelResponse(text, usage=Usage(tokens_in, tokens_out, 1))

    def to_sales(tokens_in: int, tokens_out: int) -> ModelResponse:
        return ModelResponse(tool_calls=(ToolCall("c1", "transfer_to_sales", "{}"),),
                             usage=Usage(tokens_in, tokens_out, 1))

    cases = parse_jsonl('{"id": "p", "user": "price of the dock", "agent": "sales"}\n')
    # play 1 passes in two calls (100+10, 50+5 tokens), play 2 misroutes in one (40+4)
    model = ScriptedModel([to_sales(100, 10), answer("It costs $89.", 50, 5),
                           answer("Hello.", 40, 4)])

    report = await run_eval(build_team(), cases, model=model, repeat=2, concurrency=1)
    run = report.run

    assert run.resolved() == {"conversations": 1, "model_calls_per_resolved": 3.0,
                              "input_tokens_per_resolved": 190.0,
                              "output_tokens_per_resolved": 19.0,
                              "tokens_per_resolved": 209.0}
    assert run.totals()["model_calls_per_conversation"] == 1.5
    text = report.text()
    rows = {line.rsplit("  ", 1)[0].strip(): line.split()[-1] for line in text.splitlines()
            if "resolved conversation" in line}
    assert rows == {"model calls / resolved conversation": "3.0",
                    "tokens / resolved conversation": "209"}


async def test_nothing_resolved_has_no_cost_per_resolved_conversation() -> None:
    cases = parse_jsonl('{"id": "p", "user": "price", "agent": "sales"}\n')

    run = (await run_eval(build_team(), cases, model=ScriptedModel([reply("Hi.")]))).run

    assert run.resolved()["model_calls_per_resolved"] is None
    assert run.resolved()["tokens_per_resolved"] is None


@pytest.mark.parametrize("text", ["Je vous transfère au service des ventes.",
                                  "Ich leite Sie an sales weiter."])
async def test_phantoms_are_caught_in_other_languages(text: str) -> None:
    team = build_team()
    quiet = Team(team.agents, entry="front", policy=HandoffPolicy(narrated_handoffs=False))

    turn = await played([reply(text)], team=quiet)

    assert turn.symptoms.phantom_handoff


def test_an_agent_without_routes_promising_a_colleague_is_caught_too() -> None:
    team = Team([Agent("solo"), Agent("billing")])
    events = [Event("run_started", "s", 1, 0.0, {"agent": "solo", "text": "hi"}),
              Event("message", "s", 1, 0.0, {"agent": "solo",
                                              "text": "I'll transfer you to billing."}),
              Event("run_completed", "s", 1, 0.0, {"agent": "solo", "status": "completed"})]

    found = symptoms_of(events, {}, [], ["solo"], speakers(team), None)

    assert found.phantom_handoff
