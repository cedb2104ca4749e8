"""Text that is valid JSON but not valid Unicode (a lone UTF-16 surrogate, `"\\ud800"`):
the stores keep it as U+FFFD, and every live copy of an event carries exactly what is
stored, on the turn's SSE response, on /events and on the WebSocket, whose subscribers
go on hearing later turns."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from stores.conftest import PG_DSN, drop_schema, require_pg

from .conftest import OPERATOR_KEY, Served, bearer, serving, sse_events, support_runner, terminal

LONE = b'{"text": "charged twice \\ud800 on my invoice"}'
STORED = "charged twice \ufffd on my invoice"


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "memory":
        yield None
    elif request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'live.db'}"
    else:
        await require_pg()
        schema = f"handoffs_live_{uuid.uuid4().hex[:12]}"
        yield f"{PG_DSN}?schema={schema}"
        await drop_schema(schema)


@pytest.fixture
def served(store: str | None) -> Iterator[Served]:
    with serving(lambda: support_runner(store)) as s:
        yield s


def _stored_events(served: Served, sid: str, turns: int) -> list[dict[str, Any]]:
    """The session's events as the store gives them back: a replay from the first."""
    ended = 0

    def stop(event: dict[str, Any]) -> bool:
        nonlocal ended
        ended += terminal(event)
        return ended == turns

    with served.client.stream("GET", f"/v1/sessions/{sid}/events?after=-1",
                              headers=bearer(OPERATOR_KEY)) as r:
        return [{k: v for k, v in e.items() if k not in ("seq", "_id")}
                for e in sse_events(r, stop)]


def test_the_turns_own_stream_carries_what_is_stored(served: Served) -> None:
    sid, token = served.session()
    with served.client.stream("POST", f"/v1/sessions/{sid}/messages", content=LONE, headers={
            **bearer(token), "content-type": "application/json",
            "accept": "text/event-stream"}) as r:
        events = sse_events(r, terminal)
    assert [e["type"] for e in events][-1] == "run_completed"
    assert events[0]["text"] == STORED
    transcript = served.client.get(f"/v1/sessions/{sid}/transcript", headers=bearer(token))
    assert transcript.json()["messages"][0]["text"] == STORED
    live = [{k: v for k, v in e.items() if k not in ("seq", "_id")} for e in events]
    assert live == _stored_events(served, sid, 1)


def test_sse_and_websocket_followers_get_stored_text_and_hear_later_turns(
        served: Served) -> None:
    from websockets.sync.client import connect

    sid, token = served.session()
    followed: list[dict[str, Any]] = []
    ready = threading.Event()
    ended = 0

    def stop(event: dict[str, Any]) -> bool:
        nonlocal ended
        ended += terminal(event)
        return ended == 2

    def follow() -> None:
        with httpx.stream("GET", f"{served.url}/v1/sessions/{sid}/events",
                          headers=bearer(token), timeout=20) as r:
            ready.set()
            followed.extend(sse_events(r, stop))

    watcher = threading.Thread(target=follow)
    watcher.start()
    assert ready.wait(5)
    url = served.url.replace("http", "ws") + f"/v1/sessions/{sid}/ws?access_token={token}"
    with connect(url) as ws:
        ws.send('{"type": "message", "text": "charged twice \\ud800 on my invoice"}')
        heard = []
        while sum(terminal(e) for e in heard) < 1:
            heard.append(json.loads(ws.recv(10)))
        r = served.say(sid, token, "thanks, and my dock keeps disconnecting")
        assert r.status_code == 200
        while sum(terminal(e) for e in heard) < 2:  # the socket still delivers
            heard.append(json.loads(ws.recv(10)))
    watcher.join(20)
    stored = _stored_events(served, sid, 2)
    assert heard[0]["text"] == STORED
    assert [{k: v for k, v in e.items() if k != "seq"} for e in heard] == stored
    assert [{k: v for k, v in e.items() if k not in ("seq", "_id")} for e in followed] \
        == stored
