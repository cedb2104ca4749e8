"""Many `handoffs serve` processes on one store: a turn run by one reaches the watchers of
another, in order; a server killed mid-turn loses no user message."""

from __future__ import annotations

import contextlib
import signal
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stores.conftest import PG_DSN, drop_schema, require_pg

from .conftest import OPERATOR_KEY, bearer, sse_events, terminal
from .conftest import handoffs_serve as serve

TEAM = Path(__file__).with_name("slow_team.py")


@contextlib.contextmanager
def handoffs_serve(store: str, cwd: Path, *extra: str) -> Iterator[tuple[str, Any]]:
    with serve([f"{TEAM}:runner", "--store", store, "--log-level", "warning", *extra],
               cwd) as s:
        yield s.url, s.proc


@pytest.fixture(params=["sqlite", "postgres"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'shared.db'}"
        return
    await require_pg()
    schema = f"handoffs_srv_{uuid.uuid4().hex[:12]}"
    yield f"{PG_DSN}?schema={schema}"
    await drop_schema(schema)


def test_a_turn_on_one_server_reaches_a_watcher_of_another_in_order(
        store_url: str, tmp_path: Path) -> None:
    with handoffs_serve(store_url, tmp_path) as (a, _), \
            handoffs_serve(store_url, tmp_path) as (b, _):
        created = httpx.post(a + "/v1/sessions", json={}).json()
        sid, token = created["id"], created["token"]
        seen: list[dict[str, Any]] = []
        ready = threading.Event()
        ended = 0

        def stop(event: dict[str, Any]) -> bool:
            nonlocal ended
            ended += terminal(event)
            return ended == 2

        def watch() -> None:
            with httpx.stream("GET", f"{b}/v1/sessions/{sid}/events", headers=bearer(token),
                              timeout=30) as r:
                ready.set()
                seen.extend(sse_events(r, stop))

        watcher = threading.Thread(target=watch)
        watcher.start()
        assert ready.wait(10)
        first = httpx.post(f"{a}/v1/sessions/{sid}/messages", headers=bearer(token),
                           json={"text": "I was charged twice on my invoice"}, timeout=30)
        second = httpx.post(f"{a}/v1/sessions/{sid}/messages", headers=bearer(token),
                            json={"text": "my dock keeps disconnecting"}, timeout=30)
        watcher.join(30)
        assert not watcher.is_alive()
        assert first.status_code == second.status_code == 200
        export = httpx.get(f"{a}/v1/sessions/{sid}/export", headers=bearer(OPERATOR_KEY)).json()
        assert [e["seq"] for e in seen] == list(range(len(export["events"])))
        assert [e["type"] for e in seen] == [e["type"] for e in export["events"]]


def test_a_server_killed_mid_turn_loses_no_message(store_url: str, tmp_path: Path) -> None:
    with handoffs_serve(store_url, tmp_path) as (a, proc_a), \
            handoffs_serve(store_url, tmp_path) as (b, _):
        created = httpx.post(a + "/v1/sessions", json={}).json()
        sid, token = created["id"], created["token"]
        started = httpx.post(f"{a}/v1/sessions/{sid}/messages", headers={
            **bearer(token), "Prefer": "respond-async"},
            json={"text": "please stall on my refund"}, timeout=30)
        assert started.status_code == 202
        proc_a.send_signal(signal.SIGKILL)
        proc_a.wait(10)
        session = httpx.get(f"{b}/v1/sessions/{sid}", headers=bearer(token)).json()
        assert session["status"] == "interrupted"
        r = httpx.post(f"{b}/v1/sessions/{sid}/messages", headers=bearer(token),
                       json={"text": "hello again"}, timeout=30)
        assert r.status_code == 200 and r.json()["status"] == "completed", r.text
        transcript = httpx.get(f"{b}/v1/sessions/{sid}/transcript",
                               headers=bearer(token)).json()
        users = [m["text"] for m in transcript["messages"] if m["kind"] == "user"]
        assert users == ["please stall on my refund", "hello again"]
        assert transcript["messages"][-1]["kind"] == "assistant"


def test_a_follower_on_another_process_sees_both_processes_turns_once_in_order(
        store_url: str, tmp_path: Path) -> None:
    # Turns of one session run on two processes at once (queued by the session's lock):
    # a follower on B gets A's events when A stores them and B's own live, each once,
    # numbered in order, and its stream stays open (numbers are given under the lock,
    # so the two never clash and nothing has to be closed and replayed).
    args = [f"{TEAM}:runner", "--store", store_url, "--log-level", "warning"]
    with serve(args, tmp_path) as a, serve(args, tmp_path) as b:
        created = httpx.post(a.url + "/v1/sessions", json={}).json()
        sid, token = created["id"], created["token"]
        seen: list[dict[str, Any]] = []
        ready = threading.Event()
        ends = {"run_completed", "run_failed"}

        def watch() -> None:
            with httpx.stream("GET", f"{b.url}/v1/sessions/{sid}/events",
                              headers=bearer(token), timeout=30) as r:
                ready.set()
                done: list[str] = []

                def stop(e: dict[str, Any]) -> bool:
                    if e["type"] in ends:
                        done.append(e["type"])
                    return len(done) == 2

                seen.extend(sse_events(r, stop))

        watcher = threading.Thread(target=watch)
        watcher.start()
        assert ready.wait(10)
        slow = httpx.post(f"{a.url}/v1/sessions/{sid}/messages", json={
            "text": "please answer slowly about my invoice"},
            headers={**bearer(token), "Prefer": "respond-async"}, timeout=30)
        assert slow.status_code == 202
        meanwhile = httpx.post(f"{b.url}/v1/sessions/{sid}/messages", headers=bearer(token),
                               json={"text": "hello"}, timeout=30)
        assert meanwhile.status_code == 200
        watcher.join(20)
        assert not watcher.is_alive()
        numbers = [int(e["_id"]) for e in seen]
        assert numbers == sorted(set(numbers))  # never twice, never out of order
        assert [e["text"] for e in seen if e["type"] == "run_started"] == [
            "please answer slowly about my invoice", "hello"]
        assert "closing its live streams" not in b.output()
