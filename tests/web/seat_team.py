"""A team whose tool reports progress, waits for the browser test (the file
`$SEAT_GATE` appears once the test saw the progress line), then sends a seat map as a
custom event: for the page test of tool progress and custom events."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from handoffs import Agent, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply

SEATS = {"flight": "PA441", "rows": [["1A", "1B"], ["2A", "2B"]], "taken": ["1A"]}


@tool
async def seat_map(ctx: RunContext, flight: str) -> str:
    """Show the seat map of a flight.

    Args:
        flight: The flight number.
    """
    await ctx.progress(f"Looking up flight {flight}…")
    gate = Path(os.environ["SEAT_GATE"])
    for _ in range(300):  # the test opens the gate once it saw the progress line
        if gate.exists():
            break
        await asyncio.sleep(0.05)
    else:
        raise TimeoutError("the page did not show the progress while the tool ran")
    await ctx.custom_event("seat_map", SEATS)
    return "The seat map is on your screen."


def make_runner() -> Runner:
    """`handoffs serve tests.web.seat_team:make_runner`."""
    seats = Agent("seats", description="Seats.", display_name="Seats", tools=[seat_map])
    return Runner(Team([seats]), model=ScriptedModel([
        call("seat_map", "c1", flight="PA441"), reply("Pick a seat on the map.")]))
