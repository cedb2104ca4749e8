"""Team construction checks, the Mermaid export, and behaviour 8: select_agent."""

from __future__ import annotations

import pytest

from handoffs import (
    Agent,
    Handoff,
    HandoffReason,
    HandoffsError,
    Runner,
    SessionState,
    Team,
    tool,
)
from handoffs.testing import ScriptedModel, reply


@tool
def transfer_to_billing() -> str:
    """A tool that happens to have a handoff's name."""
    return "x"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Team([Agent("a"), Agent("a")]), "Two agents are named 'a'"),
        (lambda: Team([Agent("a", handoffs=["ghost"])]), "'ghost', which is not in the team"),
        (lambda: Team([Agent("a", tools=[transfer_to_billing], handoffs=["billing"]),
                       Agent("billing")]), "collides with a tool"),
        (lambda: Team([Agent("a")], entry="zed"), "entry 'zed' is not one of its agents"),
        (lambda: Team([]), "at least one agent"),
    ],
)
def test_a_team_that_cannot_work_fails_at_construction(build, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(HandoffsError, match=message):
        build()


def test_handoffs_may_name_agents_objects_or_handoffs() -> None:
    billing = Agent("billing", description="Billing questions.")
    team = Team([Agent("triage", handoffs=[billing, "tech", Handoff("sales", tool_name="go")]),
                 billing, Agent("tech"), Agent("sales")])
    names = [r for r in team.plan("triage").routes]
    assert names == ["transfer_to_billing", "transfer_to_tech", "go"]
    assert team.plan("triage").routes["transfer_to_billing"].spec.description == (
        "Hand the conversation to billing: Billing questions.")


def test_mermaid_shows_every_route() -> None:
    team = Team([Agent("triage", handoffs=["billing", Handoff("policy", returns=True)]),
                 Agent("billing"), Agent("policy")])
    text = team.mermaid()
    assert text.startswith("flowchart LR")
    assert "triage -->|transfer_to_billing| billing" in text
    assert "triage -.->|ask_policy| policy" in text


def test_invalid_history_mode_is_refused_early() -> None:
    with pytest.raises(HandoffsError, match="history must be one of"):
        Handoff("x", history="everything")  # type: ignore[arg-type]


async def test_runner_without_any_model_fails_the_turn_saying_how_to_give_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("HANDOFFS_MODEL", raising=False)
    runner = Runner(Team([Agent("a")]))  # builds: operators need no model

    result = await runner.run("s", "hello")

    assert result.error is not None and result.error.code == "no_model"
    assert "has no model" in result.error.message
    state = await runner.get_session("s")
    assert state is not None and state.messages[0].text == "hello"


async def test_select_agent_moves_the_conversation_with_a_user_request_record() -> None:
    model = ScriptedModel([reply("Sales here.")])
    runner = Runner(Team([Agent("triage"), Agent("sales")]), model=model)

    record = await runner.select_agent("s", "sales")
    result = await runner.run("s", "price?")

    assert record.reason is HandoffReason.USER_REQUEST and record.accepted
    assert (record.source, record.target) == ("triage", "sales")
    assert result.agent == "sales"
    state = await runner.get_session("s")
    assert state is not None and state.handoffs[0].id == record.id


@pytest.mark.parametrize(("agent", "code"), [
    (Agent("hidden", user_selectable=False), "not_user_selectable"),
    (Agent("hidden", enabled=False), "target_disabled"),
])
async def test_select_agent_refuses_with_the_rejection_code(agent: Agent, code: str) -> None:
    runner = Runner(Team([Agent("triage"), agent]), model=ScriptedModel([]))
    with pytest.raises(HandoffsError) as info:
        await runner.select_agent("s", "hidden")
    assert info.value.code == code


async def test_select_unknown_agent_is_refused() -> None:
    runner = Runner(Team([Agent("triage")]), model=ScriptedModel([]))
    with pytest.raises(HandoffsError) as info:
        await runner.select_agent("s", "ghost")
    assert info.value.code == "unknown_target"


async def test_session_state_round_trips_through_json() -> None:
    model = ScriptedModel([reply("hi"), reply("again")])
    runner = Runner(Team([Agent("triage"), Agent("sales")]), model=model)
    await runner.run("s", "one")
    await runner.select_agent("s", "sales")
    await runner.run("s", "two", channel="web")
    state = await runner.get_session("s")
    assert state is not None
    again = SessionState.from_json(state.to_json())
    assert again.to_dict() == state.to_dict()
    assert (again.active_agent, again.channel, again.version) == ("sales", "web", state.version)
    assert again.version >= 3
