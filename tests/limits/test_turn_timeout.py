"""A whole turn's time limit: run(timeout=...), Runner(turn_timeout=...), the fallback.

Timing assertions use generous margins: the limits are fractions of a second, the
bounds checked are seconds, and a tool that would sleep a minute shows an overrun."""

from __future__ import annotations

import asyncio
import time

import pytest

from handoffs import Agent, Handoff, HandoffsError, Runner, RunStatus, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool
async def slow_lookup(order_id: str) -> str:
    """Look an order up (takes a minute)."""
    await asyncio.sleep(60)
    return f"{order_id} found"


def team(fallback: bool = False, fallback_tools: list[object] | None = None) -> Team:
    agents = [Agent("triage", handoffs=["billing"]),
              Agent("billing", tools=[slow_lookup])]
    if fallback:
        agents.append(Agent("helpdesk", tools=fallback_tools or []))
    return Team(agents, entry="triage", fallback="helpdesk" if fallback else None)


async def test_a_turn_past_its_timeout_fails_with_timeout_and_the_session_stays_usable(
) -> None:
    model = ScriptedModel([transfer("billing"), call("slow_lookup", order_id="A-1"),
                           reply("Hello again.")])
    runner = Runner(team(), model=model)

    started = time.monotonic()
    result = await runner.run("s1", "where is A-1?", timeout=0.3)

    assert time.monotonic() - started < 10
    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "timeout"
    assert "time limit" in result.error.message
    state = await runner.get_session("s1")
    assert state is not None and state.status == "idle"  # persisted, not interrupted
    assert state.active_agent == "billing"
    again = await runner.run("s1", "hi")
    assert again.status is RunStatus.COMPLETED and again.output == "Hello again."


async def test_the_fallback_answers_a_timed_out_turn() -> None:
    model = ScriptedModel({"triage": [transfer("billing")],
                           "billing": [call("slow_lookup", order_id="A-1")],
                           "helpdesk": [reply("Sorry, that took too long; try again later.")]})
    runner = Runner(team(fallback=True), model=model, turn_timeout=0.3)

    result = await runner.run("s1", "where is A-1?")

    assert result.status is RunStatus.COMPLETED
    assert (result.agent, result.output) == ("helpdesk", "Sorry, that took too long; "
                                             "try again later.")
    recovery = result.handoffs[-1]
    assert recovery.reason == "error_recovery"
    assert recovery.extra["error"]["code"] == "timeout"


async def test_a_slow_fallback_is_bounded_too() -> None:
    model = ScriptedModel({"triage": [transfer("billing")],
                           "billing": [call("slow_lookup", order_id="A-1")],
                           "helpdesk": [call("slow_lookup", order_id="A-1")]})
    runner = Runner(team(fallback=True, fallback_tools=[slow_lookup]), model=model)

    started = time.monotonic()
    result = await runner.run("s1", "where is A-1?", timeout=0.4)

    assert time.monotonic() - started < 10  # the limit plus a grace, never the minute
    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "timeout"
    assert result.agent == "helpdesk"
    state = await runner.get_session("s1")
    assert state is not None and state.status == "idle"


async def test_a_delegation_running_at_the_deadline_is_stopped_with_the_turn() -> None:
    boss = Agent("boss", handoffs=[Handoff("billing", returns=True)])
    billing = Agent("billing", tools=[slow_lookup])
    model = ScriptedModel({"boss": [transfer("billing", task="check A-1")],
                           "billing": [call("slow_lookup", order_id="A-1")]})
    runner = Runner(Team([boss, billing]), model=model)

    started = time.monotonic()
    result = await runner.run("s1", "check A-1", timeout=0.3)

    assert time.monotonic() - started < 10
    assert result.error is not None and result.error.code == "timeout"


async def test_the_per_call_timeout_overrides_the_runner_default() -> None:
    model = ScriptedModel([reply("quick")])
    runner = Runner(Team([Agent("solo")]), model=model, turn_timeout=0.001)

    result = await runner.run("s1", "hi", timeout=30)

    assert result.status is RunStatus.COMPLETED and result.output == "quick"


def test_run_sync_takes_a_timeout() -> None:
    model = ScriptedModel([transfer("billing"), call("slow_lookup", order_id="A-1")])
    runner = Runner(team(), model=model)

    result = runner.run_sync("s1", "where is A-1?", timeout=0.3)

    assert result.error is not None and result.error.code == "timeout"


async def test_a_streamed_turn_past_its_timeout_ends_with_run_failed() -> None:
    model = ScriptedModel([transfer("billing"), call("slow_lookup", order_id="A-1")])
    runner = Runner(team(), model=model)

    events = [e async for e in runner.stream("s1", "where is A-1?", timeout=0.3)]

    assert events[-1].type == "run_failed" and events[-1]["code"] == "timeout"
    assert [e["tool"] for e in events if e.type == "tool_called"] == ["slow_lookup"]


async def test_an_agent_timeout_shorter_than_the_turn_keeps_its_own_message() -> None:
    slow = Agent("billing", tools=[slow_lookup], timeout=0.2)
    model = ScriptedModel([call("slow_lookup", order_id="A-1")])
    runner = Runner(Team([slow]), model=model)

    result = await runner.run("s1", "where is A-1?", timeout=30)

    assert result.error is not None and result.error.code == "timeout"
    assert result.error.message == "billing did not finish within 0.2 s."


@pytest.mark.parametrize("bad", [0, -1, "5", True])
async def test_a_timeout_must_be_a_positive_number(bad: object) -> None:
    with pytest.raises(HandoffsError) as caught:
        Runner(team(), model=ScriptedModel(), turn_timeout=bad)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_argument"
    runner = Runner(team(), model=ScriptedModel())
    with pytest.raises(HandoffsError) as caught:
        await runner.run("s1", "hi", timeout=bad)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_argument"
    assert await runner.get_session("s1") is None  # refused before anything was stored
