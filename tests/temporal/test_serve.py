"""`handoffs serve --temporal`: the HTTP API sends turns to the workflows that
`handoffs worker` runs; the turn's events reach the HTTP stream and the session's
subscribers as the workflow makes them (its `live` query), not at the turn's end."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import free_port
from .test_workers import HERE, Workers

httpx = pytest.importorskip("httpx")
pytest.importorskip("temporalio")
pytest.importorskip("fastapi")

KEY = "operator-key-for-tests"


def _sse(response: Any) -> Iterator[dict[str, Any]]:
    for line in response.iter_lines():
        if line.startswith("data:"):
            yield json.loads(line.removeprefix("data:").strip())


@contextlib.contextmanager
def _served(temporal_address: str, queue: str, tmp_path: Path) -> Iterator[str]:
    """`handoffs serve --temporal` on a free port with its workers, ready: its URL."""
    workers = Workers(temporal_address, queue, tmp_path)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "handoffs.cli", "serve", f"{HERE / 'flow_team.py'}:runner",
         "--store", workers.store, "--port", str(port), "--log-level", "warning",
         "--temporal", temporal_address, "--task-queue", queue],
        env={**workers.env, "HANDOFFS_OPERATOR_KEY": KEY}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        workers.start()
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "no server"
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        server.wait(10)
        workers.stop()


def test_the_server_sends_turns_to_the_workers_and_streams_their_events(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    with _served(temporal_address, queue, tmp_path) as url:
        made = httpx.post(url + "/v1/sessions", json={}, timeout=20).json()
        sid, auth = made["id"], {"Authorization": f"Bearer {made['token']}"}
        followed: list[dict[str, Any]] = []
        subscribed = threading.Event()

        def follow() -> None:  # a second client, subscribed to the session's events
            with httpx.stream("GET", f"{url}/v1/sessions/{sid}/events", headers=auth,
                              timeout=60) as r:
                subscribed.set()
                for event in _sse(r):
                    followed.append(event)
                    if event["type"] == "run_completed":
                        return

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        subscribed.wait(10)
        with httpx.stream("POST", f"{url}/v1/sessions/{sid}/messages",
                          json={"text": "refund please"},
                          headers={**auth, "Accept": "text/event-stream"}, timeout=60) as r:
            assert r.status_code == 200
            events = list(_sse(r))
        kinds = [e["type"] for e in events]
        assert kinds[0] == "run_started" and kinds[-1] == "run_completed"
        assert kinds.count("agent_handoff") == 2 and "agent_returned" in kinds
        assert events[-1]["output"] == "You will get a refund within 30 days."
        follower.join(30)
        assert [e["type"] for e in followed] == kinds
        transcript = httpx.get(f"{url}/v1/sessions/{sid}", headers=auth, timeout=20).json()
        assert transcript["active_agent"]["name"] == "billing"


def test_the_servers_streams_show_a_workers_turn_as_it_runs(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    with _served(temporal_address, queue, tmp_path) as url:
        made = httpx.post(url + "/v1/sessions", json={}, timeout=20).json()
        sid, auth = made["id"], {"Authorization": f"Bearer {made['token']}"}
        followed: list[tuple[str, float]] = []
        subscribed = threading.Event()

        def follow() -> None:  # a subscriber of the session's events
            with httpx.stream("GET", f"{url}/v1/sessions/{sid}/events", headers=auth,
                              timeout=60) as r:
                subscribed.set()
                for event in _sse(r):
                    followed.append((event["type"], time.monotonic()))
                    if event["type"] == "run_completed":
                        return

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        subscribed.wait(10)
        sent: list[tuple[str, float]] = []
        with httpx.stream("POST", f"{url}/v1/sessions/{sid}/messages",
                          json={"text": "slow 2 refund please"},  # the lookup takes 2 s
                          headers={**auth, "Accept": "text/event-stream"}, timeout=60) as r:
            assert r.status_code == 200
            sent = [(e["type"], time.monotonic()) for e in _sse(r)]
        follower.join(30)
        for seen in (sent, followed):
            at = dict(seen)  # each kind's last arrival
            first = next(t for kind, t in seen if kind == "agent_handoff")
            assert at["run_completed"] - first > 1.5, f"not live: {seen}"
