"""The loop rule's scope (`HandoffPolicy.loop_scope`)."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffPolicy, HandoffsError, Runner, RunStatus, Team
from handoffs.testing import ScriptedModel, reply, transfer


def ping_pong(policy: HandoffPolicy) -> tuple[Team, ScriptedModel]:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing", handoffs=["triage"])],
                policy=policy)
    # Each turn the active agent hands to the other, which hands back, which hands on.
    return team, ScriptedModel([
        transfer("billing"), transfer("triage"), transfer("billing"), reply("billing here"),
        transfer("triage"), transfer("billing"), transfer("triage"), reply("triage here"),
    ])


async def test_handoffs_of_earlier_turns_do_not_count_as_a_loop_by_default() -> None:
    team, model = ping_pong(HandoffPolicy())
    runner = Runner(team, model=model)

    first = await runner.run("s", "my bill")
    second = await runner.run("s", "and my invoice")

    assert [r.rejection for r in first.handoffs] == [None, None, None]
    # billing already got 2 handoffs in turn 1; in turn 2 only turn 2's count.
    assert [(r.target, r.rejection) for r in second.handoffs] == [
        ("triage", None), ("billing", None), ("triage", None)]
    assert second.status is RunStatus.COMPLETED and second.output == "triage here"


async def test_loop_scope_session_counts_handoffs_of_earlier_turns() -> None:
    team, model = ping_pong(HandoffPolicy(loop_scope="session"))
    model.steps[5:] = [transfer("billing"), reply("triage stays")]
    runner = Runner(team, model=model)

    await runner.run("s", "my bill")
    second = await runner.run("s", "and my invoice")

    # The last 5 accepted: billing, triage, billing, triage -> billing has 2: refused.
    assert [(r.target, r.rejection) for r in second.handoffs] == [
        ("triage", None), ("billing", "loop_detected")]
    assert second.output == "triage stays"


async def test_loop_scope_turn_still_catches_a_loop_within_the_turn() -> None:
    team = Team([Agent("a", handoffs=["b"]), Agent("b", handoffs=["a"])],
                policy=HandoffPolicy(max_handoffs_per_turn=10))
    model = ScriptedModel([transfer("b"), transfer("a"), transfer("b"), transfer("a"),
                           transfer("b"), reply("a stays")])
    result = await Runner(team, model=model).run("s", "ping")
    assert [r.rejection for r in result.handoffs][-1] == "loop_detected"


async def test_delegations_do_not_count_toward_the_loop() -> None:
    from handoffs import Handoff

    team = Team([Agent("a", handoffs=[Handoff("b", returns=True)]), Agent("b")],
                policy=HandoffPolicy(loop_limit=1))
    model = ScriptedModel([transfer("b"), reply("b's answer"), transfer("b"),
                           reply("b again"), reply("a done")])
    result = await Runner(team, model=model).run("s", "ask b twice")
    assert [r.rejection for r in result.handoffs] == [None, None]


def test_loop_scope_is_checked() -> None:
    with pytest.raises(HandoffsError, match="loop_scope must be 'turn' or 'session'"):
        HandoffPolicy(loop_scope="forever")


@pytest.mark.parametrize("scope", ["turn", "session"])
async def test_transfers_inside_a_delegation_count_on_its_own_line(scope: str) -> None:
    from handoffs import Handoff
    from handoffs.testing import call

    team = Team([
        Agent("triage", handoffs=["billing"]),
        Agent("billing", handoffs=["triage", Handoff("desk", returns=True)]),
        Agent("desk", handoffs=["billing"]),
    ], policy=HandoffPolicy(loop_scope=scope))
    model = ScriptedModel([
        transfer("billing"),                                    # main: billing 1
        call("transfer_to_desk", task="check the policy"),      # billing delegates
        transfer("billing"),                                    # desk's line: billing 1
        reply("Policy checked."),                               # billing answers the desk's task
        transfer("triage"),                                     # main: triage 1
        transfer("billing"),                                    # main: billing 2 (allowed)
        reply("Billing, with the policy."),
    ])

    result = await Runner(team, model=model).run("s", "refund?")

    assert result.output == "Billing, with the policy." and result.agent == "billing"
    assert all(r.accepted for r in result.handoffs), [r.rejection for r in result.handoffs]
    inside = [r for r in result.handoffs if "line" in r.extra]
    [delegation] = [r for r in result.handoffs if r.returns]
    assert [(r.source, r.target) for r in inside] == [("desk", "billing")]
    assert inside[0].extra["line"] == delegation.id
