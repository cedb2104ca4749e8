"""A team's typed session context (issue 41, section 2): created for a new session,
changed by tools, stored with the session on memory, SQLite and PostgreSQL, kept across
a runner restart, untouched by a failed turn, and kept at its turn by fork and rewind."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from handoffs import Agent, HandoffsError, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer

from .conftest import Backend


class Booking(BaseModel):
    passenger_name: str | None = None
    seat_number: str | None = None
    flight_number: str | None = None
    itinerary: list[str] = []


@tool
def change_seat(ctx: RunContext[Booking], seat: str) -> str:
    """Move the passenger to another seat."""
    ctx.context.seat_number = seat
    return f"Seat {seat} is yours."


@tool
def add_leg(ctx: RunContext[Booking], flight: str) -> str:
    """Add a flight to the itinerary."""
    ctx.context.flight_number = flight
    ctx.context.itinerary.append(flight)
    return "added"


@tool(on_error="raise")
def broken(ctx: RunContext[Booking]) -> str:
    """Change the seat, then fail (and fail the turn)."""
    ctx.context.seat_number = "99Z"
    raise RuntimeError("the seat map is down")


def _team() -> Team:
    return Team([Agent("triage", handoffs=["seats"], tools=[add_leg]),
                 Agent("seats", tools=[change_seat], handoffs=["triage"])],
                context_type=Booking, context_public=("flight_number", "seat_number"))


async def _context(backend: Backend, sid: str) -> dict[str, Any] | None:
    state = await backend.open().load(sid)
    assert state is not None
    return state.context


async def test_a_new_session_starts_from_the_callers_context_and_tools_change_it(
        backend: Backend) -> None:
    model = ScriptedModel([call("add_leg", flight="FLT-123"), transfer("seats"),
                           call("change_seat", seat="12A"), reply("Done.")])
    runner = Runner(_team(), model=model, store=backend.open())
    res = await runner.run("s1", "book me", context=Booking(passenger_name="Ada"))
    assert res.output == "Done."
    assert await _context(backend, "s1") == {
        "passenger_name": "Ada", "seat_number": "12A", "flight_number": "FLT-123",
        "itinerary": ["FLT-123"]}
    changed = [(e.data["agent"], e.data["changed"]) for e in res.events
               if e.type == "context_changed"]
    assert changed == [("triage", {"flight_number": "FLT-123", "itinerary": ["FLT-123"]}),
                       ("seats", {"seat_number": "12A"})]


async def test_the_context_is_kept_across_turns_and_a_runner_restart(backend: Backend) -> None:
    seen: list[Any] = []

    @tool
    def look(ctx: RunContext[Booking]) -> str:
        """Look at the booking."""
        seen.append(ctx.context)
        return ctx.context.seat_number or "none"

    team = Team([Agent("seats", tools=[change_seat, look])], context_type=Booking)
    first = Runner(team, model=ScriptedModel([call("change_seat", seat="3C"), reply("ok")]),
                   store=backend.open())
    await first.run("s1", "seat 3C", context={"passenger_name": "Ada"})
    again = Runner(team, model=ScriptedModel([call("look"), reply("ok")]),
                   store=backend.open())
    await again.run("s1", "which seat?", context=Booking(passenger_name="Ignored"))
    assert isinstance(seen[0], Booking)
    assert (seen[0].passenger_name, seen[0].seat_number) == ("Ada", "3C")


async def test_a_failed_turn_commits_none_of_its_context_changes(backend: Backend) -> None:
    team = Team([Agent("seats", tools=[change_seat, broken])], context_type=Booking)
    runner = Runner(team, model=ScriptedModel([
        call("change_seat", seat="1A"), reply("ok"),
        call("change_seat", seat="7F"), call("broken"), reply("never")]),
        store=backend.open())
    await runner.run("s1", "seat 1A")
    res = await runner.run("s1", "seat 7F, then break")
    assert res.error is not None
    assert (await _context(backend, "s1") or {})["seat_number"] == "1A"
    changes = [e.data for e in res.events if e.type == "context_changed"]
    assert changes[0] == {"agent": "seats", "changed": {"seat_number": "7F"}}
    assert changes[-1] == {"agent": "seats", "changed": {"seat_number": "1A"},
                           "reverted": True}


async def test_fork_and_rewind_keep_the_context_of_that_turn(backend: Backend) -> None:
    team = Team([Agent("seats", tools=[change_seat])], context_type=Booking)
    runner = Runner(team, model=ScriptedModel([
        call("change_seat", seat="1A"), reply("ok"), call("change_seat", seat="2B"),
        reply("ok"), call("change_seat", seat="3C"), reply("ok")]), store=backend.open())
    for seat in ("1A", "2B", "3C"):
        await runner.run("s1", f"seat {seat}")
    fork = await runner.fork("s1", turn=3, new_id="s1-f")
    assert (fork.context or {})["seat_number"] == "2B"
    assert (await _context(backend, "s1-f") or {})["seat_number"] == "2B"
    await runner.rewind("s1", turn=2)
    assert (await _context(backend, "s1") or {})["seat_number"] == "1A"


async def test_a_team_without_a_context_type_keeps_the_callers_context_per_call(
        backend: Backend) -> None:
    got: list[Any] = []

    @tool
    def peek(ctx: RunContext[dict[str, str]]) -> str:
        """Peek."""
        got.append(ctx.context)
        return "ok"

    runner = Runner(Team([Agent("a", tools=[peek])]),
                    model=ScriptedModel([call("peek"), reply("1"), call("peek"), reply("2")]),
                    store=backend.open())
    await runner.run("s1", "one", context={"user": "ada"})
    await runner.run("s1", "two")
    assert got == [{"user": "ada"}, None]
    assert await _context(backend, "s1") is None


def test_a_context_type_must_be_a_model_whose_fields_default() -> None:
    class Strict(BaseModel):
        name: str

    with pytest.raises(HandoffsError, match="needs a default"):
        Team([Agent("a")], context_type=Strict)
    with pytest.raises(HandoffsError, match="no field"):
        Team([Agent("a")], context_type=Booking, context_public=("password",))
    with pytest.raises(HandoffsError, match="pydantic model"):
        Team([Agent("a")], context_type=dict)


async def test_a_new_sessions_context_of_the_wrong_kind_is_refused(backend: Backend) -> None:
    runner = Runner(_team(), model=ScriptedModel([reply("hi")]), store=backend.open())
    with pytest.raises(HandoffsError) as err:
        await runner.run("s1", "hi", context={"itinerary": "not a list"})
    assert err.value.code == "invalid_argument"


async def test_a_replay_plays_the_turns_again_from_the_context_of_that_turn(
        backend: Backend) -> None:
    def script() -> ScriptedModel:
        return ScriptedModel([call("change_seat", seat="1A"), reply("ok"),
                              call("change_seat", seat="2B"), reply("ok")])

    team = Team([Agent("seats", tools=[change_seat])], context_type=Booking)
    runner = Runner(team, model=script(), store=backend.open())
    await runner.run("s1", "seat 1A", context={"passenger_name": "Ada"})
    await runner.run("s1", "seat 2B")
    replay = await runner.replay("s1", 2, model=ScriptedModel(
        [call("change_seat", seat="2C"), reply("ok")]))
    assert (await _context(backend, replay.replay_id)) == {
        "passenger_name": "Ada", "seat_number": "2C", "flight_number": None,
        "itinerary": []}
    assert (await _context(backend, "s1") or {})["seat_number"] == "2B"


async def test_a_person_handing_back_reads_the_context_in_a_routes_condition(
        backend: Backend) -> None:
    from handoffs import Handoff, HumanAgent

    seen: list[Any] = []

    def open_to_verified(ctx: RunContext[Booking]) -> bool:
        seen.append(ctx.context.passenger_name)
        return True

    team = Team([Agent("seats", handoffs=["person"]),
                 HumanAgent("person", handoffs=[Handoff("seats",
                                                        enabled=open_to_verified)])],
                context_type=Booking)
    runner = Runner(team, model=ScriptedModel([transfer("person"), reply("back")]),
                    store=backend.open())
    await runner.run("s1", "a person please", context={"passenger_name": "Ada"})
    await runner.reply_as_human("s1", "Handing you back.", handoff_to="seats")
    assert "Ada" in seen


async def test_instructions_read_and_a_handoff_hook_changes_the_context(
        backend: Backend) -> None:
    from handoffs import Handoff

    def instructions(ctx: RunContext[Booking]) -> str:
        return f"Serve {ctx.context.passenger_name}."

    def on_handoff(ctx: RunContext[Booking], payload: object) -> None:
        ctx.context.itinerary = [*ctx.context.itinerary, "handed to seats"]

    team = Team([Agent("triage", instructions=instructions,
                       handoffs=[Handoff("seats", on_handoff=on_handoff)]),
                 Agent("seats")], context_type=Booking)
    model = ScriptedModel([transfer("seats"), reply("Seats here.")])
    runner = Runner(team, model=model, store=backend.open())
    res = await runner.run("s1", "seat please", context={"passenger_name": "Ada"})
    assert model.requests[0].system.startswith("Serve Ada.")
    assert (await _context(backend, "s1") or {})["itinerary"] == ["handed to seats"]
    assert [e.data for e in res.events if e.type == "context_changed"] == [
        {"agent": "seats", "changed": {"itinerary": ["handed to seats"]}}]
