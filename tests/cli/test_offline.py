"""The offline model the CLI chooses: the support team's own rules for the built-in
team, a `RuleModel` that knows the team's routes for any other."""

from __future__ import annotations

from handoffs import Agent, HumanAgent, Runner, RunStatus, Team
from handoffs.cli.loading import load_target, team_of
from handoffs.cli.offline import offline_model
from handoffs.examples.support import build_team

from .conftest import ROOT


async def test_the_support_team_plays_its_own_rules_and_refunds_for_real() -> None:
    team = build_team()
    runner = Runner(team, model=offline_model(team))
    result = await runner.run("s", "I was charged twice for order A-1001")
    assert [(r.source, r.target) for r in result.handoffs] == [
        ("triage", "billing"), ("billing", "policy"), ("billing", "refunds")]
    assert result.output.startswith("I've refunded the duplicate charge: Refund of $129.00")
    state = await runner.get_session("s")
    assert state is not None and state.shared["refunds"] == [
        {"order_id": "A-1001", "amount": 129.0, "reference": "R-0001"}]


async def test_the_support_team_is_recognised_when_loaded_from_the_example_file() -> None:
    team = team_of(load_target(str(ROOT / "examples" / "support.py") + ":team"))
    result = await Runner(team, model=offline_model(team)).run("s", "hello")
    assert result.output.startswith("Hello! I can send you to billing")


async def test_another_team_gets_a_rule_model_that_knows_its_routes() -> None:
    team = Team([
        Agent("front", description="Greets and routes.", handoffs=["maths", "desk"]),
        Agent("maths", description="Calculus and algebra.", handoffs=["front"]),
        Agent("desk", description="Opening hours.", handoffs=["clerk"]),
        HumanAgent("clerk", description="Answers the phone."),
    ])
    runner = Runner(team, model=offline_model(team))
    first = await runner.run("s", "A calculus question")
    assert first.agent == "maths"
    # Back through front to the desk, which maths has no route to.
    hours = await runner.run("s", "What are your opening hours?")
    assert [(r.source, r.target) for r in hours.handoffs] == [
        ("maths", "front"), ("front", "desk")]
    person = await runner.run("s", "Can I talk to a person?")
    assert person.status is RunStatus.WAITING_FOR_HUMAN and person.agent == "clerk"
    for i in range(10):
        assert (await runner.run("t", f"message {i}")).status is RunStatus.COMPLETED
