"""Many `handoffs serve` processes on one store: a turn run by one reaches the watchers of
another, in order; a server killed mid-turn loses no user message."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stores.conftest import PG_DSN, drop_schema, require_pg

from .conftest import OPERATOR_KEY, bearer, free_port, sse_events, terminal

SRC = Path(__file__).resolve().parents[2] / "src"
TEAM = Path(__file__).with_name("slow_team.py")


@contextlib.contextmanager
def handoffs_serve(store: str, cwd: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(SRC), "HANDOFFS_OPERATOR_KEY": OPERATOR_KEY}
    env.pop("HANDOFFS_MODEL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "handoffs.cli", "serve", f"{TEAM}:runner", "--store", store,
         "--port", str(port), "--log-level", "warning"],
        cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read().decode() if proc.stdout else ""
                raise RuntimeError(f"handoffs serve did not start:\n{out}")
            time.sleep(0.1)
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if proc.stdout:
            proc.stdout.close()


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
