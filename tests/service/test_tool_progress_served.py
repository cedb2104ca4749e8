"""A tool's progress and custom events over HTTP on a real port: the turn's own SSE
response, a subscriber of the session's events and a WebSocket all get the progress
while the tool still runs (it waits until all three saw it), and a replay of the log
holds both events."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from handoffs import Agent, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply

from .conftest import OPERATOR_KEY, Served, bearer, serving, sse_events, terminal

SEEN = {"turn": threading.Event(), "subscriber": threading.Event(),
        "socket": threading.Event()}


def _runner() -> Runner:
    @tool
    async def seat_map(ctx: RunContext, flight: str) -> str:
        """Show the seat map of a flight.

        Args:
            flight: The flight number.
        """
        await ctx.progress(f"Looking up flight {flight}…")
        for seen in SEEN.values():  # both readers saw it, or (late) the tool fails
            if not await asyncio.to_thread(seen.wait, 20):
                raise TimeoutError("the progress did not reach its readers")
        await ctx.custom_event("seat_map", {"flight": flight, "rows": [["1A", "1B"]]})
        return "The seat map is on your screen."

    return Runner(Team([Agent("seats", tools=[seat_map])]),
                  model=ScriptedModel([call("seat_map", "c1", flight="PA441"),
                                       reply("Pick a seat.")]))


def test_progress_reaches_the_turns_stream_and_subscribers_while_the_tool_runs() -> None:
    for seen in SEEN.values():
        seen.clear()
    with serving(_runner) as served:
        sid, token = served.session()
        followed: list[dict[str, Any]] = []
        subscribed = threading.Event()

        def follow() -> None:
            with served.client.stream("GET", f"/v1/sessions/{sid}/events",
                                      headers=bearer(token)) as r:
                subscribed.set()

                def stop(e: dict[str, Any]) -> bool:
                    followed.append(e)
                    if e["type"] == "tool_progress":
                        SEEN["subscriber"].set()
                    return terminal(e)

                sse_events(r, stop)

        socketed: list[dict[str, Any]] = []
        connected = threading.Event()

        def socket() -> None:
            from websockets.sync.client import connect

            url = served.url.replace("http", "ws") + f"/v1/sessions/{sid}/ws?access_token={token}"
            with connect(url) as ws:
                connected.set()
                while not socketed or not terminal(socketed[-1]):
                    frame = json.loads(ws.recv(30))
                    if frame.get("type") == "ping":
                        continue
                    socketed.append(frame)
                    if frame["type"] == "tool_progress":
                        SEEN["socket"].set()

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        assert subscribed.wait(10)
        on_socket = threading.Thread(target=socket, daemon=True)
        on_socket.start()
        assert connected.wait(10)

        def stop(e: dict[str, Any]) -> bool:
            if e["type"] == "tool_progress":
                assert not SEEN["turn"].is_set()
                SEEN["turn"].set()
            return terminal(e)

        with served.client.stream("POST", f"/v1/sessions/{sid}/messages",
                                  json={"text": "show me the seats"},
                                  headers={**bearer(token), "Accept": "text/event-stream"}
                                  ) as r:
            assert r.status_code == 200
            events = sse_events(r, stop)
        follower.join(20)
        on_socket.join(20)
        for got in (events, followed, socketed):
            kinds = [e["type"] for e in got]
            assert kinds.index("tool_progress") < kinds.index("custom_event") < kinds.index(
                "tool_result") < kinds.index("run_completed"), kinds
            progress = next(e for e in got if e["type"] == "tool_progress")
            assert (progress["message"], progress["tool"], progress["call_id"]) == (
                "Looking up flight PA441…", "seat_map", "c1")
            custom = next(e for e in got if e["type"] == "custom_event")
            assert custom["name"] == "seat_map" and custom["data"]["flight"] == "PA441"
        assert events[-1]["output"] == "Pick a seat."
        assert _replayed(served, sid) == [e["type"] for e in events]


def _replayed(served: Served, sid: str) -> list[str]:
    with served.client.stream("GET", f"/v1/sessions/{sid}/events?after=-1",
                              headers=bearer(OPERATOR_KEY)) as r:
        return [e["type"] for e in sse_events(r, terminal)]
