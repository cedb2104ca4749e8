"""Operators and users act within the team's routes; bad definitions and inputs are clear."""

from __future__ import annotations

import pytest

from handoffs import Agent, Handoff, HandoffsError, HumanAgent, Runner, RunStatus, Team
from handoffs.core.messages import Message
from handoffs.testing import ScriptedModel, reply, transfer


def team() -> Team:
    bot = Agent("bot", handoffs=["operator"])
    other = Agent("other")
    operator = HumanAgent("operator", handoffs=["bot"])
    return Team([bot, other, operator])


async def _escalated(runner: Runner) -> None:
    await runner.run("s", "a person please")
    state = await runner.get_session("s")
    assert state is not None and state.active_agent == "operator"


async def test_a_human_hands_back_only_along_its_declared_routes() -> None:
    runner = Runner(team(), model=ScriptedModel([transfer("operator")]))
    await _escalated(runner)

    with pytest.raises(HandoffsError) as info:
        await runner.reply_as_human("s", "Over to other.", handoff_to="other")

    assert info.value.code == "not_declared"


@pytest.mark.parametrize("target, code", [("other", "not_declared"),
                                          ("nobody", "unknown_target")])
async def test_a_refused_reply_as_human_changes_nothing(target: str, code: str) -> None:
    runner = Runner(team(), model=ScriptedModel([transfer("operator")]))
    await _escalated(runner)
    before = (await runner.store.export_session("s")) or {}

    for _ in range(3):
        with pytest.raises(HandoffsError) as info:
            await runner.reply_as_human("s", "refused words", handoff_to=target)
        assert info.value.code == code

    after = (await runner.store.export_session("s")) or {}
    assert after["messages"] == before["messages"] and after["handoffs"] == before["handoffs"]
    assert after["active_agent"] == "operator"


async def test_an_operator_needs_no_model_to_answer_and_hand_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HANDOFFS_MODEL", raising=False)
    store_runner = Runner(team(), model=ScriptedModel([transfer("operator")]))
    await _escalated(store_runner)
    operator_side = Runner(team(), store=store_runner.store)  # an operator console: no model

    posted = await operator_side.reply_as_human("s", "Fixed it.", handoff_to="bot")

    assert posted.status is RunStatus.COMPLETED and posted.agent == "bot"
    assert posted.handoffs[0].source == "operator" and posted.handoffs[0].accepted


async def test_a_history_filter_that_returns_no_messages_is_a_clear_error() -> None:
    def broken(messages: list[Message]) -> str:
        return "foo"

    triage = Agent("triage", handoffs=[Handoff("billing", history=broken)])  # type: ignore[arg-type]
    model = ScriptedModel([transfer("billing"), reply("never seen")])
    result = await Runner(Team([triage, Agent("billing")]), model=model).run("s", "hi")

    assert result.error is not None and result.error.code == "invalid_history"
    assert "triage -> billing" in result.error.message and "str" in result.error.message
    assert len(model.requests) == 1  # nothing was sent to billing's model


async def test_a_delegation_history_filter_is_checked_too() -> None:
    def broken(messages: list[Message]) -> list[object]:
        return [*messages, 42]

    boss = Agent("boss", handoffs=[Handoff("expert", returns=True, history=broken)])  # type: ignore[arg-type]
    model = ScriptedModel([transfer("expert"), reply("never")])
    result = await Runner(Team([boss, Agent("expert")]), model=model).run("s", "hi")

    assert result.error is not None and result.error.code == "invalid_history"
    assert "boss -> expert" in result.error.message and "int" in result.error.message


async def test_a_message_over_the_limit_is_refused_before_anything_is_stored() -> None:
    runner = Runner(Team([Agent("solo")]), model=ScriptedModel([reply("ok")]),
                    max_message_chars=1000)

    with pytest.raises(HandoffsError) as info:
        await runner.run("s", "x" * 1001)

    assert info.value.code == "message_too_large" and "1,000" in str(info.value)
    assert await runner.get_session("s") is None
    assert (await runner.run("s", "x" * 1000)).output == "ok"


async def test_a_message_that_is_not_text_is_refused() -> None:
    runner = Runner(Team([Agent("solo")]), model=ScriptedModel([reply("ok")]))
    with pytest.raises(HandoffsError) as info:
        await runner.run("s", None)  # type: ignore[arg-type]
    assert info.value.code == "invalid_argument"
