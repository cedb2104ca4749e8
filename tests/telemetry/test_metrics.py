"""Metrics count what happened: handoffs by route and outcome, turns by status, durations,
tokens by agent and model, guardrail trips, human waits."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffsError, HumanAgent, Runner, Team
from handoffs.models import ModelResponse, Usage
from handoffs.testing import reply, transfer

from .conftest import NamedModel, Otel
from .test_spans import busy_model, busy_team


async def test_handoffs_are_counted_by_source_target_kind_and_outcome(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    await runner.run("sess-1", "I was charged twice")

    counted = {(a["handoffs.handoff.source"], a["handoffs.handoff.target"],
                a["handoffs.handoff.kind"], a["handoffs.handoff.outcome"]): n
               for a, n in otel.points("handoffs.handoff.requests")}
    assert counted == {
        ("triage", "research", "llm", "accepted"): 1,
        ("triage", "facts", "llm", "accepted"): 1,
        ("triage", "_OTHER", "llm", "unknown_target"): 1,  # a model's invention
        ("triage", "billing", "llm", "accepted"): 1,
        ("billing", "support", "error_recovery", "accepted"): 1,
    }


async def test_turns_are_counted_by_final_status(otel: Otel) -> None:
    from handoffs import ModelError

    model = NamedModel([reply("Hi."), ModelError("down", "rate_limited")])
    runner = Runner(Team([Agent("triage")]), model=model, telemetry=otel.telemetry)
    await runner.run("s", "one")
    await runner.run("s", "two")

    assert sorted((sorted(a.items()), n) for a, n in otel.points("handoffs.turns")) == [
        ([("error.type", "rate_limited"), ("handoffs.turn.status", "failed")], 1),
        ([("handoffs.turn.status", "completed")], 1),
    ]
    durations = {a["handoffs.turn.status"]: n for a, n in otel.points("handoffs.turn.duration")}
    assert durations == {"completed": 1, "failed": 1}


async def test_activation_and_model_call_durations_are_recorded(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    await runner.run("sess-1", "I was charged twice")

    activations = {(a["gen_ai.agent.name"], a.get("error.type")): n
                   for a, n in otel.points("handoffs.agent.duration")}
    assert activations == {("triage", None): 1, ("research", None): 1, ("facts", None): 1,
                           ("billing", "guardrail_tripped"): 1, ("support", None): 1}
    [(attrs, calls)] = otel.points("gen_ai.client.operation.duration")
    assert calls == 8  # triage 4, research, facts, billing, support
    assert attrs == {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "scripted",
                     "gen_ai.request.model": "scripted-1", "gen_ai.response.model": "scripted"}


async def test_token_usage_is_recorded_by_agent_and_model(otel: Otel) -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = NamedModel({
        "triage": [ModelResponse("", transfer_calls(), Usage(100, 7, 1), "m-2025")],
        "billing": [ModelResponse("Refunded.", (), Usage(250, 30, 1), "m-2025")],
    })
    runner = Runner(team, model=model, telemetry=otel.telemetry)
    await runner.run("s", "hi")

    data = otel.reader.get_metrics_data()
    sums = {}
    for rm in data.resource_metrics:  # type: ignore[union-attr]
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == "gen_ai.client.token.usage":
                    for p in m.data.data_points:
                        a = dict(p.attributes or {})
                        sums[(a["gen_ai.agent.name"], a["gen_ai.token.type"],
                              a["gen_ai.response.model"])] = p.sum  # type: ignore[union-attr]
    assert sums == {("triage", "input", "m-2025"): 100, ("triage", "output", "m-2025"): 7,
                    ("billing", "input", "m-2025"): 250, ("billing", "output", "m-2025"): 30}
    chat = otel.named("chat scripted-1")[1]
    assert chat.attributes["gen_ai.usage.input_tokens"] == 250
    assert chat.attributes["gen_ai.usage.output_tokens"] == 30


def transfer_calls() -> tuple:  # type: ignore[type-arg]
    from handoffs import ToolCall

    return (ToolCall("c1", "transfer_to_billing", '{"reason": "bill"}'),)


async def test_guardrail_trips_and_human_waits_are_counted(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    await runner.run("sess-1", "I was charged twice")
    team = Team([Agent("bot", handoffs=["operator"]), HumanAgent("operator", handoffs=["bot"])])
    people = Runner(team, model=NamedModel([transfer("operator")]), telemetry=otel.telemetry)
    await people.run("p", "a person please")

    assert otel.points("handoffs.guardrail.trips") == [
        ({"gen_ai.agent.name": "billing", "handoffs.guardrail.name": "no_refunds",
          "handoffs.guardrail.stage": "output"}, 1)]
    assert otel.points("handoffs.human.waits") == [({"gen_ai.agent.name": "operator"}, 1)]


async def test_a_users_pick_is_counted_accepted_or_refused(otel: Otel) -> None:
    team = Team([Agent("triage"), Agent("billing"), Agent("ops", user_selectable=False)])
    runner = Runner(team, telemetry=otel.telemetry)
    await runner.select_agent("s", "billing")
    with pytest.raises(HandoffsError):
        await runner.select_agent("s", "ops")

    assert sorted((a["handoffs.handoff.target"], a["handoffs.handoff.outcome"], n)
                  for a, n in otel.points("handoffs.handoff.requests")) == [
        ("billing", "accepted", 1), ("ops", "not_user_selectable", 1)]
