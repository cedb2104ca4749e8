"""Live events across processes (PostgreSQL): a subscriber on server B of a session whose
turn runs on server A gets each event as A emits it, long before A stores the turn, and
sees every event once and in order when the stored copies arrive too; events too large
for one NOTIFY arrive whole and in order. Real `handoffs serve` processes on real ports,
a real PostgreSQL; the turn is held open mid-way by a tool that waits for a file."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stores.conftest import PG_DSN, drop_schema, require_pg

from .conftest import OPERATOR_KEY, ServeProcess, bearer, sse_events, terminal
from .conftest import handoffs_serve as serve
from .live_team import report_text

TEAM = Path(__file__).with_name("live_team.py")


@pytest.fixture
async def pg_url() -> Any:
    await require_pg()
    schema = f"handoffs_live_{uuid.uuid4().hex[:12]}"
    yield f"{PG_DSN}?schema={schema}"
    await drop_schema(schema)


@pytest.fixture
def two(pg_url: str, tmp_path: Path) -> Iterator[tuple[ServeProcess, ServeProcess]]:
    args = [f"{TEAM}:runner", "--store", pg_url, "--log-level", "warning"]
    with serve(args, tmp_path) as a, serve(args, tmp_path) as b:
        yield a, b


class Watcher:
    """Follows a session on a server in a thread (SSE or WebSocket) until a terminal
    event, keeping what arrived."""

    def __init__(self, base: str, sid: str, token: str, ws: bool = False) -> None:
        self.events: list[dict[str, Any]] = []
        self.ready = threading.Event()
        self.error: BaseException | None = None
        target = self._ws if ws else self._sse
        self.thread = threading.Thread(target=self._run, args=(target, base, sid, token),
                                       daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    def _run(self, target: Callable[..., None], *args: Any) -> None:
        try:
            target(*args)
        except BaseException as exc:  # reported by wait_for
            self.error = exc
            self.ready.set()

    def _sse(self, base: str, sid: str, token: str) -> None:
        with httpx.stream("GET", f"{base}/v1/sessions/{sid}/events", headers=bearer(token),
                          timeout=60) as r:
            self.ready.set()
            sse_events(r, self._keep)

    def _ws(self, base: str, sid: str, token: str) -> None:
        from websockets.sync.client import connect

        url = base.replace("http", "ws") + f"/v1/sessions/{sid}/ws?access_token={token}"
        with connect(url, max_size=None) as ws:
            self.ready.set()
            while True:
                event = json.loads(ws.recv(60))
                if event["type"] == "ping":
                    continue
                if self._keep(event):
                    return

    def _keep(self, event: dict[str, Any]) -> bool:
        self.events.append(event)
        return terminal(event)

    def wait_for(self, what: Callable[[list[dict[str, Any]]], bool], timeout: float = 15
                 ) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while not what(list(self.events)):
            assert self.error is None, self.error
            assert time.monotonic() < deadline, [e["type"] for e in self.events]
            time.sleep(0.005)
        return list(self.events)

    def types(self) -> list[str]:
        return [e["type"] for e in self.events]

    def finish(self) -> list[dict[str, Any]]:
        self.thread.join(30)
        assert not self.thread.is_alive()
        assert self.error is None, self.error
        return self.events


def has(kind: str) -> Callable[[list[dict[str, Any]]], bool]:
    return lambda events: any(e["type"] == kind for e in events)


def stored(server: ServeProcess, sid: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{server.url}/v1/sessions/{sid}/export", headers=bearer(OPERATOR_KEY))
    assert r.status_code == 200, r.text
    events: list[dict[str, Any]] = r.json()["events"]
    return events


def start_turn(server: ServeProcess, sid: str, token: str, **spec: Any) -> None:
    r = httpx.post(f"{server.url}/v1/sessions/{sid}/messages",
                   json={"text": json.dumps(spec)},
                   headers={**bearer(token), "Prefer": "respond-async"}, timeout=30)
    assert r.status_code == 202, r.text


def same_as_stored(seen: list[dict[str, Any]], log: list[dict[str, Any]]) -> None:
    """Every stored event once, in order, exactly as stored (a first turn's numbers
    are its places in the log)."""
    assert [e["seq"] for e in seen] == list(range(len(log)))
    for got, want in zip(seen, log, strict=True):
        assert {k: v for k, v in got.items() if k not in ("_id", "seq")} == \
            {k: v for k, v in want.items() if k != "seq"}


@pytest.mark.parametrize("ws", [False, True], ids=["sse", "websocket"])
def test_a_subscriber_on_another_process_sees_the_turn_as_it_runs(
        two: tuple[ServeProcess, ServeProcess], tmp_path: Path, ws: bool) -> None:
    a, b = two
    created = httpx.post(a.url + "/v1/sessions", json={}).json()
    sid, token = created["id"], created["token"]
    gate = tmp_path / "gate"
    watcher = Watcher(b.url, sid, token, ws=ws)
    start_turn(a, sid, token, gate=str(gate), size=100)
    # The tool waits for the gate: nothing of the turn is stored yet, and B shows it.
    early = watcher.wait_for(has("tool_called"))
    assert [e["type"] for e in early] == ["run_started", "agent_started", "tool_called"]
    assert early[0]["text"] == json.dumps({"gate": str(gate), "size": 100})
    assert stored(a, sid) == []
    # A subscriber joining B now, mid-turn, gets the turn so far too.
    late = Watcher(b.url, sid, token)
    assert [e["type"] for e in late.wait_for(has("tool_called"))] == \
        ["run_started", "agent_started", "tool_called"]
    assert stored(a, sid) == []
    gate.touch()
    for w in (watcher, late):
        seen = w.finish()
        assert [e["type"] for e in seen] == [
            "run_started", "agent_started", "tool_called", "tool_result", "text_delta",
            "text_delta", "text_delta", "text_delta", "text_delta", "message",
            "run_completed"]
        same_as_stored(seen, stored(a, sid))


def test_an_event_larger_than_a_notification_arrives_live_whole_and_in_order(
        two: tuple[ServeProcess, ServeProcess], tmp_path: Path) -> None:
    a, b = two
    created = httpx.post(a.url + "/v1/sessions", json={}).json()
    sid, token = created["id"], created["token"]
    gate, gate2 = tmp_path / "gate", tmp_path / "gate2"
    watcher = Watcher(b.url, sid, token)
    size = 60_000  # ~100 KB of UTF-8: about fifteen notifications
    start_turn(a, sid, token, gate=str(gate), size=size, gate2=str(gate2))
    watcher.wait_for(has("tool_called"))
    gate.touch()
    # The model waits for gate2 after the tool's result: the turn is not stored yet.
    early = watcher.wait_for(has("tool_result"))
    assert early[-1]["type"] == "tool_result"
    assert early[-1]["text"] == report_text(size)
    assert len(json.dumps(early[-1], ensure_ascii=False).encode()) > 8000
    assert stored(a, sid) == []
    gate2.touch()
    same_as_stored(watcher.finish(), stored(a, sid))


def test_an_event_too_large_to_send_live_comes_with_the_stored_turn_in_order(
        two: tuple[ServeProcess, ServeProcess], tmp_path: Path) -> None:
    from handoffs.server.relay import LIVE_MAX_BYTES

    a, b = two
    created = httpx.post(a.url + "/v1/sessions", json={}).json()
    sid, token = created["id"], created["token"]
    gate, gate2 = tmp_path / "gate", tmp_path / "gate2"
    watcher = Watcher(b.url, sid, token)
    size = LIVE_MAX_BYTES  # characters: over the limit in UTF-8 bytes
    start_turn(a, sid, token, gate=str(gate), size=size, gate2=str(gate2))
    watcher.wait_for(has("tool_called"))
    gate.touch()
    time.sleep(1.0)  # the tool has answered: its result stays on A until the commit
    assert watcher.types() == ["run_started", "agent_started", "tool_called"]
    gate2.touch()
    seen = watcher.finish()
    assert seen[3]["type"] == "tool_result" and seen[3]["text"] == report_text(size)
    same_as_stored(seen, stored(a, sid))


async def test_live_events_reach_processes_of_the_same_schema_only() -> None:
    # Two apps on one database under different ?schema=, with a session of the same id:
    # a live event of one reaches the other process of its own schema, never the other
    # app's, and a process does not hear its own.
    from handoffs.server.pubsub import Heard, Hub
    from handoffs.server.wakeup import Wakeup
    from handoffs.stores import PostgresStore

    await require_pg()
    s1, s2 = (f"handoffs_live_{uuid.uuid4().hex[:12]}" for _ in range(2))
    stores = [PostgresStore(PG_DSN, schema=s) for s in (s1, s1, s2)]
    hubs = [Hub(s) for s in stores]
    wakeups = [Wakeup(h) for h in hubs]
    try:
        for w in wakeups:
            await w.start()
        subs = [await h.subscribe("same-id", -1) for h in hubs]
        for w in wakeups:
            await asyncio.wait_for(w.listening.wait(), 10)
            assert w.sender is not None
            while w.sender.schema is None or w.sender._conn is None:
                await asyncio.sleep(0.01)
        small = {"type": "text_delta", "session_id": "same-id", "turn": 1, "at": 1.0,
                 "agent": "desk", "text": "hi", "seq": 0}
        large = {**small, "text": "é" * 20_000, "seq": 1}
        hubs[0].publish("same-id", small)
        hubs[0].publish("same-id", large)
        for sent in (small, large):  # heard: the text it came as, decoded on demand
            got = await asyncio.wait_for(subs[1].queue.get(), 5)
            assert isinstance(got, Heard) and got.whole() == sent
        assert await subs[0].queue.get() == small  # published here, not heard back
        assert await subs[0].queue.get() == large
        await asyncio.sleep(0.5)
        assert subs[0].queue.empty() and subs[2].queue.empty()
        assert [n for n, *_ in hubs[1].remote["same-id"]] == [0, 1]
        assert "same-id" not in hubs[2].remote and "same-id" not in hubs[0].remote
        from handoffs.server.relay import live_channel

        assert live_channel(s1) != live_channel(s2)
        assert len(live_channel("x" * 63).encode()) <= 63
    finally:
        for w, h, s in zip(wakeups, hubs, stores, strict=True):
            await w.stop()
            await h.close()
            await s.close()
        await drop_schema(s1)
        await drop_schema(s2)
