"""A team's typed session context over A2A (issue 41): the A2A context is the session,
so its typed context is created with it, changed by a tool in one message and read by
the next, and shown through the session API as for any other session."""

from __future__ import annotations

import httpx
import pytest
from pydantic import BaseModel

from handoffs import Agent, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply
from service.conftest import OPERATOR_KEY, serving

pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")

from .test_served_a2a import artifacts, exchange


class Seat(BaseModel):
    seat_number: str | None = None
    account_number: str | None = None


@tool
def change_seat(ctx: RunContext[Seat], seat: str) -> str:
    """Move the passenger."""
    ctx.context.seat_number = seat
    ctx.context.account_number = "ACC-5"
    return "moved"


@tool
def which_seat(ctx: RunContext[Seat]) -> str:
    """The passenger's seat."""
    return f"seat {ctx.context.seat_number}"


async def test_the_sessions_context_follows_the_a2a_conversation() -> None:
    team = Team([Agent("seats", tools=[change_seat, which_seat])], context_type=Seat,
                context_public=("seat_number",))
    model = ScriptedModel([call("change_seat", seat="9F"), reply("Moved."),
                           call("which_seat"), lambda r: reply(r.messages[-1].text)])
    with serving(lambda: Runner(team, model=model), a2a=True) as s:
        first = await exchange(s.url, "move me to 9F")
        task = first[0]["task"]
        context, token = task["contextId"], task["metadata"]["handoffs_session_token"]
        second = await exchange(s.url, "which seat?", context, token)
        assert artifacts(second)[-1][1] == "seat 9F"
        mine = httpx.get(f"{s.url}/v1/sessions/{context}",
                         headers={"Authorization": f"Bearer {token}"}).json()
        assert mine["context"] == {"seat_number": "9F"}
        everything = httpx.get(f"{s.url}/v1/sessions/{context}",
                               headers={"Authorization": f"Bearer {OPERATOR_KEY}"}).json()
        assert everything["context"] == {"seat_number": "9F", "account_number": "ACC-5"}
