"""A team with a typed session context, for tests/web/test_session_context.py.

`desk` changes the booking with its tools when the user's message asks ("seat 14C",
"account ACC-77"), and hands the conversation to `person` (a human) on "a person,
please". The booking's flight and seat are public; the account and the name are the
operator's only."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator

from pydantic import BaseModel

from handoffs import Agent, HumanAgent, RunContext, Runner, Team, tool
from handoffs.core.messages import ToolCall, ToolResult, UserMessage
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta


class Booking(BaseModel):
    passenger_name: str | None = None
    account_number: str | None = None
    flight_number: str | None = "FLT-204"
    seat_number: str | None = None


@tool
def change_seat(ctx: RunContext[Booking], seat: str) -> str:
    """Move the passenger to another seat."""
    ctx.context.seat_number = seat
    return f"Seat {seat} is yours."


@tool
def verify(ctx: RunContext[Booking], account: str) -> str:
    """Verify the customer's account."""
    ctx.context.account_number = account
    return "verified"


class Desk:
    """Answers from the user's latest message (see the module's doc)."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        said = [m for m in request.messages if isinstance(m, UserMessage)][-1].text
        if isinstance(request.messages[-1], ToolResult):
            return ModelResponse("Done.")
        seat = re.search(r"seat (\w+)", said)
        account = re.search(r"account (\S+)", said)
        if seat:
            return ModelResponse("", (ToolCall("c1", "change_seat",
                                               json.dumps({"seat": seat[1]})),))
        if account:
            return ModelResponse("", (ToolCall("c2", "verify",
                                               json.dumps({"account": account[1]})),))
        if "person" in said:
            name = next(t.name for t in request.tools if "person" in t.name)
            return ModelResponse("", (ToolCall("c3", name, '{"reason": "asked"}'),))
        return ModelResponse("How can I help with your booking?")

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.complete(request)


def make_runner() -> Runner:
    desk = Agent("desk", description="Changes bookings.", tools=[change_seat, verify],
                 handoffs=["person"])
    team = Team([desk, HumanAgent("person", description="A person at the desk.")],
                context_type=Booking, context_public=("flight_number", "seat_number"))
    return Runner(team, model=Desk())
