"""`runner.stream`: events arrive while the turn waits, a reader that leaves does not stop
the turn, and a turn that raises before its terminal event raises in the reader."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from handoffs import Agent, Runner, Team
from handoffs.models import ModelRequest, ModelResponse, TextDelta


class Gated:
    """Streams "Hel", then waits for the test, then "lo" and the response."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await self.release.wait()
        return ModelResponse("Hello")

    async def stream(self, request: ModelRequest) -> Any:
        yield TextDelta("Hel")
        await self.release.wait()
        yield TextDelta("lo")
        yield ModelResponse("Hello")


async def test_events_arrive_while_the_model_is_still_working() -> None:
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    seen: list[str] = []
    async for e in runner.stream("s", "hi"):
        seen.append(e.type if e.type != "text_delta" else f"delta:{e['text']}")
        if e.type == "text_delta" and e["text"] == "Hel":
            # The model is blocked: this event came before the turn could finish.
            assert not model.release.is_set()
            model.release.set()
    assert seen == ["run_started", "agent_started", "delta:Hel", "delta:lo", "message",
                    "run_completed"]


async def test_a_reader_that_stops_leaves_the_turn_to_finish_and_be_stored() -> None:
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    async for e in runner.stream("s", "hi"):
        if e.type == "agent_started":
            break  # the client went away
    model.release.set()
    await asyncio.wait_for(runner.wait_for_turns(), 5)
    assert not runner._detached  # the finished task is not kept
    state = await runner.get_session("s")
    assert state is not None and state.status == "idle"
    assert [m.text for m in state.messages] == ["hi", "Hello"]


async def test_a_turn_that_raises_before_its_last_event_raises_in_the_reader() -> None:
    runner = Runner(Team([Agent("solo")]), model=Gated())

    async def broken_commit(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk on fire")

    runner.store.commit = broken_commit  # type: ignore[method-assign]
    with pytest.raises(RuntimeError, match="disk on fire"):
        async for _ in runner.stream("s", "hi"):
            pass
    assert not runner._detached


class Instant:
    """Answers at once, without waiting: the whole turn can run before the reader looks."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return ModelResponse("Hi")

    async def stream(self, request: ModelRequest) -> Any:
        yield TextDelta("Hi")
        yield ModelResponse("Hi")


async def test_a_turn_that_never_waits_streams_every_event_and_keeps_no_task() -> None:
    # Python 3.12+: the turn's task runs eagerly inside the first read; 3.11: in the same
    # pass of the event loop as the reader. Either way every event comes out, in order,
    # the terminal one carries the result, and no task is left behind.
    runner = Runner(Team([Agent("solo")]), model=Instant())
    for turn in range(2):
        events = [e async for e in runner.stream("s", f"hi {turn}")]
        assert [e.type for e in events] == ["run_started", "agent_started", "text_delta",
                                            "message", "run_completed"]
        assert events[-1].result.output == "Hi" and events[-1].turn == turn + 1
        assert not runner._detached
    state = await runner.get_session("s")
    assert state is not None and [m.text for m in state.messages] == [
        "hi 0", "Hi", "hi 1", "Hi"]


async def test_run_with_on_event_is_told_each_event_as_it_happens() -> None:
    """`runner.run(on_event=)`: the events `stream` yields, in order, while the turn runs,
    without a stream."""
    model = Gated()
    runner = Runner(Team([Agent("solo")]), model=model)
    seen: list[Any] = []

    def on_event(e: Any) -> None:
        seen.append(e)
        if e.type == "text_delta" and e["text"] == "Hel":
            assert not model.release.is_set()  # told before the turn could finish
            model.release.set()

    result = await runner.run("s", "hi", on_event=on_event)

    assert [e.type if e.type != "text_delta" else f"delta:{e['text']}" for e in seen] == [
        "run_started", "agent_started", "delta:Hel", "delta:lo", "message", "run_completed"]
    assert [e.seq for e in seen] == list(range(len(seen)))
    assert seen[-1].result is result and result.output == "Hello"
    assert [e.type for e in result.events] == [e.type for e in seen]


async def test_run_with_on_event_is_told_completed_only_once_the_turn_is_stored() -> None:
    from handoffs.stores.memory import MemoryStore

    said: list[str] = []

    class Recorded(MemoryStore):
        async def commit(self, state: Any, since: Any, events: Any = ()) -> None:
            await super().commit(state, since, events)
            said.append(f"stored {len(state.messages)} messages")

    model = Gated()
    model.release.set()
    runner = Runner(Team([Agent("solo")]), model=model, store=Recorded())

    await runner.run("s", "hi", on_event=lambda e: said.append(e.type))

    assert said[-2:] == ["stored 2 messages", "run_completed"]


async def test_a_relay_sends_the_answer_before_the_turn_is_stored() -> None:
    """A caller that relays events from another task (a server's subscribers) gets to run
    between the turn's last live event and its commit: the answer goes out first, not
    after the commit's work."""
    from handoffs.stores.memory import MemoryStore

    said: list[str] = []
    relayed: asyncio.Queue[str] = asyncio.Queue()

    class Recorded(MemoryStore):
        async def commit(self, state: Any, since: Any, events: Any = ()) -> None:
            said.append(f"commit {len(state.messages)}")
            await super().commit(state, since, events)

    async def relay() -> None:
        while True:
            said.append(f"sent {await relayed.get()}")

    sender = asyncio.get_running_loop().create_task(relay())
    await asyncio.sleep(0)
    model = Gated()
    model.release.set()
    runner = Runner(Team([Agent("solo")]), model=model, store=Recorded())
    await runner.run("s", "hi", on_event=lambda e: relayed.put_nowait(e.type))
    sender.cancel()

    assert "sent message" in said[:said.index("commit 2")], said
