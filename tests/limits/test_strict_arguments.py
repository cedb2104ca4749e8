"""Strict schemas: tool arguments and handoff payloads are validated as JSON in
pydantic's strict mode (no "25" -> 25), extra keys are refused with feedback, and the
schemas the model is shown are closed objects."""

from __future__ import annotations

import datetime
import enum
import json

from pydantic import BaseModel, ConfigDict

from handoffs import Agent, Handoff, Runner, RunStatus, Team, tool
from handoffs.testing import ScriptedModel, call, raw_call, reply, transfer

BOOKED: list[tuple[int, datetime.date, str]] = []


class Seat(enum.Enum):
    WINDOW = "window"
    AISLE = "aisle"


@tool
def book(guests: int, day: datetime.date, seat: Seat) -> str:
    """Book a table."""
    BOOKED.append((guests, day, seat.value))
    return f"booked {guests} on {day.isoformat()} ({seat.value})"


class Refund(BaseModel):
    order_id: str
    amount: int


def results(model: ScriptedModel) -> list[tuple[str, bool]]:
    last = model.requests[-1].messages
    return [(m.text, m.is_error) for m in last if type(m).__name__ == "ToolResult"]


async def test_a_number_sent_as_a_string_is_refused_with_feedback() -> None:
    BOOKED.clear()
    model = ScriptedModel([call("book", guests="25", day="2025-06-01", seat="window"),
                           reply("Tell me the number of guests as a number.")])

    result = await Runner(Team([Agent("host", tools=[book])]), model=model).run("s", "25")

    assert result.status is RunStatus.COMPLETED
    (text, is_error), = results(model)
    assert is_error and "guests" in text and "valid integer" in text
    assert BOOKED == []


async def test_dates_and_enums_are_read_from_their_json_strings() -> None:
    BOOKED.clear()
    model = ScriptedModel([call("book", guests=2, day="2025-06-01", seat="aisle"),
                           reply("Booked.")])

    await Runner(Team([Agent("host", tools=[book])]), model=model).run("s", "2 please")

    assert [(2, datetime.date(2025, 6, 1), "aisle")] == BOOKED
    assert results(model) == [("booked 2 on 2025-06-01 (aisle)", False)]


async def test_extra_tool_arguments_are_refused_with_feedback() -> None:
    BOOKED.clear()
    model = ScriptedModel([call("book", guests=2, day="2025-06-01", seat="aisle",
                                vip=True), reply("ok")])

    await Runner(Team([Agent("host", tools=[book])]), model=model).run("s", "book")

    (text, is_error), = results(model)
    assert is_error and "vip" in text and "Extra inputs are not permitted" in text
    assert BOOKED == []


def test_tool_and_handoff_schemas_are_closed_objects() -> None:
    assert book.parameters["additionalProperties"] is False
    team = Team([Agent("billing", handoffs=[Handoff("refunds", payload=Refund)]),
                 Agent("refunds")])
    spec = team.plan("billing").routes_by_target["refunds"].spec
    assert spec.parameters["additionalProperties"] is False
    assert set(spec.parameters["properties"]) == {"reason", "order_id", "amount"}


def refunds_team() -> Team:
    return Team([Agent("billing", handoffs=[Handoff("refunds", payload=Refund)]),
                 Agent("refunds")])


async def test_a_handoff_payload_is_not_coerced() -> None:
    model = ScriptedModel([transfer("refunds", payload={"order_id": "A-1", "amount": "25"}),
                           reply("Send the amount as a number.")])

    result = await Runner(refunds_team(), model=model).run("s", "refund 25")

    assert result.agent == "billing"
    record = result.handoffs[0]
    assert record.rejection == "invalid_payload" and "amount" in record.message


async def test_extra_payload_keys_are_ignored_and_recorded() -> None:
    # An extra key does no harm: the handoff is made, the key is kept on the record.
    model = ScriptedModel([
        transfer("refunds", payload={"order_id": "A-1", "amount": 25, "urgent": True}),
        reply("Refund of 25 on its way."),
    ])

    result = await Runner(refunds_team(), model=model).run("s", "refund 25")

    (accepted,) = result.handoffs
    assert accepted.accepted and accepted.payload == {"order_id": "A-1", "amount": 25}
    assert accepted.extra["ignored_arguments"] == ["urgent"]
    assert result.agent == "refunds"


async def test_unknown_handoff_arguments_are_ignored_and_recorded() -> None:
    model = ScriptedModel([transfer("refunds", reason="r", payload={"order_id": "A",
                                                                    "amount": 1}, x=1),
                           reply("ok")])

    result = await Runner(refunds_team(), model=model).run("s", "refund")

    assert result.handoffs[0].accepted and result.handoffs[0].payload == {
        "order_id": "A", "amount": 1}
    assert result.handoffs[0].extra["ignored_arguments"] == ["x"]


async def test_a_payload_whose_schema_forbids_extras_refuses_them() -> None:
    class Strict(BaseModel):
        model_config = ConfigDict(extra="forbid")
        order_id: str

    team = Team([Agent("billing", handoffs=[Handoff("refunds", payload=Strict)]),
                 Agent("refunds")])
    model = ScriptedModel([transfer("refunds", order_id="A", urgent=True), reply("no")])

    result = await Runner(team, model=model).run("s", "refund")

    assert result.handoffs[0].rejection == "invalid_payload"
    assert 'transfer_to_refunds({"reason": "<reason>", "order_id": "<order_id>"})' in \
        result.handoffs[0].message  # a literal call that works


async def test_a_payload_sent_as_json_text_is_still_validated_strictly() -> None:
    text = json.dumps({"reason": "refund",
                       "payload": json.dumps({"order_id": "A-1", "amount": 25})})
    model = ScriptedModel([raw_call("transfer_to_refunds", text), reply("Refunded.")])

    result = await Runner(refunds_team(), model=model).run("s", "refund")

    assert result.handoffs[0].accepted and result.output == "Refunded."


@tool
def remember(note: str) -> str:
    """Remember a note."""
    return f"kept {note}"


async def test_a_lone_surrogate_in_the_arguments_is_replaced_not_refused() -> None:
    model = ScriptedModel([raw_call("remember", '{"note": "a\\ud800b"}'),
                           raw_call("remember", '{"note": "c\ud800d"}'), reply("ok")])

    await Runner(Team([Agent("keeper", tools=[remember])]), model=model).run("s", "note")

    assert results(model) == [("kept a\ufffdb", False), ("kept c\ufffdd", False)]
