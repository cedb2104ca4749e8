"""`select_agent` refuses a system-only agent: only the supervisor may reach it."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffsError, Runner, Team
from handoffs.testing import ScriptedModel, reply


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
