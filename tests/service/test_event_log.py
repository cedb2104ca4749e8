"""The stores' event log the server replays from: sequence numbers, `events_after`, the
PostgreSQL wake-up."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from handoffs import Runner
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


async def test_postgres_commit_with_events_notifies_listeners(tmp_path: Path) -> None:
    async with backend_for("postgres", tmp_path) as b:
        import asyncpg

        heard: asyncio.Queue[str] = asyncio.Queue()
        conn = await asyncpg.connect(PG_DSN)
        try:
            await conn.add_listener("handoffs_events", lambda *a: heard.put_nowait(a[3]))
            runner = Runner(support_team(), model=_model(), store=b.open())
            result = await runner.run("s 1", "charged twice")
            payload = await asyncio.wait_for(heard.get(), 5)
            assert payload == f"{len(result.events)} s 1"
            assert heard.empty()  # the first commit (the user's message) stores no events
        finally:
            await conn.close()
