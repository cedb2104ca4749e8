"""The stores' event log the server replays from: sequence numbers, `events_after`, the
PostgreSQL wake-up."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import pytest

from handoffs import Runner
from handoffs.server.pubsub import Hub
from handoffs.server.wakeup import Wakeup
from handoffs.stores import MemoryStore
from handoffs.testing import ScriptedModel, reply, transfer
from stores.conftest import PG_DSN, backend_for, support_team


def _model() -> ScriptedModel:
    return ScriptedModel([transfer("billing"), reply("Refunded."), reply("Anything else?")])


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
async def test_events_after_continues_the_sequence_across_turns(kind: str,
                                                                tmp_path: Path) -> None:
    async with backend_for(kind, tmp_path) as b:
        runner = Runner(support_team(), model=_model(), store=b.open())
        store = runner.store
        assert await store.event_count("s1") == 0  # type: ignore[attr-defined]
        first = await runner.run("s1", "charged twice")
        n = len(first.events)
        assert await store.event_count("s1") == n  # type: ignore[attr-defined]
        second = await runner.run("s1", "thanks")
        stored = await store.events_after("s1")  # type: ignore[attr-defined]
        assert [e["seq"] for e in stored] == list(range(n + len(second.events)))
        assert [e["type"] for e in stored] == [e.type for e in first.events + second.events]
        later = await store.events_after("s1", n - 1, 3)  # type: ignore[attr-defined]
        assert [e["seq"] for e in later] == [n, n + 1, n + 2]
        assert later[0]["type"] == "run_started" and later[0]["turn"] == 2
        assert await store.events_after("nobody") == []  # type: ignore[attr-defined]


async def test_memory_store_forgets_old_events_but_keeps_their_numbers() -> None:
    store = MemoryStore(event_log=10)
    runner = Runner(support_team(), model=ScriptedModel([reply("a")] * 10), store=store)
    for i in range(5):
        await runner.run("s", f"message {i}")
    count = await store.event_count("s")
    kept = await store.events_after("s")
    assert kept[-1]["seq"] == count - 1
    assert len(kept) < count and len(kept) >= 10 - 4
    assert [e["seq"] for e in kept] == list(range(kept[0]["seq"], count))


async def _heard_about(heard: asyncio.Queue[dict[str, Any]], session_id: str, schema: str,
                       timeout: float = 5) -> dict[str, Any]:
    """The first notification about this session of this schema: the database is shared
    with other programs, whose notifications on the channel are passed over."""
    async def wait() -> dict[str, Any]:
        while True:
            payload = await heard.get()
            if payload.get("session_id") == session_id and payload.get("schema") == schema:
                return payload

    return await asyncio.wait_for(wait(), timeout)


def _listen(heard: asyncio.Queue[dict[str, Any]]) -> Any:
    def on(_conn: Any, _pid: int, _channel: str, payload: str) -> None:
        with contextlib.suppress(ValueError):  # another program's notification
            heard.put_nowait(json.loads(payload))
    return on


async def test_postgres_commit_with_events_notifies_listeners(tmp_path: Path) -> None:
    async with backend_for("postgres", tmp_path) as b:
        import asyncpg

        heard: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        conn = await asyncpg.connect(PG_DSN)
        try:
            await conn.add_listener("handoffs_events", _listen(heard))
            store = b.open()
            runner = Runner(support_team(), model=_model(), store=store)
            result = await runner.run("s 1", "charged twice")
            payload = await _heard_about(heard, "s 1", store.schema)  # type: ignore[attr-defined]
            assert payload["events"] == len(result.events)
            # The first commit (the user's message) stored no events and notified nothing.
            await asyncio.sleep(0.2)
            assert all(p.get("session_id") != "s 1" for p in _drain(heard))
        finally:
            await conn.close()


def _drain(queue: asyncio.Queue[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    while not queue.empty():
        out.append(queue.get_nowait())
    return out


class _Hub(Hub):
    """A real hub that also notes each session it was woken for."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        self.woken: list[str] = []

    def wake(self, session_id: str, count: int | None = None) -> None:
        self.woken.append(session_id)
        super().wake(session_id, count)


async def test_apps_sharing_a_database_under_two_schemas_never_wake_each_other(
        tmp_path: Path) -> None:
    async with backend_for("postgres", tmp_path) as mine, \
            backend_for("postgres", tmp_path) as theirs:
        hub = _Hub(mine.open())
        wakeup = Wakeup(hub)
        await wakeup.start()
        try:
            await asyncio.wait_for(wakeup.listening.wait(), 10)
            sub = await hub.subscribe("s1", -1)
            other = Runner(support_team(), model=_model(), store=theirs.open())
            await other.run("s1", "charged twice")  # the same session id, another app
            await asyncio.sleep(0.5)  # its notification has arrived by now
            assert hub.woken == []
            ours = Runner(support_team(), model=_model(), store=hub.store)
            result = await ours.run("s1", "charged twice")
            got = [await asyncio.wait_for(sub.queue.get(), 5) for _ in result.events]
            assert [e["seq"] for e in got if e] == list(range(len(result.events)))
            assert hub.woken == ["s1"]  # by our own commit's notification
        finally:
            await wakeup.stop()
            await hub.close()
