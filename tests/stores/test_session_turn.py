"""`stores.edits`: one change to a stored session under its lock, on every store."""

from __future__ import annotations

import asyncio

import pytest

from handoffs.core.messages import Note
from handoffs.core.session import SessionState
from handoffs.errors import HandoffsError
from handoffs.stores.edits import (
    Held,
    create_session,
    delete_session,
    edit_session,
    session_turn,
)

from .conftest import Backend


def _made(session_id: str) -> SessionState:
    state = SessionState(session_id, active_agent="triage")
    state.messages.append(Note("made on first use", "triage"))
    return state


async def test_change_returns_its_value_and_what_it_committed_is_stored(
    backend: Backend,
) -> None:
    store = backend.open()
    assert await create_session(store, SessionState("s1", active_agent="triage"))

    async def rename(held: Held) -> str:
        held.state.shared["name"] = "Ada"
        held.state.messages.append(Note("renamed", "triage"))
        await held.commit()
        return "renamed"

    assert await session_turn(store, "s1", rename) == "renamed"
    again = await backend.open().load("s1")
    assert again is not None and again.shared == {"name": "Ada"}
    assert [m.text for m in again.messages] == ["renamed"]


async def test_a_session_not_stored_is_none_and_the_change_never_runs(
    backend: Backend,
) -> None:
    ran: list[str] = []

    async def change(held: Held) -> str:
        ran.append(held.state.id)
        return "ran"

    assert await session_turn(backend.open(), "nobody", change) is None
    assert ran == []
    assert await backend.open().load("nobody") is None


async def test_missing_makes_a_new_session_stored_whole_at_its_commit(
    backend: Backend,
) -> None:
    async def keep(held: Held) -> int:
        await held.commit()
        return len(held.state.messages)

    assert await session_turn(backend.open(), "fresh", keep, _made) == 1
    stored = await backend.open().load("fresh")
    assert stored is not None and [m.text for m in stored.messages] == ["made on first use"]


async def test_missing_may_refuse_with_the_callers_error(backend: Backend) -> None:
    def refuse(session_id: str) -> SessionState:
        raise HandoffsError(f"There is no session {session_id!r}.", code="unknown_session")

    async def change(held: Held) -> None:
        raise AssertionError("not called")

    with pytest.raises(HandoffsError) as err:
        await session_turn(backend.open(), "nobody", change, refuse)
    assert err.value.code == "unknown_session"


async def test_a_change_that_raises_stores_nothing(backend: Backend) -> None:
    store = backend.open()
    assert await create_session(store, SessionState("s1", active_agent="triage"))

    async def half(held: Held) -> None:
        held.state.messages.append(Note("never stored", "triage"))
        held.state.shared["half"] = True
        raise HandoffsError("refused", code="invalid_argument")

    with pytest.raises(HandoffsError):
        await session_turn(store, "s1", half)
    again = await backend.open().load("s1")
    assert again is not None and again.messages == [] and again.shared == {}


async def test_a_second_caller_waits_and_loads_what_the_first_committed(
    backend: Backend,
) -> None:
    store = backend.open()
    assert await create_session(store, SessionState("s1", active_agent="triage"))

    async def count(held: Held) -> int:
        seen = int(held.state.shared.get("n", 0))
        await asyncio.sleep(0.05)  # the other caller is waiting for the lock meanwhile
        held.state.shared["n"] = seen + 1
        await held.commit()
        return seen

    firsts = await asyncio.gather(session_turn(store, "s1", count),
                                  session_turn(store, "s1", count))
    assert sorted(firsts) == [0, 1]
    again = await backend.open().load("s1")
    assert again is not None and again.shared["n"] == 2


async def test_a_commit_goes_on_from_the_last_one(backend: Backend) -> None:
    store = backend.open()

    async def twice(held: Held) -> None:
        held.state.messages.append(Note("one", "triage"))
        await held.commit()
        held.state.messages.append(Note("two", "triage"))
        await held.commit()

    await session_turn(store, "s1", twice, lambda sid: SessionState(sid))
    again = await backend.open().load("s1")
    assert again is not None and [m.text for m in again.messages] == ["one", "two"]


async def test_create_session_refuses_an_id_taken_and_writes_nothing(
    backend: Backend,
) -> None:
    store = backend.open()
    assert await create_session(store, _made("s1"))
    other = SessionState("s1", active_agent="billing", shared={"mine": True})
    assert not await create_session(store, other)
    stored = await backend.open().load("s1")
    assert stored is not None and stored.active_agent == "triage" and stored.shared == {}


async def test_two_creators_of_one_id_one_wins(backend: Backend) -> None:
    store = backend.open()
    won = await asyncio.gather(
        create_session(store, SessionState("s1", active_agent="triage")),
        create_session(store, SessionState("s1", active_agent="billing")))
    assert sorted(won) == [False, True]
    stored = await backend.open().load("s1")
    assert stored is not None
    assert stored.active_agent == ("triage" if won[0] else "billing")


async def test_edit_session_commits_only_a_change_it_reports(backend: Backend) -> None:
    store = backend.open()
    assert await create_session(store, SessionState("s1"))
    before = await backend.open().load("s1")
    assert before is not None
    version = before.version  # (the memory store hands back the object it keeps)

    def look(state: SessionState) -> bool:
        return False

    def mark(state: SessionState) -> bool:
        state.metadata["marked"] = True
        return True

    assert await edit_session(store, "s1", look) is not None
    unchanged = await backend.open().load("s1")
    assert unchanged is not None and unchanged.version == version
    assert await edit_session(store, "s1", mark) is not None
    marked = await backend.open().load("s1")
    assert marked is not None and marked.metadata["marked"] is True
    assert marked.version == version + 1
    assert await edit_session(store, "nobody", mark) is None


async def test_delete_session_waits_for_the_holder_then_deletes(backend: Backend) -> None:
    store = backend.open()
    assert await create_session(store, SessionState("s1"))
    order: list[str] = []

    async def slow(held: Held) -> None:
        await asyncio.sleep(0.05)
        held.state.shared["late"] = True
        await held.commit()
        order.append("committed")

    async def delete() -> bool:
        await asyncio.sleep(0.01)  # after the change holds the lock
        gone = await delete_session(store, "s1")
        order.append("deleted")
        return gone

    _, gone = await asyncio.gather(session_turn(store, "s1", slow), delete())
    assert gone and order == ["committed", "deleted"]
    assert await backend.open().load("s1") is None
    assert not await delete_session(store, "s1")
