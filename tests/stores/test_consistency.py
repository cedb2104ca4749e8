"""A turn that dies never leaves half-applied state behind, on any store.

A commit, once started, completes before the session's lock is released (a cancel waits
for it); what a turn changed but never committed is never served by the next `load`;
and a session whose turn died reads `interrupted` the same way through `load`,
`export_session` and `list_sessions`.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from handoffs import Agent, HandoffsError, HumanAgent, Runner, Team, tool
from handoffs.core.messages import UserMessage
from handoffs.core.session import SessionState
from handoffs.testing import ScriptedModel, call, reply, transfer

from .conftest import Backend, support_team


async def _open(backend: Backend):  # type: ignore[no-untyped-def]
    """A store that has done one round trip already (a PostgreSQL pool is open)."""
    store = backend.open()
    assert await store.load("warm-up") is None
    return store


async def test_a_commit_cancelled_mid_way_completes_before_the_lock_is_released(
    backend: Backend,
) -> None:
    store = await _open(backend)
    writing = asyncio.Event()

    async def big_turn() -> None:
        async with store.lock("s1"):
            state = await store.load("s1") or SessionState("s1", active_agent="triage")
            since = state.checkpoint()
            for i in range(3000):
                state.messages.append(UserMessage(f"message {i} " + "x" * 200, "triage"))
            writing.set()
            await store.commit(state, since)

    task = asyncio.create_task(big_turn())
    await writing.wait()  # the task is inside `commit` now
    task.cancel()
    await asyncio.sleep(0)
    task.cancel()  # a second cancel does not cut the write short either
    with contextlib.suppress(asyncio.CancelledError):
        await task

    # The next turn: never blocked, and it sees the whole write.
    async with asyncio.timeout(10), store.lock("s1"):
        state = await store.load("s1")
        assert state is not None and len(state.messages) == 3000
        since = state.checkpoint()
        state.messages.append(UserMessage("next turn", "triage"))
        await store.commit(state, since)

    again = await backend.open().load("s1")
    assert again is not None and len(again.messages) == 3001
    assert again.messages[-1].text == "next turn"


async def test_a_turn_that_raises_before_its_commit_leaves_the_committed_session(
    backend: Backend,
) -> None:
    store = backend.open()
    await Runner(support_team(), model=ScriptedModel([reply("ok")]), store=store).run(
        "s1", "hello")

    with pytest.raises(RuntimeError):
        async with store.lock("s1"):
            state = await store.load("s1")
            assert state is not None
            state.messages.append(UserMessage("never committed", "triage"))
            state.active_agent = "billing"
            state.status = "running"
            state.shared["half"] = True
            raise RuntimeError("the turn died here")

    for reader in (store, backend.open()):
        again = await reader.load("s1")
        assert again is not None
        assert [m.text for m in again.messages] == ["hello", "ok"]
        assert (again.active_agent, again.status) == ("triage", "idle")
        assert "half" not in again.shared

    model = ScriptedModel([reply("still triage")])
    result = await Runner(support_team(), model=model, store=store).run("s1", "next")
    assert result.agent == "triage"
    assert [m.text for m in model.requests[0].messages] == ["hello", "ok", "next"]


async def test_a_refused_operator_reply_stores_nothing(backend: Backend) -> None:
    team = Team([Agent("triage", handoffs=["operator"]), HumanAgent("operator")])
    store = backend.open()
    runner = Runner(team, model=ScriptedModel([transfer("operator")]), store=store)
    await runner.run("s1", "a person please")
    before = await backend.open().export_session("s1")
    assert before is not None and before["status"] == "waiting_for_human"

    with pytest.raises(HandoffsError) as err:
        await runner.reply_as_human("s1", "Hello, I am Ann.", handoff_to="nobody")
    assert err.value.code == "unknown_target"

    state = await store.load("s1")
    assert state is not None
    assert "Hello, I am Ann." not in [m.text for m in state.messages]
    assert await store.export_session("s1") == before


async def test_a_cancelled_turn_reads_as_interrupted_with_what_it_committed(
    backend: Backend,
) -> None:
    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Take forever."""
        started.set()
        await asyncio.sleep(60)
        return "never"

    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing", tools=[slow])])
    store = backend.open()
    model = ScriptedModel([transfer("billing"), call("slow")])
    task = asyncio.create_task(Runner(team, model=model, store=store).run("s1", "refund"))
    await started.wait()  # the turn moved to billing, uncommitted, and waits in a tool
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    for reader in (store, backend.open()):
        state = await reader.load("s1")
        assert state is not None
        # What the first commit wrote: the user's message, triage still active.
        assert [m.text for m in state.messages] == ["refund"]
        assert (state.active_agent, state.status, state.handoffs) == (
            "triage", "interrupted", [])
        exported = await reader.export_session("s1")
        assert exported is not None and exported["status"] == "interrupted"
        listed = await reader.list_sessions()
        assert [(s.id, s.status, s.active_agent, s.messages) for s in listed] == [
            ("s1", "interrupted", "triage", 1)]


async def test_inside_its_turn_a_session_reads_running_not_interrupted(
    backend: Backend,
) -> None:
    store = backend.open()
    seen: list[tuple[str, str | None]] = []

    @tool
    async def look() -> str:
        """Look at the session from the side, as an operator's dashboard would."""
        reader = backend.open()
        state = await reader.load("s1")
        exported = await reader.export_session("s1")
        assert state is not None and exported is not None
        seen.append((state.status, exported["status"]))
        return "looked"

    model = ScriptedModel([call("look"), reply("done")])
    await Runner(support_team(tools=[look]), model=model, store=store).run("s1", "hi")

    assert seen == [("running", "running")]
    state = await store.load("s1")
    assert state is not None and state.status == "idle"


async def test_a_new_session_over_an_existing_one_is_refused(backend: Backend) -> None:
    store = backend.open()
    await Runner(support_team(), model=ScriptedModel([reply("ok")]), store=store).run(
        "s1", "hello")
    before = await store.export_session("s1")

    fresh = SessionState("s1", active_agent="billing")  # never loaded: version 0
    since = fresh.checkpoint()
    fresh.messages.append(UserMessage("overwrite", "billing"))
    with pytest.raises(HandoffsError) as err:
        await store.commit(fresh, since)

    assert err.value.code == "session_conflict"
    assert fresh.version == 0
    assert await store.export_session("s1") == before
    assert await backend.open().export_session("s1") == before
