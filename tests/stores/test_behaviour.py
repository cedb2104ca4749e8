"""The same behaviour, whichever store keeps the sessions (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import asyncio
import json

import pytest

from handoffs import Agent, HandoffReason, HandoffsError, Note, RunContext, Runner, Team, tool
from handoffs.core.messages import AssistantMessage, UserMessage
from handoffs.core.session import Checkpoint, SessionState
from handoffs.models.base import ModelRequest, ModelResponse
from handoffs.stores import rows
from handoffs.stores.transfer import fetch_session_tool
from handoffs.testing import ScriptedModel, call, reply, transfer

from .conftest import Backend, support_team


async def test_active_agent_sticks_across_runner_instances(backend: Backend) -> None:
    first = Runner(support_team(), model=ScriptedModel([transfer("billing"), reply("Billing.")]),
                   store=backend.open())
    await first.run("s1", "I was charged twice")

    model = ScriptedModel([reply("Still billing.")])
    second = Runner(support_team(), model=model, store=backend.open())
    result = await second.run("s1", "and the refund?")

    assert result.agent == "billing"
    assert [r.agent for r in model.requests] == ["billing"]
    assert [m.text for m in model.requests[0].messages if isinstance(m, UserMessage)] == [
        "I was charged twice", "and the refund?"]


async def test_handoff_records_and_shared_memory_are_persisted(backend: Backend) -> None:
    @tool
    def remember(ctx: RunContext, order: str) -> str:
        """Remember the order."""
        ctx.shared["order"] = order
        return "ok"

    team = support_team(tools=[remember])
    model = ScriptedModel([call("remember", order="A-1"), transfer("billing", reason="refund"),
                           reply("Refunded.")])
    await Runner(team, model=model, store=backend.open()).run("s1", "refund A-1")

    state = await backend.open().load("s1")

    assert state is not None
    assert state.shared["order"] == "A-1"
    assert [(r.source, r.target, r.reason, r.explanation) for r in state.handoffs] == [
        ("triage", "billing", HandoffReason.LLM, "refund")]
    assert state.active_agent == "billing"
    assert state.status == "idle"
    assert state.turn == 1
    assert state.messages[-1] == AssistantMessage("Refunded.", "billing")


async def test_user_message_is_durable_before_the_model_is_called(backend: Backend) -> None:
    seen: list[tuple[list[str], str]] = []
    reader = backend.open()

    class Peeking(ScriptedModel):
        async def complete(self, request: ModelRequest) -> ModelResponse:
            state = await reader.load("s1")
            assert state is not None
            seen.append(([m.text for m in state.messages], state.status))
            return await super().complete(request)

    runner = Runner(support_team(), model=Peeking([reply("Hi.")]), store=backend.open())
    await runner.run("s1", "hello")

    # A live turn holds the lock, so the session reads "running", not "interrupted".
    assert seen == [(["hello"], "running")]


async def test_a_cancelled_turn_is_answered_by_the_next_run_without_storing_twice(
    backend: Backend,
) -> None:
    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Take forever."""
        started.set()
        await asyncio.sleep(60)
        return "never"

    team = support_team(tools=[slow])
    runner = Runner(team, model=ScriptedModel([call("slow")]), store=backend.open())
    task = asyncio.create_task(runner.run("s1", "refund please"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    reader = backend.open()
    state = await reader.load("s1")
    assert state is not None
    assert [m.text for m in state.messages if isinstance(m, UserMessage)] == ["refund please"]
    assert state.status == "interrupted"  # the same on every store, memory included

    model = ScriptedModel([reply("Refunded.")])
    result = await Runner(team, model=model, store=backend.open()).run("s1", "refund please")

    assert result.output == "Refunded."
    state = await reader.load("s1")
    assert state is not None and state.status == "idle"
    users = [m.text for m in state.messages if isinstance(m, UserMessage)]
    assert users == ["refund please"]
    assert any(isinstance(m, Note) and "interrupted" in m.text for m in state.messages)


async def test_a_new_message_after_an_interruption_is_answered_with_the_pending_one(
    backend: Backend,
) -> None:
    store = backend.open()
    state = SessionState("s1", active_agent="triage", turn=1, status="running")
    state.messages.append(UserMessage("first question", "triage"))
    await store.commit(state, Checkpoint(0, 0, 0))

    model = ScriptedModel([reply("Both answered."), reply("never used")])
    result = await Runner(support_team(), model=model, store=backend.open()).run(
        "s1", "second question")

    assert result.output == "Both answered."
    assert len(model.requests) == 1  # one catch-up at most: a single model call
    seen = [m.text for m in model.requests[0].messages if isinstance(m, UserMessage)]
    assert seen == ["first question", "second question"]
    loaded = await backend.open().load("s1")
    assert loaded is not None and loaded.status == "idle"
    texts = [m.text for m in loaded.messages if not isinstance(m, Note)]
    assert texts == ["first question", "second question", "Both answered."]


async def test_export_then_import_gives_back_an_equal_session(backend: Backend) -> None:
    store = backend.open()
    model = ScriptedModel([transfer("billing", reason="money"), reply("Billing."),
                           reply("Again.")])
    runner = Runner(support_team(), model=model, store=store)
    await runner.run("s1", "hi", channel="web")
    await runner.run("s1", "more")
    original = await store.load("s1")
    assert original is not None

    exported = await store.export_session("s1")
    assert exported is not None
    text = json.dumps(exported)
    assert await store.delete("s1")
    imported = await store.import_session(text)
    again = await backend.open().load("s1")

    assert again is not None
    assert imported.to_dict() == original.to_dict()
    assert again.to_dict() == original.to_dict()
    assert await store.export_session("s1") == exported
    if backend.durable:
        types = [e["type"] for e in exported["events"]]
        assert types.count("run_completed") == 2 and "agent_handoff" in types


async def test_importing_over_an_existing_session_needs_replace(backend: Backend) -> None:
    store = backend.open()
    await Runner(support_team(), model=ScriptedModel([reply("x")]), store=store).run("s1", "hi")
    exported = await store.export_session("s1")
    assert exported is not None

    with pytest.raises(HandoffsError) as err:
        await store.import_session(exported)
    assert err.value.code == "session_exists"
    exported["active_agent"] = "billing"
    await store.import_session(exported, replace=True)
    state = await store.load("s1")
    assert state is not None and state.active_agent == "billing"
    assert len(state.messages) == 2


async def test_sessions_are_listed_by_recency_and_paginated(backend: Backend) -> None:
    store = backend.open()
    runner = Runner(support_team(), model=ScriptedModel([reply("x")] * 5), store=store)
    for sid in ["a", "b", "c", "d"]:
        await runner.run(sid, "hi")
    await runner.run("b", "again")

    first = await store.list_sessions(limit=2)
    second = await store.list_sessions(limit=2, offset=2)

    assert [s.id for s in first + second] == ["b", "d", "c", "a"]
    assert (first[0].turn, first[0].messages, first[0].status) == (2, 4, "idle")


async def test_deleting_a_session_removes_it(backend: Backend) -> None:
    store = backend.open()
    await Runner(support_team(), model=ScriptedModel([reply("x")]), store=store).run("s1", "hi")

    assert await store.delete("s1") is True
    assert await store.delete("s1") is False
    assert await backend.open().load("s1") is None
    assert await store.list_sessions() == []


async def test_a_write_that_does_not_continue_the_stored_version_is_refused(
    backend: Backend,
) -> None:
    if not backend.durable:
        pytest.skip("MemoryStore keeps the live object: there is no stale copy to write.")
    store = backend.open()
    await Runner(support_team(), model=ScriptedModel([reply("x")]), store=store).run("s1", "hi")
    a = await store.load("s1")
    b = await backend.open().load("s1")
    assert a is not None and b is not None
    since = a.checkpoint()
    a.messages.append(UserMessage("from a", "triage"))
    await store.commit(a, since)

    since = b.checkpoint()
    b.messages.append(UserMessage("from b", "triage"))
    with pytest.raises(HandoffsError) as err:
        await store.commit(b, since)

    assert err.value.code == "session_conflict"
    state = await store.load("s1")
    assert state is not None and state.messages[-1].text == "from a"


async def test_a_turn_on_a_long_session_writes_only_its_new_rows(backend: Backend) -> None:
    store = backend.open()
    long = SessionState("long", active_agent="triage", turn=5000)
    for i in range(5000):
        long.messages.append(UserMessage(f"question {i}", "triage"))
        long.messages.append(AssistantMessage(f"answer {i}", "triage"))
    await store.import_session(long.to_dict())

    loaded = await store.load("long")
    assert loaded is not None and len(loaded.messages) == 10_000
    probe = loaded.snapshot()
    since = probe.checkpoint()
    probe.messages.append(UserMessage("one more", "triage"))
    write = rows.encode_commit(probe, since, ())
    assert len(write.messages) == 1 and write.first_message == 10_000

    model = ScriptedModel([reply("Sure.")])
    await Runner(support_team(), model=model, store=store).run("long", "one more")
    again = await backend.open().load("long")
    assert again is not None and len(again.messages) == 10_002
    assert again.messages[-1].text == "Sure."


async def test_sessions_do_not_wait_on_each_other(backend: Backend) -> None:
    store = backend.open()
    async with store.lock("busy"):
        # Another session's lock is free while "busy" is held (no timeout needed).
        async with store.lock("other"):
            pass
        runner = Runner(support_team(), model=ScriptedModel([reply("free")]), store=store)
        result = await asyncio.wait_for(runner.run("other", "hi"), 5)
    assert result.output == "free"


async def test_two_turns_on_one_session_in_one_process_never_interleave(
    backend: Backend,
) -> None:
    @tool
    async def pause() -> str:
        """Wait a moment."""
        await asyncio.sleep(0.05)
        return "done"

    team = support_team(tools=[pause])
    model = ScriptedModel([call("pause"), reply("one"), call("pause"), reply("two")])
    runner = Runner(team, model=model, store=backend.open())
    await asyncio.gather(runner.run("s1", "A"), runner.run("s1", "B"))

    state = await backend.open().load("s1")
    assert state is not None
    kinds = [m.kind for m in state.messages]
    assert kinds == ["user", "assistant", "tool_result", "assistant"] * 2
    assert state.turn == 2


# -- session transfer ----------------------------------------------------------------


async def _conversation(backend: Backend, team: Team) -> Runner:
    model = ScriptedModel([transfer("billing"), reply("Your refund is on its way."),
                           reply("Summary: customer A-1 was refunded.")])
    runner = Runner(team, model=model, store=backend.open())
    await runner.run("old", "refund order A-1")
    return runner


async def test_transfer_with_full_context_copies_the_transcript(backend: Backend) -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing"), Agent("support")])
    runner = await _conversation(backend, team)
    old_before = await runner.get_session("old")
    assert old_before is not None

    new = await runner.transfer_session("old", "support", context="full")

    assert new.id == "old-t1" and new.active_agent == "support"
    assert new.messages[: len(old_before.messages)] == old_before.messages
    assert new.metadata["transferred_from"] == "old"
    old = await backend.open().load("old")
    assert old is not None and old.metadata["transferred_to"] == "old-t1"
    record = old.handoffs[-1]
    assert (record.target, record.reason, record.extra["transferred_session"]) == (
        "support", HandoffReason.PROGRAMMATIC, "old-t1")
    model = ScriptedModel([reply("Support here.")])
    again = await Runner(team, model=model, store=backend.open()).run("old-t1", "hello?")
    assert again.agent == "support"
    assert "refund order A-1" in [m.text for m in model.requests[0].messages]


async def test_transfer_with_a_summary_carries_only_the_summary(backend: Backend) -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing"), Agent("support")])
    runner = await _conversation(backend, team)

    new = await runner.transfer_session("old", "support", context="summary")

    assert len(new.messages) == 1
    note = new.messages[0]
    assert isinstance(note, Note) and note.to_model
    assert "customer A-1 was refunded" in note.text
    stored = await backend.open().load(new.id)
    assert stored is not None and stored.to_dict() == new.to_dict()


async def test_transfer_by_reference_lets_the_target_fetch_the_old_session(
    backend: Backend,
) -> None:
    store = backend.open()
    support = Agent("support", tools=[fetch_session_tool(store)])
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing"), support])
    model = ScriptedModel([transfer("billing"), reply("Your refund is on its way."),
                           call("fetch_previous_session"), reply("I see the refund.")])
    runner = Runner(team, model=model, store=store)
    await runner.run("old", "refund order A-1")

    new = await runner.transfer_session("old", "support", context="reference")
    result = await runner.run(new.id, "what happened?")

    assert result.output == "I see the refund."
    tool_text = next(m.text for m in model.requests[-1].messages if m.role == "tool")
    assert "refund order A-1" in tool_text and "Your refund is on its way." in tool_text
    assert len(new.messages) == 1


async def test_transfer_to_an_unknown_agent_or_session_is_refused(backend: Backend) -> None:
    runner = Runner(support_team(), model=ScriptedModel([reply("x")]), store=backend.open())
    await runner.run("s1", "hi")
    with pytest.raises(HandoffsError) as err:
        await runner.transfer_session("s1", "nobody", context="full")
    assert err.value.code == "unknown_target"
    with pytest.raises(HandoffsError) as err:
        await runner.transfer_session("missing", "billing", context="full")
    assert err.value.code == "unknown_session"


async def test_transfer_to_a_taken_session_id_is_refused_and_changes_neither(
        backend: Backend) -> None:
    runner = Runner(support_team(), model=ScriptedModel([reply("one"), reply("two")]),
                    store=backend.open())
    await runner.run("s1", "hi")
    await runner.run("taken", "hello")
    with pytest.raises(HandoffsError) as err:
        await runner.transfer_session("s1", "billing", context="full",
                                      new_session_id="taken")
    assert err.value.code == "session_exists"
    old = await backend.open().load("s1")
    taken = await backend.open().load("taken")
    assert old is not None and taken is not None
    assert old.handoffs == [] and "transferred_to" not in old.metadata
    assert [m.text for m in old.messages] == ["hi", "one"]
    assert [m.text for m in taken.messages] == ["hello", "two"]


async def test_every_event_is_stored_once_under_its_own_number_across_commits(
        backend: Backend) -> None:
    """A turn continued after an approval commits twice (the decision, then the rest):
    each event is stored once, at the number the runtime gave it."""
    @tool(needs_approval=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded"

    team = Team([Agent("billing", tools=[refund])])
    model = ScriptedModel([call("refund", order_id="A-1"), reply("Done."), reply("Hello.")])
    runner = Runner(team, model=model, store=backend.open())
    paused = await runner.run("s1", "refund A-1")
    call_id = next(e for e in paused.events if e.type == "approval_requested")["call_id"]
    done = await runner.approve("s1", call_id)
    store = backend.open()

    stored = await store.events_after("s1")  # type: ignore[attr-defined]

    numbers = [e["seq"] for e in stored]
    assert numbers == list(range(len(stored)))
    assert [e["type"] for e in stored] == [e.type for e in paused.events + done.events]
    assert [e.seq for e in paused.events + done.events] == numbers
    assert await store.event_count("s1") == len(stored)  # type: ignore[attr-defined]


async def test_a_turns_events_keep_its_turn_number_when_read_after_later_turns(
        backend: Backend) -> None:
    """Events are built from their parts when first read: read after the session moved
    on, a turn's events still say their own turn (the memory store said the latest)."""
    runner = Runner(Team([Agent("a")]), model=ScriptedModel([reply("one"), reply("two")]),
                    store=backend.open())
    first = await runner.run("s1", "hi")
    await runner.run("s1", "again")

    stored = await runner.store.events_after("s1")

    assert {e.turn for e in first.events} == {1}
    assert [e["turn"] for e in stored] == [1] * len(first.events) + [2] * (
        len(stored) - len(first.events))


async def test_the_turn_after_one_that_died_numbers_past_it_and_says_so(
        backend: Backend) -> None:
    from handoffs.runtime.state import TURN_EVENTS

    class Hangs:
        async def complete(self, request: ModelRequest) -> ModelResponse:
            await asyncio.sleep(60)
            raise AssertionError("never answers")

    store = backend.open()
    await Runner(support_team(), model=ScriptedModel([reply("Hi.")]), store=store).run(
        "s1", "hello")
    dying = asyncio.create_task(Runner(support_team(), model=Hangs(), store=store).run(
        "s1", "are you there?"))
    await asyncio.sleep(0.2)
    dying.cancel()  # from outside: the turn dies as in a crash
    await asyncio.gather(dying, return_exceptions=True)
    before = await store.event_count("s1")  # type: ignore[attr-defined]

    result = await Runner(support_team(), model=ScriptedModel([reply("Yes.")]),
                          store=store).run("s1", "hello?")

    assert result.events[0].type == "run_interrupted"
    assert result.events[0]["interrupted_turn"] == 2
    assert result.events[0].seq == before + TURN_EVENTS
    stored = await backend.open().events_after("s1", before - 1)  # type: ignore[attr-defined]
    assert [(e["seq"], e["type"]) for e in stored] == [
        (e.seq, e.type) for e in result.events]


async def test_reasoning_parts_and_cache_counts_survive_the_store(backend: Backend) -> None:
    from handoffs.core.messages import Reasoning
    from handoffs.models.base import Usage

    thinking = Reasoning("anthropic", "thinking",
                         {"type": "thinking", "thinking": "The user wants…", "signature": "EqQB"},
                         model="claude-sonnet-4-6")
    signed = Reasoning("gemini", "thought_signature", {"thought_signature": "c2ln"},
                       call_id="c1")
    state = SessionState("s1", active_agent="triage")
    state.messages.append(UserMessage("hi", "triage"))
    state.messages.append(AssistantMessage("", "triage", (), (thinking, signed)))
    store = backend.open()
    await store.commit(state, Checkpoint(0, 0, 0))

    loaded = await backend.open().load("s1")

    assert loaded is not None
    kept = loaded.messages[1]
    assert isinstance(kept, AssistantMessage)
    assert kept.reasoning == (thinking, signed)
    counts = Usage(32050, 120, 1, cache_read_tokens=30000, cache_write_tokens=2000,
                   reasoning_tokens=80)
    assert Usage.from_dict(json.loads(json.dumps(counts.to_dict()))) == counts
