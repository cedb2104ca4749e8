"""`RuleModel` reads the session: templates fill from the shared memory and the context
(`{shared[key]}`, `{context.field}`), and with no rule it calls only read-only tools on a
guess, naming a tool with effects instead of calling it."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from handoffs import Agent, RunContext, Runner, Team, tool
from handoffs.core.tools import ToolSpec
from handoffs.models.base import ModelRequest
from handoffs.rules import Fields, Rule, fill
from handoffs.testing import RuleModel


class Booking(BaseModel):
    confirmation_number: str | None = None
    seat_number: str | None = None


@tool
def remember(ctx: RunContext, confirmation: str) -> str:
    """Remember a confirmation number."""
    ctx.shared["confirmation"] = confirmation
    return "noted"


SEAT_RULES = [
    Rule(pattern=r"(?P<code>[A-Z0-9]{6})\b", call="remember", args={"confirmation": "{code}"}),
    Rule(pattern=r"(?P<code>[A-Z0-9]{6})\b", answer="Noted {shared[confirmation]}."),
    Rule(keywords="seat", answer="Seat {context.seat_number} on {shared.confirmation}."),
    Rule(keywords="seat", answer="Which booking? (I know none yet.)"),
]


async def test_templates_read_the_shared_memory_and_the_context() -> None:
    team = Team([Agent("desk", tools=[remember])])
    runner = Runner(team, model=RuleModel({"desk": SEAT_RULES}))
    # Nothing in shared memory yet: the rule that needs it is skipped.
    first = await runner.run("s", "my seat?", context=Booking(seat_number="12C"))
    assert first.output == "Which booking? (I know none yet.)"
    noted = await runner.run("s", "It is LL0EZ6", context=Booking(seat_number="12C"))
    assert noted.output == "Noted LL0EZ6."
    # A pydantic context is read by attribute; a dict context reads the same way.
    seat = await runner.run("s", "my seat?", context=Booking(seat_number="12C"))
    assert seat.output == "Seat 12C on LL0EZ6."
    as_dict = await runner.run("s", "my seat?", context={"seat_number": "14A"})
    assert as_dict.output == "Seat 14A on LL0EZ6."
    # A field that is None counts as missing.
    unset = await runner.run("s", "my seat?", context=Booking())
    assert unset.output == "Which booking? (I know none yet.)"


def test_fields_read_by_key_and_attribute_and_miss_on_none() -> None:
    booking = Fields(Booking(confirmation_number="LL0EZ6"))
    assert fill("{c.confirmation_number}/{c[confirmation_number]}", {"c": booking}) == \
        "LL0EZ6/LL0EZ6"
    shared = Fields({"n": 3, "gone": None})
    assert fill("{s[n]}", {"s": shared}) == 3  # one placeholder keeps its type
    assert "n" in shared and "gone" not in shared and "x" not in shared
    for template in ("{s[gone]}", "{s.x}", "{c.seat_number}", "{none.anything}"):
        with pytest.raises((LookupError, AttributeError)):
            fill(template, {"s": shared, "c": booking, "none": Fields(None)})


# -- read-only tools and the generic offline model ------------------------------------


@tool(read_only=True)
def flight_status(flight_number: str) -> str:
    """The status of a flight."""
    return f"{flight_number} is on time."


@tool
def assign_special_service_seat(confirmation_number: str, seat: str) -> str:
    """Assign a front-row seat for medical or special service needs."""
    raise AssertionError("the offline model must not call this on a guess")


def airline() -> Team:
    return Team([Agent("triage", description="Routes travellers.", handoffs=["seats",
                                                                             "flights"]),
                 Agent("seats", description="Seat changes and special service seating.",
                       tools=[assign_special_service_seat], handoffs=["triage"]),
                 Agent("flights", description="Flight status and delays.",
                       tools=[flight_status], handoffs=["triage"])])


def test_read_only_is_declared_on_the_tool_and_shown_on_its_spec() -> None:
    assert flight_status.read_only and flight_status.spec.read_only
    assert not assign_special_service_seat.read_only
    assert assign_special_service_seat.spec == ToolSpec(
        assign_special_service_seat.name, assign_special_service_seat.description,
        assign_special_service_seat.parameters)


async def test_the_offline_model_names_a_tool_with_effects_instead_of_calling_it() -> None:
    team = airline()
    model = RuleModel(team=team)
    runner = Runner(team, model=model)
    result = await runner.run("s", "Can I change my seat?")
    assert result.ok and result.agent == "seats"
    assert result.output == (
        "(Offline placeholder) A real model would call assign_special_service_seat here, "
        "with arguments it works out from the conversation; the offline model does not "
        "call a tool that changes something on a guess.")
    calls = [c.name for r in model.requests for m in r.messages
             for c in getattr(m, "tool_calls", ())]
    assert "assign_special_service_seat" not in calls

    # A read-only tool the message names is called, with arguments from the message.
    status = await runner.run("s", "What is the flight status of FLT-123?")
    assert status.agent == "flights"
    assert status.output == "Here is what I found: flight_status: FLT-123 is on time."


def test_a_request_carries_the_session_for_an_offline_model() -> None:
    request = ModelRequest("desk", "", [], [])
    assert request.shared == {} and request.context is None
    seen: dict[str, Any] = {}

    def capture(v: Any) -> str:
        seen.update(v)
        return "ok"

    model = RuleModel([Rule(answer=capture)])
    model.respond(ModelRequest("desk", "", [], [], shared={"a": 1}, context={"b": 2}))
    assert seen["shared"]["a"] == 1 and seen["context"].b == 2


def test_the_session_and_read_only_cross_temporals_wire() -> None:
    from handoffs.temporal import codec

    request = ModelRequest("desk", "", [], [flight_status.spec, assign_special_service_seat.spec],
                           shared={"confirmation": "LL0EZ6"},
                           context=Booking(seat_number="12C"))
    back = codec.request_from(codec.request_to(request), None)
    assert back.shared == {"confirmation": "LL0EZ6"}
    assert back.context == {"confirmation_number": None, "seat_number": "12C"}
    assert [t.read_only for t in back.tools] == [True, False]
    plain = codec.request_to(ModelRequest("desk", "", [], [assign_special_service_seat.spec]))
    assert "shared" not in plain and "context" not in plain  # nothing sent when empty
    assert "read_only" not in plain["tools"][0]
    model = RuleModel([Rule(answer="{context.seat_number} for {shared[confirmation]}")])
    assert model.respond(back).text == "12C for LL0EZ6"
