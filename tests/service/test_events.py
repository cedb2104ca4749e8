"""Following a session: stored events replayed after Last-Event-ID, then live ones, over
SSE and WebSocket, each once and in order."""

from __future__ import annotations

import json
import threading
from typing import Any

from .conftest import Served, bearer, sse_events, terminal


def _follow(served: Served, sid: str, token: str, turns: int, out: list[dict[str, Any]],
            ready: threading.Event, last_id: str | None = None) -> None:
    headers = bearer(token)
    if last_id is not None:
        headers["Last-Event-ID"] = last_id
    ended = 0

    def stop(event: dict[str, Any]) -> bool:
        nonlocal ended
        ended += terminal(event)
        return ended == turns

    with served.client.stream("GET", f"/v1/sessions/{sid}/events", headers=headers) as r:
        ready.set()
        out.extend(sse_events(r, stop))


def test_a_watcher_sees_every_event_live_then_a_reconnect_resumes_exactly(
        served: Served) -> None:
    sid, token = served.session()
    seen: list[dict[str, Any]] = []
    ready = threading.Event()
    watcher = threading.Thread(target=_follow, args=(served, sid, token, 2, seen, ready))
    watcher.start()
    assert ready.wait(5)
    served.say(sid, token, "I was charged twice on my invoice")
    served.say(sid, token, "thanks, and my dock is broken")
    watcher.join(20)
    assert [e["seq"] for e in seen] == list(range(len(seen)))
    assert [e["turn"] for e in seen if e["type"] == "run_started"] == [1, 2]
    # Reconnect after the 5th event: exactly the rest, from the record.
    rest: list[dict[str, Any]] = []
    _follow(served, sid, token, 2, rest, threading.Event(), last_id="4")
    assert [e["seq"] for e in rest] == list(range(5, len(seen)))
    assert [e["type"] for e in rest] == [e["type"] for e in seen[5:]]


def test_a_watcher_joining_mid_turn_misses_nothing(served: Served) -> None:
    sid, token = served.session()
    served.say(sid, token, "hello")
    first = served.client.post(f"/v1/sessions/{sid}/messages", json={"text": "more"},
                               headers={**bearer(token), "Prefer": "respond-async"}).json()
    got: list[dict[str, Any]] = []
    _follow(served, sid, token, 2, got, threading.Event(), last_id=None)
    assert [e["seq"] for e in got] == list(range(len(got)))
    assert any(e["seq"] == first["first_seq"] for e in got)


def test_the_websocket_carries_events_messages_and_agent_picks(served: Served) -> None:
    from websockets.sync.client import connect

    def until(ws: Any, done: Any) -> list[dict[str, Any]]:
        frames = [json.loads(ws.recv(10))]
        while not done(frames[-1]):
            frames.append(json.loads(ws.recv(10)))
        return frames

    sid, token = served.session()
    url = served.url.replace("http", "ws") + f"/v1/sessions/{sid}/ws?access_token={token}"
    with connect(url) as ws:
        ws.send(json.dumps({"type": "select_agent", "agent": "billing"}))
        # The pick is answered, and published like any handoff: its events come too.
        frames = until(ws, lambda f: f.get("type") == "agent_changed")
        frames += [] if any(f["type"] == "agent_selected" for f in frames) else \
            until(ws, lambda f: f.get("type") == "agent_selected")
        picked = next(f for f in frames if f["type"] == "agent_selected")
        assert picked["record"]["target"] == "billing"
        moved = next(f for f in frames if f["type"] == "agent_handoff")
        assert (moved["source"], moved["target"], moved["reason"]) == \
            ("triage", "billing", "user_request")
        ws.send(json.dumps({"type": "message", "text": "I was charged twice"}))
        events = until(ws, lambda f: f.get("type") == "run_completed")
        assert events[0]["type"] == "run_started" and events[0]["agent"] == "billing"
        ws.send(json.dumps({"type": "select_agent", "agent": "policy"}))
        frames = until(ws, lambda f: "error" in f)
        assert frames[-1]["error"]["code"] == "not_user_selectable"
        ws.send("{not json")
        frames = until(ws, lambda f: "error" in f)
        assert frames[-1]["error"]["code"] == "invalid_json"


def test_the_websocket_refuses_a_wrong_token(served: Served) -> None:
    from websockets.sync.client import connect

    sid, _ = served.session()
    url = served.url.replace("http", "ws") + f"/v1/sessions/{sid}/ws?access_token=nope"
    with connect(url) as ws:
        assert json.loads(ws.recv(5))["error"]["code"] == "forbidden"
