"""Interrupted streams, redeployed teams, and turns that resume: nothing is lost."""

from __future__ import annotations

import asyncio

from handoffs import Agent, Runner, Team
from handoffs.models import ModelRequest, ModelResponse
from handoffs.stores import MemoryStore
from handoffs.testing import ScriptedModel, reply, transfer


class Gated:
    """A model that waits at the gate before answering: a slow provider."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.seen: list[list[str]] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.seen.append([m.text for m in request.messages])
        await self.gate.wait()
        return ModelResponse(f"answer to {request.messages[-1].text}")

    async def stream(self, request):  # type: ignore[no-untyped-def]
        yield await self.complete(request)


async def test_a_turn_goes_on_when_the_stream_consumer_goes_away() -> None:
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    stream = runner.stream("s", "first")
    async for event in stream:
        if event.type == "agent_started":
            break  # the client went away mid-turn
    await stream.aclose()

    model.gate.set()
    result = await runner.run("s", "second")  # waits for the first turn to finish

    assert result.output == "answer to second"
    state = await runner.get_session("s")
    assert state is not None
    texts = [m.text for m in state.messages if m.kind in ("user", "assistant")]
    assert texts == ["first", "answer to first", "second", "answer to second"]


async def test_a_turn_killed_mid_way_is_answered_with_the_next_message() -> None:
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    killed = asyncio.create_task(runner.run("s", "first"))
    while not model.seen:
        await asyncio.sleep(0)
    killed.cancel()  # like a process that dies mid-turn: the message is already stored

    model.gate.set()
    result = await runner.run("s", "second")

    assert result.output == "answer to second"
    assert model.seen[-1] == ["first", "second"]  # one model call sees both, in order
    state = await runner.get_session("s")
    assert state is not None
    texts = [m.text for m in state.messages if m.kind in ("user", "assistant")]
    assert texts == ["first", "second", "answer to second"]


async def test_resume_answers_an_interrupted_message_without_a_new_one() -> None:
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    killed = asyncio.create_task(runner.run("s", "first"))
    while not model.seen:
        await asyncio.sleep(0)
    killed.cancel()
    model.gate.set()

    result = await runner.resume("s")
    again = await runner.resume("s")

    assert result is not None and result.output == "answer to first"
    assert again is None  # nothing pending any more: answered once
    state = await runner.get_session("s")
    assert state is not None and state.status == "idle"
    assert [m.text for m in state.messages if m.kind in ("user", "assistant")] == [
        "first", "answer to first"]


async def test_the_same_message_after_a_killed_turn_is_answered_once() -> None:
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    killed = asyncio.create_task(runner.run("s", "hello"))
    while not model.seen:
        await asyncio.sleep(0)
    killed.cancel()

    model.gate.set()
    result = await runner.run("s", "hello")  # the client retries the same message

    state = await runner.get_session("s")
    assert state is not None
    assert result.output == "answer to hello"
    assert [m.text for m in state.messages if m.kind == "user"] == ["hello"]


async def test_a_session_whose_agent_left_the_team_continues_at_the_entry() -> None:
    store = MemoryStore()
    old = Team([Agent("triage", handoffs=["legacy"]), Agent("legacy")])
    await Runner(old, model=ScriptedModel([transfer("legacy"), reply("legacy here")]),
                 store=store).run("s", "hi")

    new = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])  # redeployed
    result = await Runner(new, model=ScriptedModel([reply("triage here")]),
                          store=store).run("s", "still there?")

    assert result.agent == "triage" and result.output == "triage here"


async def test_cancel_stops_a_running_turn_and_the_session_goes_on() -> None:
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    assert runner.cancel("s") is False  # nothing running
    running = asyncio.create_task(runner.run("s", "long question"))
    while not model.seen:
        await asyncio.sleep(0)

    assert runner.cancel("s") is True
    result = await running  # run() returns; its caller's task is not cancelled

    assert result.error is not None and result.error.code == "cancelled"
    state = await runner.get_session("s")
    assert state is not None and state.status == "idle"
    model.gate.set()
    after = await runner.run("s", "next")
    assert after.output == "answer to next"
    assert model.seen[-1] == ["long question", "next"]  # no catch-up: one call
    assert len(model.seen) == 2


async def test_cancel_ends_a_stream_with_its_failed_event() -> None:
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    types = []
    async for event in runner.stream("s", "hello"):
        types.append(event.type)
        if event.type == "agent_started":
            await asyncio.sleep(0)
            assert runner.cancel("s")
    assert types[-1] == "run_failed" and event.data["code"] == "cancelled"


async def test_cancel_from_another_thread_stops_the_turn() -> None:
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    running = asyncio.create_task(runner.run("s", "long question"))
    while not model.seen:
        await asyncio.sleep(0)

    stopped = await asyncio.to_thread(runner.cancel, "s")  # e.g. a signal or UI thread
    result = await running

    assert stopped and result.error is not None and result.error.code == "cancelled"
