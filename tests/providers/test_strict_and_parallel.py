"""Tool schemas sent strict wherever strict mode can say them, and parallel tool calls
left on where one-way routes do not need them off, on the wire with the official openai
client against a server that checks strict schemas as OpenAI does."""

from __future__ import annotations

import json

from pydantic import BaseModel

from handoffs import Agent, Runner, Team, tool
from wire.clients import openai_model
from wire.openai_api import completion, tool_call
from wire.server import FakeServer
from wire.teams import support_team

BOOKED: list[dict[str, object]] = []


class Address(BaseModel):
    city: str
    floor: int = 0


@tool
def book_table(guests: int, day: str = "today", seating: str | None = None,
               deliver_to: Address | None = None) -> str:
    """Book a table.

    Args:
        guests: How many people.
        day: Which day.
        seating: Inside or outside.
        deliver_to: Where to send the confirmation letter.
    """
    BOOKED.append({"guests": guests, "day": day, "seating": seating,
                   "deliver_to": deliver_to})
    return f"booked for {guests} on {day}"


async def test_defaulted_and_nested_parameters_are_strict_and_defaults_still_apply(
        openai_server: FakeServer) -> None:
    BOOKED.clear()
    openai_server.add(
        completion(calls=[tool_call("c1", "book_table", {
            "guests": 2, "day": None, "seating": None,
            "deliver_to": {"city": "Lyon", "floor": None}})]),
        completion("Booked for two, today."),
    )
    team = Team([Agent("host", tools=[book_table])])

    result = await Runner(team, model=openai_model(openai_server)).run("s1", "table for 2")

    assert openai_server.rejections == []  # the server checks strict schemas
    fn = openai_server.bodies[0]["tools"][0]["function"]
    assert fn["strict"] is True
    assert set(fn["parameters"]["required"]) == {"guests", "day", "seating", "deliver_to"}
    assert "Default: \"today\"" in fn["parameters"]["properties"]["day"]["description"]
    # The model's nulls stand for "left alone": the Python defaults apply.
    booked = BOOKED[0]
    assert (booked["guests"], booked["day"], booked["seating"]) == (2, "today", None)
    assert booked["deliver_to"] == Address(city="Lyon", floor=0)
    assert len(BOOKED) == 1
    assert result.output == "Booked for two, today."
    replayed = openai_server.bodies[1]["messages"][-2]["tool_calls"][0]["function"]
    assert json.loads(replayed["arguments"]) == {"guests": 2, "seating": None,
                                                 "deliver_to": {"city": "Lyon"}}


async def test_an_open_dict_parameter_is_sent_without_strict(
        openai_server: FakeServer) -> None:
    @tool
    def tag(labels: dict[str, str]) -> str:
        """Tag the order."""
        return "tagged"

    openai_server.add(completion("ok"))
    await Runner(Team([Agent("a", tools=[tag])]), model=openai_model(openai_server)).run(
        "s1", "tag it")

    assert "strict" not in openai_server.bodies[0]["tools"][0]["function"]
    assert openai_server.rejections == []


async def test_parallel_calls_stay_on_for_an_agent_with_tools_and_a_one_way_route(
        openai_server: FakeServer) -> None:
    openai_server.add(
        completion(calls=[tool_call("h", "transfer_to_billing", {"reason": "charge"})]),
        completion("Billing here."),
    )
    runner = Runner(support_team(), model=openai_model(openai_server))

    await runner.run("s1", "charged twice")

    routes_only, with_tools = openai_server.bodies
    assert routes_only["parallel_tool_calls"] is False  # triage: only transfer tools
    assert "parallel_tool_calls" not in with_tools  # billing: its lookups may go together
