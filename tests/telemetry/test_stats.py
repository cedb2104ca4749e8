"""`store.handoff_stats()`: per route, from what the store holds, the same on every store;
computed in SQL over an index on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from handoffs import Agent, Handoff, HumanAgent, Runner, Team
from handoffs.models import ModelRequest, ModelResponse
from handoffs.stores.stats import HandoffStats, RouteStats, format_stats
from handoffs.testing import ScriptedModel, reply, transfer
from stores.conftest import Backend, backend_for


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as b:
        yield b


class SlowResearch(ScriptedModel):
    """The delegate takes 50 ms, so the route's median time is known from below."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.agent == "research":
            await asyncio.sleep(0.05)
        return await super().complete(request)


def team() -> Team:
    return Team([
        Agent("triage", handoffs=["billing", "operator", Handoff("research", returns=True)]),
        Agent("billing"), Agent("research"), Agent("refunds"),
        HumanAgent("operator", handoffs=["triage"]),
    ])


async def play(store: Any) -> None:
    """Five sessions: a good transfer, refusals, a transfer whose turn failed, an
    escalation to a person, a slow delegation; then a user's pick."""
    model = SlowResearch({
        "triage": [transfer("billing", reason="charge"),
                   transfer("nobody"), transfer("refunds"), transfer("billing"),
                   transfer("billing"),
                   transfer("operator"),
                   transfer("research", reason="facts", task="Find it."), reply("Found.")],
        "billing": [reply("Fixed."), reply("Fixed too."), RuntimeError("billing is down")],
        "research": [reply("It is here.")],
    })
    runner = Runner(team(), model=model, store=store)
    assert (await runner.run("s1", "charged twice")).output == "Fixed."
    assert (await runner.run("s2", "refund")).output == "Fixed too."
    assert (await runner.run("s3", "again")).error is not None
    assert (await runner.run("s4", "a person")).status.value == "waiting_for_human"
    assert (await runner.run("s5", "research")).output == "Found."
    await runner.select_agent("s6", "billing")


def route(stats: HandoffStats, source: str, target: str, kind: str) -> RouteStats:
    return next(r for r in stats.routes
                if (r.source, r.target, r.kind) == (source, target, kind))


async def test_stats_per_route_are_the_same_on_every_store(backend: Backend) -> None:
    store = backend.open()
    await play(store)

    stats = await store.handoff_stats()

    assert [(r.source, r.target, r.kind, r.requests, r.accepted) for r in stats.routes] == [
        ("triage", "billing", "llm", 3, 3),
        ("triage", "billing", "user_request", 1, 1),
        ("triage", "nobody", "llm", 1, 0),
        ("triage", "operator", "escalation", 1, 1),
        ("triage", "refunds", "llm", 1, 0),
        ("triage", "research", "llm", 1, 1),
    ]
    billing = route(stats, "triage", "billing", "llm")
    assert billing.failed == 1 and billing.failed_share == pytest.approx(1 / 3)
    assert billing.escalated == 0 and billing.refused == {}
    assert billing.median_seconds is not None and billing.median_seconds >= 0
    assert route(stats, "triage", "nobody", "llm").refused == {"unknown_target": 1}
    assert route(stats, "triage", "refunds", "llm").refused == {"not_declared": 1}
    escalation = route(stats, "triage", "operator", "escalation")
    assert escalation.escalated == 1 and escalation.escalated_share == 1.0
    assert escalation.median_seconds is None  # the person has not answered yet
    research = route(stats, "triage", "research", "llm")
    assert research.median_seconds is not None and research.median_seconds >= 0.05
    pick = route(stats, "triage", "billing", "user_request")
    assert pick.failed == 0 and pick.median_seconds is None  # no turn, no outcome


async def test_since_and_until_bound_the_window(backend: Backend) -> None:
    store = backend.open()
    before = time.time()
    await play(store)
    after = time.time()

    assert (await store.handoff_stats(since=before, until=after)).requests == 8
    assert (await store.handoff_stats(since=after)).routes == ()
    assert (await store.handoff_stats(until=before)).routes == ()


async def test_an_imported_session_counts_as_it_did(backend: Backend, tmp_path: Path) -> None:
    (tmp_path / "source").mkdir()
    async with backend_for("sqlite", tmp_path / "source") as source_backend:
        source = source_backend.open()
        await play(source)
        exports = [await source.export_session(f"s{i}") for i in range(1, 7)]
        expected = await source.handoff_stats()
    store = backend.open()
    for export in exports:
        assert export is not None
        await store.import_session(export)

    assert await store.handoff_stats() == expected


def test_format_stats_answers_which_routes_fail_and_why() -> None:
    stats = HandoffStats((
        RouteStats("triage", "billing", "llm", 120, 118, {"loop_detected": 2}, 4, 0, 2.1),
        RouteStats("triage", "refunds", "programmatic", 3, 0, {"not_declared": 3}),
    ))
    assert format_stats(stats).splitlines() == [
        "route                          kind           requests accepted  failed  human"
        "   median  refused",
        "triage -> billing              llm                 120      118    3.4%   0.0%"
        "    2.1 s  loop_detected 2",
        "triage -> refunds              programmatic          3        0    0.0%   0.0%"
        "        -  not_declared 3",
    ]
    assert format_stats(HandoffStats(())) == "No handoffs in this window."


async def test_sqlite_reads_only_the_stats_index(tmp_path: Path) -> None:
    from handoffs.stores import SQLiteStore
    from handoffs.stores.stats import SQLITE_MIDDLE, SQLITE_REFUSED, SQLITE_ROUTES

    store = SQLiteStore(tmp_path / "s.db")
    await play(store)
    await store.close()
    conn = sqlite3.connect(tmp_path / "s.db")
    for query, args in ((SQLITE_ROUTES, (0.0, 1e12)), (SQLITE_REFUSED, (0.0, 1e12)),
                        (SQLITE_MIDDLE, ("a", "b", "llm", 0.0, 1e12, 1, 0))):
        plan = " ".join(str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + query, args))
        assert "COVERING INDEX records_routes" in plan, plan
        assert "FOR ORDER BY" not in plan  # the index's order, no sort
    conn.close()


async def test_records_stored_before_schema_3_are_counted(tmp_path: Path) -> None:
    """The migration fills the columns from the JSON bodies of records already stored;
    how their turns ended was not kept, so they have no outcome or time."""
    from handoffs.stores import SQLiteStore
    from handoffs.stores.sqlite_ops import migrate

    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=2)
    body = ('{"id":"r1","source":"triage","target":"billing","reason":"llm",'
            '"accepted":false,"rejection":"loop_detected","at":1000.0,"turn":3}')
    conn.execute("INSERT INTO records (session_id, seq, body) VALUES ('old', 0, ?)", (body,))
    conn.close()

    store = SQLiteStore(path)
    stats = await store.handoff_stats()
    await store.close()

    assert stats.routes == (RouteStats("triage", "billing", "llm", 1, 0,
                                       {"loop_detected": 1}),)
