"""A tool's `ctx.progress` and `ctx.custom_event`: events that reach a stream's reader
while the tool still runs, attributed to the call, kept in the session's event log; bad
data and use outside a tool call fail with a clear error."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from handoffs import Agent, RunContext, Runner, Team, tool
from handoffs.errors import HandoffsError
from handoffs.testing import ScriptedModel, call, reply

SEATS = {"flight": "PA441", "rows": [["1A", "1B"], ["2A", "2B"]], "taken": ["1A"]}


def seat_team(release: asyncio.Event) -> tuple[Team, ScriptedModel]:
    @tool
    async def seat_map(ctx: RunContext, flight: str) -> str:
        """Show the seat map of a flight.

        Args:
            flight: The flight number.
        """
        await ctx.progress(f"Looking up flight {flight}…")
        # the test lets it finish once it saw the progress (a late one: the tool fails)
        await asyncio.wait_for(release.wait(), 20)
        await ctx.custom_event("seat_map", SEATS)
        return "The seat map is on your screen."

    team = Team([Agent("seats", tools=[seat_map])])
    return team, ScriptedModel([call("seat_map", "c1", flight="PA441"),
                                reply("Pick a seat on the map.")])


async def test_progress_reaches_the_stream_while_the_tool_is_still_running() -> None:
    release = asyncio.Event()
    team, model = seat_team(release)
    runner = Runner(team, model=model)
    kinds = []
    async for e in runner.stream("s1", "show me the seats"):
        kinds.append(e.type)
        if e.type == "tool_progress":
            assert not release.is_set()  # the tool waits for this very event
            assert (e["agent"], e["tool"], e["call_id"], e["message"]) == (
                "seats", "seat_map", "c1", "Looking up flight PA441…")
            release.set()
        if e.type == "custom_event":
            assert (e["name"], e["data"], e["call_id"]) == ("seat_map", SEATS, "c1")
    assert kinds.index("tool_called") < kinds.index("tool_progress") < kinds.index(
        "custom_event") < kinds.index("tool_result") < kinds.index("run_completed")


async def test_progress_and_custom_events_are_kept_in_the_event_log(tmp_path: Path) -> None:
    release = asyncio.Event()
    release.set()
    team, model = seat_team(release)
    runner = Runner(team, model=model, store=f"sqlite:///{tmp_path / 's.db'}")
    res = await runner.run("s1", "show me the seats")
    assert res.output == "Pick a seat on the map."
    stored = await runner.store.events_after("s1", -1, 1000)
    await runner.store.close()
    told = [e for e in stored if e["type"] in ("tool_progress", "custom_event")]
    assert [e["type"] for e in told] == ["tool_progress", "custom_event"]
    assert told[1]["data"] == SEATS and told[1]["tool"] == "seat_map"


async def test_data_that_is_not_json_is_the_tools_error_with_a_clear_message() -> None:
    @tool
    async def bad(ctx: RunContext) -> str:
        """Send something that is not JSON."""
        await ctx.custom_event("widget", {"when": object()})
        return "sent"

    runner = Runner(Team([Agent("a", tools=[bad])]),
                    model=ScriptedModel([call("bad", "c1"), reply("Sorry.")]))
    res = await runner.run("s1", "go")
    result = next(e for e in res.events if e.type == "tool_result")
    assert result["is_error"] and "not JSON" in result["text"]
    assert not [e for e in res.events if e.type == "custom_event"]


async def test_outside_a_tool_call_they_raise_and_a_unit_test_can_give_a_sink() -> None:
    ctx: RunContext = RunContext("s", "a", 1, {})
    with pytest.raises(HandoffsError) as err:
        await ctx.progress("working")
    assert err.value.code == "no_tool_call"
    seen: list[tuple[str, dict[str, object]]] = []
    ctx = RunContext("s", "a", 1, {}, sink=lambda kind, fields: seen.append((kind, fields)))
    await ctx.progress("working")
    await ctx.custom_event("seat_map", [1, 2])
    assert seen == [("tool_progress", {"message": "working"}),
                    ("custom_event", {"name": "seat_map", "data": [1, 2]})]
    with pytest.raises(HandoffsError, match="non-empty"):
        await ctx.custom_event("", {})


async def test_the_terminal_chat_prints_the_progress_and_the_custom_event() -> None:
    import io

    from handoffs.cli.render import EventPrinter, Painter

    release = asyncio.Event()
    release.set()
    team, model = seat_team(release)
    out = io.StringIO()
    printer = EventPrinter(Painter(team, color=False), out)
    async for e in Runner(team, model=model).stream("s1", "show me the seats"):
        printer.show(e)
    lines = out.getvalue().splitlines()
    assert "  ⋯ seat_map: Looking up flight PA441…" in lines
    assert any(line.startswith("  ◆ seat_map sent seat_map: {\"flight\": \"PA441\"")
               for line in lines), lines
