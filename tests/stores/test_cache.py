"""A durable store reuses the state it last committed only while nothing else changed it."""

from __future__ import annotations

import pytest

from handoffs import Runner
from handoffs.core.messages import UserMessage
from handoffs.testing import ScriptedModel, reply, transfer

from .conftest import Backend, support_team


def _durable_only(backend: Backend) -> None:
    if not backend.durable:
        pytest.skip("MemoryStore always serves its live object: it has no cache to check.")


async def test_the_next_turn_reuses_the_committed_state(backend: Backend) -> None:
    _durable_only(backend)
    store = backend.open()
    runner = Runner(support_team(), model=ScriptedModel([reply("one"), reply("two")]),
                    store=store)
    await runner.run("s", "first")
    loaded = await store.load("s")
    assert loaded is await store.load("s")  # no rows decoded: the same object
    await runner.run("s", "second")
    assert [m.text for m in (await store.load("s")).messages] == [  # type: ignore[union-attr]
        "first", "one", "second", "two"]


async def test_a_write_by_another_store_object_is_always_seen(backend: Backend) -> None:
    _durable_only(backend)
    here, there = backend.open(), backend.open()  # e.g. two processes on one database
    model = ScriptedModel([reply("from here"), transfer("billing"), reply("from there"),
                           reply("here again")])
    a = Runner(support_team(), model=model, store=here)
    b = Runner(support_team(), model=model, store=there)
    await a.run("s", "one")
    await b.run("s", "two")

    result = await a.run("s", "three")

    assert result.agent == "billing"  # the handoff made through the other store
    state = await here.load("s")
    assert state is not None
    assert [m.text for m in state.messages if isinstance(m, UserMessage)] == [
        "one", "two", "three"]
    assert [r.target for r in state.handoffs] == ["billing"]


async def test_a_state_changed_after_its_commit_is_never_served(backend: Backend) -> None:
    _durable_only(backend)
    store = backend.open()
    runner = Runner(support_team(), model=ScriptedModel([reply("ok")]), store=store)
    await runner.run("s", "hello")
    state = await store.load("s")
    assert state is not None
    # A turn that died in this process after changing the object, without committing:
    state.messages.append(UserMessage("never committed", "triage"))

    again = await store.load("s")

    assert again is not state
    assert again is not None and [m.text for m in again.messages] == ["hello", "ok"]


async def test_a_header_changed_after_its_commit_is_never_served(backend: Backend) -> None:
    _durable_only(backend)
    store = backend.open()
    runner = Runner(support_team(), model=ScriptedModel([reply("ok")]), store=store)
    await runner.run("s", "hello")
    state = await store.load("s")
    assert state is not None
    state.shared["dirty"] = True  # no new rows: only the header differs
    state.active_agent = "billing"

    again = await store.load("s")

    assert again is not state and again is not None
    assert "dirty" not in again.shared and again.active_agent == "triage"
