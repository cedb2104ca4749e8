"""The offline model: routes by keywords, fills payloads, calls tools, never runs out."""

from __future__ import annotations

from handoffs import Runner, RunStatus
from handoffs.cli.offline import offline_model
from handoffs.examples.support import build_team


async def test_it_routes_refunds_with_a_payload_and_calls_the_tools() -> None:
    team = build_team()
    runner = Runner(team, model=offline_model(team))
    result = await runner.run("s", "Please refund 129 on order A-1001")
    assert [(r.source, r.target) for r in result.handoffs] == [
        ("triage", "billing"), ("billing", "refunds")]
    assert result.handoffs[1].payload == {"order_id": "A-1001", "amount": 129.0}
    state = await runner.get_session("s")
    assert state is not None and state.shared["refunds"] == [
        {"order_id": "A-1001", "amount": 129.0}]


async def test_a_missing_payload_field_is_asked_for_not_guessed() -> None:
    team = build_team()
    runner = Runner(team, model=offline_model(team))
    await runner.run("s", "my invoice")                         # billing holds it now
    result = await runner.run("s", "refund order A-1001")
    assert result.agent == "billing"
    assert result.output == "To hand this to Refunds I need: amount."


async def test_it_takes_the_path_back_through_triage_and_never_runs_out() -> None:
    team = build_team()
    runner = Runner(team, model=offline_model(team))
    await runner.run("s", "Please refund 5 on order A-1002")    # refunds holds it now
    result = await runner.run("s", "Now a technical problem: setup crashes")
    assert [(r.source, r.target) for r in result.handoffs] == [
        ("refunds", "triage"), ("triage", "technical")]
    for i in range(20):
        assert (await runner.run("s", f"message {i}")).status is RunStatus.COMPLETED


async def test_a_next_turn_route_ends_the_turn_for_the_target_to_answer() -> None:
    team = build_team()
    runner = Runner(team, model=offline_model(team))
    await runner.run("s", "A technical problem")
    result = await runner.run("s", "Also my invoice has a wrong charge")
    assert result.status is RunStatus.HANDED_OFF and result.agent == "billing"
