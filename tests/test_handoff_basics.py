"""Behaviours 1, 2, 9, 10 of the core issue: transfer, detection order, events, serialising."""

from __future__ import annotations

import asyncio
import json

import pytest

from conftest import two_agents
from handoffs import Agent, Handoff, HandoffReason, Runner, RunStatus, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer


async def test_transfer_hands_the_conversation_to_the_target_in_the_same_turn() -> None:
    model = ScriptedModel([transfer("billing", reason="charge question"), reply("Billing here.")])
    runner = Runner(two_agents(), model=model)

    result = await runner.run("s1", "I was charged twice")

    assert result.status is RunStatus.COMPLETED
    assert result.output == "Billing here."
    assert result.agent == "billing"
    assert [r.target for r in result.handoffs] == ["billing"]
    assert result.handoffs[0].reason is HandoffReason.LLM
    assert result.handoffs[0].explanation == "charge question"
    assert [r.agent for r in model.requests] == ["triage", "billing"]
    state = await runner.get_session("s1")
    assert state is not None and state.active_agent == "billing"


async def test_next_run_starts_at_the_agent_that_took_over() -> None:
    model = ScriptedModel([transfer("billing"), reply("Billing here."), reply("Still billing.")])
    runner = Runner(two_agents(), model=model)
    await runner.run("s1", "charged twice")

    result = await runner.run("s1", "and another thing")

    assert result.agent == "billing"
    assert model.requests[-1].agent == "billing"
    assert [m.text for m in model.requests[-1].messages if m.kind == "user"] == [
        "charged twice", "and another thing"]


async def test_ordinary_tools_run_before_the_handoff_in_the_same_response() -> None:
    order: list[str] = []

    @tool
    def note_it(text: str) -> str:
        """Write a note."""
        order.append(f"tool:{text}")
        return "noted"

    def on_handoff(ctx: object, payload: object) -> None:
        order.append("handoff")

    # `full`: billing is shown triage's call and its result (own_tools would keep them
    # with triage).
    triage = Agent("triage", tools=[note_it],
                   handoffs=[Handoff("billing", on_handoff=on_handoff, history="full")])
    billing = Agent("billing")
    # The handoff call comes first in the response, the tool second: the tool still runs first.
    model = ScriptedModel([[transfer("billing"), call("note_it", text="x")], reply("done")])
    result = await Runner(Team([triage, billing]), model=model).run("s", "hi")

    assert order == ["tool:x", "handoff"]
    assert result.agent == "billing"
    tool_msgs = [m for m in model.requests[1].messages if m.role == "tool"]
    assert [m.text for m in tool_msgs] == ["noted"]


async def test_second_handoff_in_one_response_is_rejected() -> None:
    triage = Agent("triage", handoffs=["billing", "tech"])
    team = Team([triage, Agent("billing"), Agent("tech")])
    model = ScriptedModel([[transfer("billing"), transfer("tech")], reply("billing answers")])

    result = await Runner(team, model=model).run("s", "hi")

    assert result.agent == "billing"
    accepted = [r for r in result.handoffs if r.accepted]
    rejected = [r for r in result.handoffs if not r.accepted]
    assert [r.target for r in accepted] == ["billing"]
    assert [(r.target, r.rejection) for r in rejected] == [("tech", "multiple_handoffs")]


async def test_events_of_a_turn_with_one_handoff_come_in_order() -> None:
    model = ScriptedModel([transfer("billing"), reply("Billing here.")])
    runner = Runner(two_agents(), model=model)

    events = [e async for e in runner.stream("s1", "hello")]

    assert [e.type for e in events if e.type not in ("tool_result",)] == [
        "run_started", "agent_started", "handoff_requested", "agent_handoff",
        "agent_changed", "agent_started", "message", "run_completed"]
    assert events[1]["agent"] == "triage" and events[5]["agent"] == "billing"
    changed = next(e for e in events if e.type == "agent_changed")
    assert (changed["display_name"], changed["icon"], changed["color"]) == (
        "Billing", "B", "#00f")
    final = events[-1]
    assert final.result is not None and final.result.output == "Billing here."
    for e in events:
        d = json.loads(json.dumps(e.to_dict()))
        assert {"type", "session_id", "turn", "at"} <= d.keys()
        assert d["session_id"] == "s1" and d["turn"] == 1


async def test_two_concurrent_runs_on_one_session_are_serialised() -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    class SlowThenFast:
        def __init__(self) -> None:
            self.calls = 0
            self.seen: list[list[str]] = []

        async def complete(self, request: object) -> object:
            from handoffs.models import ModelResponse

            self.calls += 1
            self.seen.append([m.text for m in request.messages])  # type: ignore[attr-defined]
            if self.calls == 1:
                started.set()
                await release.wait()
                return ModelResponse("first answer")
            return ModelResponse("second answer")

        async def stream(self, request: object):  # type: ignore[no-untyped-def]
            yield await self.complete(request)

    m = SlowThenFast()
    runner = Runner(Team([Agent("solo")]), model=m)
    first = asyncio.create_task(runner.run("s", "one"))
    await started.wait()
    second = asyncio.create_task(runner.run("s", "two"))
    await asyncio.sleep(0.01)
    assert not second.done()  # it waits for the first turn's lock
    release.set()
    r1, r2 = await first, await second

    assert (r1.output, r2.output) == ("first answer", "second answer")
    state = await runner.get_session("s")
    assert state is not None
    assert [m.text for m in state.messages] == ["one", "first answer", "two", "second answer"]
    # The second turn's model saw the whole first turn.
    assert m.seen[1] == ["one", "first answer", "two"]


async def test_different_sessions_do_not_wait_for_each_other() -> None:
    release = asyncio.Event()

    class Gate:
        async def complete(self, request):  # type: ignore[no-untyped-def]
            from handoffs.models import ModelResponse

            if request.messages[-1].text == "wait":
                await release.wait()
            return ModelResponse("ok")

        async def stream(self, request):  # type: ignore[no-untyped-def]
            yield await self.complete(request)

    runner = Runner(Team([Agent("solo")]), model=Gate())
    blocked = asyncio.create_task(runner.run("a", "wait"))
    result = await asyncio.wait_for(runner.run("b", "go"), 1)
    assert result.output == "ok"
    release.set()
    await blocked


def test_run_sync_works_without_an_event_loop() -> None:
    runner = Runner(two_agents(), model=ScriptedModel([reply("hi")]))
    assert runner.run_sync("s", "hello").output == "hi"


async def test_run_sync_inside_an_event_loop_says_to_await() -> None:
    from handoffs import HandoffsError

    runner = Runner(two_agents(), model=ScriptedModel([reply("hi")]))
    with pytest.raises(HandoffsError, match="await"):
        runner.run_sync("s", "hello")
