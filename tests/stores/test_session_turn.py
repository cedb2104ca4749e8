"""`stores.edits`: one change to a stored session under its lock, on every store: the
callable form (a change awaited under the lock) and the context-manager form a user's
turn and a person's decision hold across two commits."""

from __future__ import annotations

import asyncio

import pytest

from handoffs.core.messages import Note
from handoffs.core.session import SessionState, SessionStatus
from handoffs.errors import HandoffsError
from handoffs.stores.base import SessionStore
from handoffs.stores.edits import (
    Held,
    create_session,
    delete_session,
    edit_session,
    session_turn,
)

from .conftest import PG_DSN, Backend


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


# -- the context-manager form: one hold, its commits, its end -----------------------------

async def _read(store: SessionStore, session_id: str) -> SessionState | None:
    """The session as another task reads it (not the holder's live object)."""
    return await asyncio.create_task(store.load(session_id))


async def _held_at_once(store: SessionStore, session_id: str) -> SessionState:
    """Hold the session again, failing if its lock was not let go."""
    async def take() -> SessionState:
        async with session_turn(store, session_id, missing=SessionState) as held:
            return held.state

    return await asyncio.wait_for(take(), 5)


async def test_a_hold_commits_twice_and_a_reader_sees_running_then_the_end(
    backend: Backend,
) -> None:
    store, reader = backend.open(), backend.open()
    async with session_turn(store, "s1", missing=_made) as held:
        assert held.state.messages[0].text == "made on first use"
        held.state.messages.append(Note("started", "triage"))
        held.state.status = SessionStatus.RUNNING
        await held.commit()
        during = await _read(reader, "s1")
        assert during is not None and during.status == "running"
        assert [m.text for m in during.messages] == ["made on first use", "started"]
        held.state.messages.append(Note("ended", "triage"))
        held.state.status = SessionStatus.IDLE
        await held.commit_last()
    after = await _held_at_once(store, "s1")
    assert after.status == "idle"
    assert [m.text for m in after.messages] == ["made on first use", "started", "ended"]
    assert (await _read(reader, "s1")) is not None


async def test_missing_refusing_lets_go_of_the_lock(backend: Backend) -> None:
    store = backend.open()

    def refuse(session_id: str) -> SessionState:
        raise HandoffsError(f"No session {session_id!r}.", code="not_found")

    with pytest.raises(HandoffsError) as err:
        async with session_turn(store, "nobody", missing=refuse):
            raise AssertionError("not entered")
    assert err.value.code == "not_found"
    assert (await _held_at_once(store, "nobody")).messages == []
    assert await store.load("nobody") is None


async def test_a_hold_that_raises_lets_go_and_keeps_only_what_it_committed(
    backend: Backend,
) -> None:
    store = backend.open()
    with pytest.raises(HandoffsError):
        async with session_turn(store, "s1", missing=_made) as held:
            held.state.status = SessionStatus.RUNNING
            await held.commit()
            held.state.messages.append(Note("never stored", "triage"))
            raise HandoffsError("the turn failed", code="internal_error")
    again = await _held_at_once(store, "s1")
    assert [m.text for m in again.messages] == ["made on first use"]
    # It died between its commits: held again, it reads as it was stored (`running`, a
    # turn that died); a reader sees it interrupted, as after a crash.
    assert again.status == "running"
    read = await _read(store, "s1")
    assert read is not None and read.status == "interrupted"


async def test_a_cancelled_hold_lets_go(backend: Backend) -> None:
    store = backend.open()
    holding = asyncio.Event()

    async def hold() -> None:
        async with session_turn(store, "s1", missing=_made) as held:
            held.state.status = SessionStatus.RUNNING
            await held.commit()
            holding.set()
            await asyncio.sleep(30)  # a model call that never ends

    task = asyncio.create_task(hold())
    await asyncio.wait_for(holding.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    again = await _held_at_once(store, "s1")
    assert [m.text for m in again.messages] == ["made on first use"]
    read = await _read(store, "s1")
    assert read is not None and read.status == "interrupted"


async def test_a_hold_whose_lock_is_lost_ends_with_session_lock_lost(
    backend: Backend,
) -> None:
    if backend.kind != "postgres":
        pytest.skip("only PostgreSQL's lock lives on a connection that can be lost")
    import asyncpg

    from handoffs.stores.locks import lock_key

    assert backend.url is not None
    key = lock_key("s1", backend.url.rpartition("schema=")[2]) & 0xFFFFFFFFFFFFFFFF
    store = backend.open()
    with pytest.raises(HandoffsError) as err:
        async with session_turn(store, "s1", missing=_made) as held:
            held.state.status = SessionStatus.RUNNING
            await held.commit()
            admin = await asyncpg.connect(PG_DSN)
            try:  # the lock's connection ends (a failover, an administrator)
                assert await admin.fetchval(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype "
                    "= 'advisory' AND granted AND classid::bigint = $1 AND "
                    "objid::bigint = $2 AND objsubid = 1", key >> 32, key & 0xFFFFFFFF) == 1
            finally:
                await admin.close()
            await asyncio.sleep(10)  # stopped at once, not after this
            held.state.messages.append(Note("never stored", "triage"))
            await held.commit_last()
    assert err.value.code == "session_lock_lost"
    other = backend.open()
    again = await _held_at_once(other, "s1")
    assert [m.text for m in again.messages] == ["made on first use"]
    read = await _read(other, "s1")
    assert read is not None and read.status == "interrupted"
