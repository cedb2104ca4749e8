"""Replay a stored conversation from a turn on another model (issue 31), on every store."""

from __future__ import annotations

import json

import pytest

from handoffs import Agent, HandoffsError, HumanAgent, Runner, Team
from handoffs.testing import ScriptedModel, reply, transfer

from .conftest import Backend


def _team() -> Team:
    return Team([Agent("triage", handoffs=["billing", "tech"]),
                 Agent("billing", handoffs=["triage", "tech"]),
                 Agent("tech", handoffs=["triage"])])


def _misrouting() -> ScriptedModel:
    """Triage answers the greeting, then sends the double charge to tech."""
    return ScriptedModel({
        "triage": [reply("Hello! How can I help?"),
                   transfer("tech", reason="the app shows it twice")],
        "tech": [reply("Try clearing the app's cache."), reply("Anything else?")],
    })


def _routing_right() -> ScriptedModel:
    return ScriptedModel({
        "triage": [transfer("billing", reason="a double charge")],
        "billing": [reply("I refunded the second charge."), reply("You're welcome.")],
    })


async def _story(backend: Backend) -> Runner:
    runner = Runner(_team(), model=_misrouting(), store=backend.open())
    for text in ("hi", "I was charged twice for my invoice", "thanks"):
        await runner.run("s1", text)
    return runner


async def test_the_same_scripted_model_reproduces_records_and_answers(
        backend: Backend) -> None:
    runner = await _story(backend)

    replay = await runner.replay("s1", from_turn=1, model=_misrouting())

    assert [t.routing for t in replay.turns] == ["same", "same", "same"]
    assert replay.same and replay.stopped is None
    for t in replay.turns:
        assert t.new.handoffs == t.original.handoffs
        assert (t.new.agent, t.new.answer) == (t.original.agent, t.original.answer)
    assert replay.turns[1].original.handoffs[0].target == "tech"
    assert replay.totals.model_calls == 4
    assert replay.totals.prompt_bytes > 0


async def test_replay_on_another_model_shows_where_the_routing_changed(
        backend: Backend) -> None:
    runner = await _story(backend)
    before = await runner.store.export_session("s1")

    replay = await runner.replay("s1", from_turn=2, model=_routing_right())

    assert [(t.turn, t.routing) for t in replay.turns] == [
        (2, "different agent"), (3, "different agent")]
    second = replay.turns[1 - 1]
    assert (second.original.agent, second.new.agent) == ("tech", "billing")
    assert [(h.source, h.target, h.accepted, h.code) for h in second.new.handoffs] == [
        ("triage", "billing", True, None)]
    assert second.new.answer == "I refunded the second charge."
    assert not replay.same
    after = await runner.store.export_session("s1")
    assert before is not None and after is not None
    after["metadata"].pop("forks")
    after.pop("version"), before.pop("version"), after.pop("updated_at")
    before.pop("updated_at")
    assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)
    fork = await runner.get_session(replay.replay_id)
    assert fork is not None and fork.active_agent == "billing"
    assert json.loads(json.dumps(replay.to_dict()))["turns"][0]["routing"] == (
        "different agent")


async def test_a_replay_whose_route_changes_but_not_its_answerer_is_a_different_path(
        backend: Backend) -> None:
    runner = await _story(backend)
    detour = ScriptedModel({
        "triage": [transfer("billing", reason="money")],
        "billing": [transfer("tech", reason="it's the app after all")],
        "tech": [reply("Try clearing the app's cache.")],
    })

    replay = await runner.replay("s1", from_turn=2, model=detour)

    assert replay.turns[0].routing == "different path"
    assert replay.turns[0].new.agent == "tech"


async def test_replay_from_a_turn_that_is_not_there_is_refused(backend: Backend) -> None:
    runner = await _story(backend)
    with pytest.raises(HandoffsError) as refused:
        await runner.replay("s1", from_turn=4)
    assert refused.value.code == "invalid_turn"


async def test_a_turn_handed_to_a_person_replays_the_same(backend: Backend) -> None:
    team = Team([Agent("bot", handoffs=["operator"]), HumanAgent("operator", handoffs=["bot"])])

    def script() -> ScriptedModel:
        return ScriptedModel([reply("Hello."), transfer("operator", reason="asks a person")])

    runner = Runner(team, model=script(), store=backend.open())
    await runner.run("s1", "hi")
    await runner.run("s1", "a person please")

    replay = await runner.replay("s1", from_turn=1, model=script())

    assert [(t.original.agent, t.new.agent) for t in replay.turns] == [
        ("bot", "bot"), ("operator", "operator")]
    assert replay.same
    assert replay.turns[1].new.status == "waiting_for_human"


async def test_a_replay_keeps_the_runners_options(backend: Backend) -> None:
    runner = await _story(backend)
    runner.max_steps = 1  # set on the runner after it was built, as its config
    runner.on_max_steps = lambda ctx: "Let me pass you to a colleague."

    replay = await runner.replay("s1", from_turn=2, model=_routing_right())

    first = replay.turns[0].new
    assert (first.status, first.answer) == ("completed", "Let me pass you to a colleague.")
    assert runner.config.max_steps == 1
