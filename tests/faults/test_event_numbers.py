"""A number a client saw is never given to another event, and the stream says when a
turn was interrupted.

A client follows a turn live; the server is killed (SIGKILL) mid-turn, so those events
are never stored. Another server answers the next message. A client that reconnects
with `Last-Event-ID` (and one that follows with `?after=` from before the next turn
starts) must get every stored event after the last number it saw: `run_interrupted`
first, then all of the next turn, the user's own message included.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx

from service.conftest import bearer
from stores.conftest import Backend

from .servers import serve, sse


def _follow(url: str, sid: str, token: str, after: int, out: list[dict[str, Any]],
            ready: threading.Event | None = None) -> None:
    with httpx.stream("GET", f"{url}/v1/sessions/{sid}/events", timeout=30,
                      headers={**bearer(token), "Last-Event-ID": str(after)}) as r:
        if ready is not None:
            ready.set()
        for event in sse(r):
            out.append(event)
            if event["type"] in ("run_completed", "run_failed"):
                return


async def test_a_client_that_saw_a_killed_turn_misses_nothing_of_the_next(
        durable_backend: Backend, tmp_path: Path) -> None:
    assert durable_backend.url is not None
    with serve(durable_backend.url, tmp_path) as a:
        sid, token = a.session()
        shown: list[dict[str, Any]] = []
        with httpx.stream("POST", f"{a.url}/v1/sessions/{sid}/messages",
                          json={"text": "stall"}, timeout=30,
                          headers={**bearer(token), "Accept": "text/event-stream"}) as r:
            for event in sse(r):
                shown.append(event)
                if event["type"] == "agent_started":  # the model call hangs now
                    break
            a.kill()
    last = int(shown[-1]["_id"])
    assert [e["type"] for e in shown] == ["run_started", "agent_started"]

    with serve(durable_backend.url, tmp_path) as b:
        live: list[dict[str, Any]] = []
        ready = threading.Event()
        follower = threading.Thread(target=_follow,
                                    args=(b.url, sid, token, last, live, ready))
        follower.start()
        assert ready.wait(10)
        r = b.say(sid, token, "hello again")
        assert r.status_code == 200 and r.json()["status"] == "completed", r.text
        follower.join(30)
        replayed: list[dict[str, Any]] = []
        _follow(b.url, sid, token, last, replayed)

    stored = await durable_backend.open().events_after(sid, last)
    assert stored, "the next turn stored nothing after the number the client saw"
    for got in (live, replayed):
        assert [(e["seq"], e["type"]) for e in got] == [
            (e["seq"], e["type"]) for e in stored]
        assert got[0]["type"] == "run_interrupted"
        assert got[1]["type"] == "run_started" and got[1]["text"].endswith("hello again")
        assert all(int(e["_id"]) == e["seq"] for e in got)
    assert stored[0]["seq"] > last
