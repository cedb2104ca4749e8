"""A tool's progress and custom events over AG-UI, read with the protocol's own types
(ag_ui.core) from a real server on a real port: the progress is an `ACTIVITY_SNAPSHOT`
that comes while the tool still runs (it waits for the test to see it), the custom event
a `CUSTOM` with the tool's name and data."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from handoffs import Agent, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply
from service.conftest import serving

pytest.importorskip("ag_ui", reason="ag-ui-protocol is not installed (the `agui` extra)")

from ag_ui.core import (
    ActivitySnapshotEvent,
    CustomEvent,
    Event,
    RunAgentInput,
    ToolCallResultEvent,
    UserMessage,
)
from pydantic import TypeAdapter

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)
SEEN = threading.Event()
SEATS = {"flight": "PA441", "rows": [["1A", "1B"], ["2A", "2B"]]}


def _runner() -> Runner:
    @tool
    async def seat_map(ctx: RunContext, flight: str) -> str:
        """Show the seat map of a flight.

        Args:
            flight: The flight number.
        """
        await ctx.progress(f"Looking up flight {flight}…")
        if not await asyncio.to_thread(SEEN.wait, 20):  # a late progress: the tool fails
            raise TimeoutError("the progress did not reach the client")
        await ctx.custom_event("seat_map", SEATS)
        return "The seat map is on your screen."

    return Runner(Team([Agent("seats", tools=[seat_map])]),
                  model=ScriptedModel([call("seat_map", "c1", flight="PA441"),
                                       reply("Pick a seat.")]))


def test_progress_is_an_activity_snapshot_while_the_tool_runs_and_custom_is_custom() -> None:
    SEEN.clear()
    body = RunAgentInput(thread_id="t-seats", run_id="r-1", state={}, tools=[], context=[],
                         forwarded_props={},
                         messages=[UserMessage(id="u1", content="show me the seats")])
    events: list[Any] = []
    with serving(_runner, agui=True) as served, served.client.stream(
            "POST", "/v1/agui", json=body.model_dump(by_alias=True, exclude_none=True)) as r:
        assert r.status_code == 200
        for line in r.iter_lines():
            if not line.startswith("data: "):
                continue
            e = EVENTS.validate_json(line.removeprefix("data: "))
            events.append(e)
            if isinstance(e, ActivitySnapshotEvent):
                assert not SEEN.is_set()
                SEEN.set()
    progress = [e for e in events if isinstance(e, ActivitySnapshotEvent)]
    assert [(p.activity_type, p.message_id, p.content) for p in progress] == [
        ("tool_progress", "progress-c1", {"agent": "seats", "tool": "seat_map",
                                          "call_id": "c1",
                                          "message": "Looking up flight PA441…"})]
    custom = [e for e in events if isinstance(e, CustomEvent) and e.name == "seat_map"]
    assert [c.value for c in custom] == [SEATS]
    result = next(i for i, e in enumerate(events) if isinstance(e, ToolCallResultEvent))
    assert events.index(progress[0]) < events.index(custom[0]) < result
