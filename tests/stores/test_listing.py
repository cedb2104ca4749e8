"""`list_sessions(status=...)`: an operator finds the sessions waiting for a person, or
the ones whose turn died, on every store."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffsError, HumanAgent, Runner, Team
from handoffs.core.messages import UserMessage
from handoffs.core.session import Checkpoint, SessionState
from handoffs.testing import ScriptedModel, reply, transfer

from .conftest import Backend


def _team() -> Team:
    return Team([Agent("triage", handoffs=["operator"]), HumanAgent("operator")])


async def _sessions(backend: Backend) -> None:
    """a, c, e wait for a person; b, d are idle; f's turn died (interrupted)."""
    store = backend.open()
    model = ScriptedModel([transfer("operator"), reply("fine"), transfer("operator"),
                           reply("fine"), transfer("operator")])
    runner = Runner(_team(), model=model, store=store)
    for sid in "abcde":
        await runner.run(sid, "hello")
    dead = SessionState("f", active_agent="triage", turn=1, status="running")
    dead.messages.append(UserMessage("are you there?", "triage"))
    await store.commit(dead, Checkpoint(0, 0, 0))


async def test_sessions_waiting_for_a_person_are_listed_newest_first(
    backend: Backend,
) -> None:
    await _sessions(backend)
    store = backend.open()

    waiting = await store.list_sessions(status="waiting_for_human")

    assert [(s.id, s.status, s.active_agent) for s in waiting] == [
        ("e", "waiting_for_human", "operator"), ("c", "waiting_for_human", "operator"),
        ("a", "waiting_for_human", "operator")]
    page = await store.list_sessions(limit=1, offset=1, status="waiting_for_human")
    assert [s.id for s in page] == ["c"]
    assert [s.id for s in await store.list_sessions(status="idle")] == ["d", "b"]
    assert len(await store.list_sessions()) == 6


async def test_interrupted_and_running_sessions_are_told_apart(backend: Backend) -> None:
    await _sessions(backend)
    store = backend.open()

    assert [s.id for s in await store.list_sessions(status="interrupted")] == ["f"]
    assert await store.list_sessions(status="running") == []

    async with store.lock("f"):  # a live turn holds it: running, not interrupted
        listed = await backend.open().list_sessions(status="running")
        assert [(s.id, s.status) for s in listed] == [("f", "running")]
        assert await backend.open().list_sessions(status="interrupted") == []
    assert [s.id for s in await store.list_sessions(status="interrupted")] == ["f"]


async def test_an_unknown_status_is_refused(backend: Backend) -> None:
    with pytest.raises(HandoffsError) as err:
        await backend.open().list_sessions(status="sleeping")
    assert err.value.code == "invalid_argument"
    assert "waiting_for_human" in str(err.value)
