"""`select_agent` refuses a system-only agent: only the supervisor may reach it."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffsError, Runner, Team
from handoffs.testing import ScriptedModel, reply, transfer


async def test_the_user_cannot_select_a_system_only_agent() -> None:
    team = Team([Agent("boss", handoffs=["auditor"]), Agent("auditor", system_only=True)],
                supervisor="boss")
    runner = Runner(team, model=ScriptedModel([reply("hi")]))
    await runner.run("s", "hello")

    with pytest.raises(HandoffsError) as info:
        await runner.select_agent("s", "auditor")

    assert info.value.code == "system_only"
    state = await runner.get_session("s")
    assert state is not None and state.active_agent == "boss"
    assert state.handoffs[-1].rejection == "system_only"


async def test_a_team_that_keeps_the_person_refuses_a_pick_until_they_hand_back() -> None:
    from handoffs import HandoffPolicy, HumanAgent

    team = Team([Agent("desk", handoffs=["person"]), Agent("billing"),
                 HumanAgent("person", handoffs=["desk"])],
                policy=HandoffPolicy(person_keeps_conversation=True))
    runner = Runner(team, model=ScriptedModel([transfer("person", reason="needs a human")]))
    await runner.run("s", "a person, please")

    with pytest.raises(HandoffsError) as info:
        await runner.select_agent("s", "billing")

    assert info.value.code == "held_by_person"
    state = await runner.get_session("s")
    assert state is not None and state.active_agent == "person"
    await runner.reply_as_human("s", "Sorted.", "desk")
    record = await runner.select_agent("s", "billing")
    assert record.accepted
    # The default policy lets the user take it (the page asks first).
    team2 = Team([Agent("desk", handoffs=["person"]), Agent("billing"),
                  HumanAgent("person", handoffs=["desk"])])
    runner2 = Runner(team2, model=ScriptedModel([transfer("person", reason="needs a human")]))
    await runner2.run("s", "a person, please")
    assert (await runner2.select_agent("s", "billing")).accepted
