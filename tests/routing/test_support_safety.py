"""The support team is safe on a real model: a refund checks the order, refunds at most
the duplicate charge, once; a large one waits for a person; billing does not invent the
amount; a "thanks" never moves money."""

from __future__ import annotations

from handoffs import Agent, Runner, RunStatus, Team
from handoffs.examples.support import build_team, issue_refund, lookup_order, rule_model
from handoffs.testing import ScriptedModel, call, reply, transfer


def refunds_only() -> Team:
    return Team([Agent("refunds", tools=[lookup_order, issue_refund])])


async def refund_results(*calls: object) -> list[str]:
    model = ScriptedModel([*calls, reply("done")])
    result = await Runner(refunds_only(), model=model).run("s", "refund please")
    return [e["text"] for e in result.events if e.type == "tool_result"]


async def test_a_refund_checks_the_order_and_the_amount() -> None:
    assert await refund_results(call("issue_refund", order_id="Z-9")) == [
        "Not refunded: there is no order Z-9."]
    assert await refund_results(call("issue_refund", order_id="A-1002")) == [
        "Not refunded: A-1002 was charged once, so there is no duplicate charge."]
    assert await refund_results(call("issue_refund", order_id="A-1001", amount=200.0)) == [
        "Not refunded: a refund on A-1001 is at most the duplicate charge, $129.00."]


async def test_the_same_refund_twice_is_answered_from_the_first() -> None:
    model = ScriptedModel([call("issue_refund", order_id="A-1001"), reply("done"),
                           call("issue_refund", order_id="A-1001", amount=129.0),
                           reply("done again")])
    runner = Runner(refunds_only(), model=model)
    await runner.run("s", "refund A-1001")
    again = await runner.run("s", "I was charged twice for A-1001")

    texts = [e["text"] for e in again.events if e.type == "tool_result"]
    assert texts == ["Already refunded: $129.00 on A-1001, reference R-0001. Nothing was "
                     "refunded again."]
    state = await runner.get_session("s")
    assert state is not None and len(state.shared["refunds"]) == 1


async def test_a_large_refund_waits_for_a_persons_approval() -> None:
    model = ScriptedModel([call("issue_refund", order_id="A-1003"), reply("Refunded.")])
    runner = Runner(refunds_only(), model=model)

    waiting = await runner.run("s", "refund my laptop A-1003")

    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    state = await runner.get_session("s")
    assert state is not None and "refunds" not in state.shared
    call_id = state.pending["waiting"][0]  # type: ignore[index]
    done = await runner.approve("s", call_id)
    assert done.output == "Refunded."
    state = await runner.get_session("s")
    assert state is not None and state.shared["refunds"][0]["amount"] == 1499.0


def test_billing_looks_orders_up_and_does_not_set_the_amount() -> None:
    team = build_team()
    billing = team.plan("billing")
    assert "lookup_order" in billing.tools
    params = billing.routes_by_target["refunds"].spec.parameters
    assert set(params["properties"]) == {"reason", "order_id"}


async def test_thanks_thats_all_never_moves_money() -> None:
    team = build_team()
    runner = Runner(team, model=rule_model())
    await runner.run("s", "Hi, I was charged twice for order A-1001.")
    thanks = await runner.run("s", "Thanks! That's all.")

    assert thanks.status is RunStatus.COMPLETED
    assert not [e for e in thanks.events if e.type == "tool_called"]
    state = await runner.get_session("s")
    assert state is not None and len(state.shared["refunds"]) == 1


async def test_billing_hands_a_refund_on_with_the_order_only() -> None:
    model = ScriptedModel([transfer("billing"), transfer("refunds", order_id="A-1001"),
                           call("issue_refund", order_id="A-1001"), reply("Refunded.")])
    result = await Runner(build_team(), model=model).run("s", "charged twice A-1001")
    assert result.handoffs[-1].payload == {"order_id": "A-1001"}
    assert result.output == "Refunded."


async def test_refunds_asks_for_the_order_instead_of_sending_a_yes_back_to_triage() -> None:
    runner = Runner(build_team(), model=rule_model())
    await runner.run("s", "Hi, I was charged twice for order A-1001.")
    yes = await runner.run("s", "Yes please refund it")
    assert (yes.agent, yes.output) == (
        "refunds", "Which order should I refund? Its number looks like A-1001.")
    assert yes.handoffs == []
