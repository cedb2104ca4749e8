"""`replay_traffic`: the user messages of many stored sessions (real SQLite and PostgreSQL
stores) replayed on another model, where the answering agent differs, and a source store
that is only ever read."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from handoffs import Runner
from handoffs.errors import HandoffsError
from handoffs.eval.traffic import TrafficReplay, replay_traffic
from handoffs.eval.traffic_render import traffic_html, traffic_text
from handoffs.stores import MemoryStore, SessionStore, open_store
from stores.conftest import Backend, backend_for

from .teams import DeskModel, build_team

CONVERSATIONS = {
    "s-1": ["What is the price of the dock?", "hello"],
    "s-2": ["price of a cable"],
    "s-3": ["my screen is broken"],
}


@pytest.fixture(params=["sqlite", "postgres"])
async def source(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """A durable store holding the three conversations, played on the desk model."""
    async with backend_for(request.param, tmp_path) as b:
        store = b.open()
        runner = Runner(build_team(), model=DeskModel(), store=store)
        for sid, messages in CONVERSATIONS.items():
            for text in messages:
                await runner.run(sid, text)
        yield b


async def snapshot(store: SessionStore) -> dict[str, Any]:
    """Every session of the store as exported, by id."""
    return {s.id: await store.export_session(s.id) for s in await store.list_sessions(1000)}


async def test_a_model_that_misroutes_docks_differs_on_those_turns_only(source: Backend
                                                                         ) -> None:
    store = source.open()
    before = await snapshot(store)

    found = await replay_traffic(source.url or store, build_team(),
                                 model=DeskModel(misroute_docks=True))

    assert [r.session_id for r in found.replays] == ["s-3", "s-2", "s-1"]  # newest first
    assert len(found.turns) == 4 and found.skipped == []
    assert found.routing() == {"same": 2, "different agent": 2}
    assert found.same_agent() == 2 and found.agreement == 0.5
    differing = [(s, t.turn, t.original.agent, t.new.agent) for s, t in found.differing()]
    assert differing == [("s-1", 1, "sales", "repairs"), ("s-1", 2, "sales", "repairs")]
    assert found.matrix() == {"repairs": {"repairs": 1}, "sales": {"sales": 1, "repairs": 2}}
    assert found.totals().model_calls == 7  # s-3 2, s-2 2, s-1 2 + 1 (repairs: "hello")
    assert found.totals().input_tokens == 70
    # the source holds what it held: no fork, no link, nothing changed
    assert await snapshot(store) == before


async def test_the_same_model_replays_every_turn_the_same(source: Backend) -> None:
    found = await replay_traffic(source.url or source.open(), build_team(), model=DeskModel())

    assert found.routing() == {"same": 4} and found.differing() == []
    assert all(r.same for r in found.replays)


async def test_a_window_and_a_limit_choose_the_most_recent_sessions(source: Backend) -> None:
    store = source.open()
    runner = Runner(build_team(), model=DeskModel(), store=store)
    since = time.time()
    time.sleep(0.01)
    await runner.run("s-new", "price of the dock")

    recent = await replay_traffic(store, build_team(), model=DeskModel(), since=since)
    one = await replay_traffic(store, build_team(), model=DeskModel(), limit=2)
    named = await replay_traffic(store, build_team(), model=DeskModel(), sessions=["s-2"])

    assert [r.session_id for r in recent.replays] == ["s-new"]
    assert [r.session_id for r in one.replays] == ["s-new", "s-3"]
    assert [r.session_id for r in named.replays] == ["s-2"]


async def test_copies_made_by_going_back_are_skipped(source: Backend) -> None:
    store = source.open()
    runner = Runner(build_team(), model=DeskModel(), store=store)
    fork = await runner.fork("s-1", 2)

    found = await replay_traffic(store, build_team(), model=DeskModel())

    assert fork.id not in [r.session_id for r in found.replays]
    (skipped,) = found.skipped
    assert (skipped.session, skipped.code) == (fork.id, "copy")
    assert "forked_from" in skipped.message


async def test_replays_can_be_kept_in_a_scratch_store_but_never_the_source(
        source: Backend, tmp_path: Path) -> None:
    store = source.open()
    kept = open_store(f"sqlite:///{tmp_path / 'kept.db'}")

    found = await replay_traffic(store, build_team(), model=DeskModel(), scratch=kept)

    ids = {s.id for s in await kept.list_sessions(100)}  # the caller's store stays open
    await kept.close()
    assert {r.replay_id for r in found.replays} <= ids
    assert {"s-1", "s-2", "s-3"} <= ids  # the copies replayed from
    with pytest.raises(HandoffsError, match="cannot be played in the store they are read"):
        await replay_traffic(store, build_team(), model=DeskModel(), scratch=store)


async def test_a_read_only_sqlite_url_is_enough(tmp_path: Path) -> None:
    async with backend_for("sqlite", tmp_path) as b:
        runner = Runner(build_team(), model=DeskModel(), store=b.open())
        await runner.run("s-1", "price of the dock")
        await runner.store.close()
        path = tmp_path / "sessions.db"
        read_only = f"sqlite:///file:{path}?mode=ro"

        found = await replay_traffic(read_only, build_team(), model="offline")

        assert len(found.replays) == 1 and found.replays[0].turns[0].new.agent == "sales"


async def test_the_report_reads_as_text_json_and_html(source: Backend) -> None:
    found = await replay_traffic(source.open(), build_team(),
                                 model=DeskModel(misroute_docks=True))
    text = traffic_text(found)
    html = traffic_html(found)
    data = found.to_dict()

    assert text.startswith("handoffs eval --from-store: 3 sessions, 4 turns from ")
    lines = text.splitlines()
    assert any(line.startswith("turns routed: different agent")
               and line.endswith(" 2/4 50.0%") for line in lines)
    row = next(line for line in lines if line.startswith("s-1 ") and "dock" in line)
    assert "front → sales" in row and "front → repairs" in row
    assert row.endswith("different agent")
    assert data["routing"] == {"same": 2, "different agent": 2, "different path": 0}
    assert data["agreement"] == 0.5 and len(data["turns_replayed"]) == 2
    assert data["turns_replayed"][0]["session"] == "s-1"
    assert found.to_dict("all")["turns_replayed"][0]["routing"] == "same"
    assert html.count('<tr data-routing="different agent">') == 2
    assert "<script" not in html and "What is the price of the dock?" in html


async def test_no_model_is_refused_before_anything_is_read(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.delenv("HANDOFFS_MODEL", raising=False)
    with pytest.raises(HandoffsError, match="Agent 'front' has no model") as caught:
        await replay_traffic(MemoryStore(), build_team())
    assert caught.value.code == "no_model"


async def test_an_empty_window_replays_nothing(source: Backend) -> None:
    found = await replay_traffic(source.open(), build_team(), model=DeskModel(),
                                 since=time.time() + 60)

    assert isinstance(found, TrafficReplay) and found.turns == [] and found.agreement == 0.0
    assert "every turn was routed as before" in traffic_text(found)
