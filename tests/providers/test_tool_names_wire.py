"""Agents with non-ASCII and long names run on both providers' wire formats: every tool
name and every replayed call name passes the servers' `^[a-zA-Z0-9_-]{1,64}$` check."""

from __future__ import annotations

import re

from handoffs import Agent, Handoff, Runner, RunStatus, Team, tool
from wire.anthropic_api import message, tool_use
from wire.clients import anthropic_model, openai_model
from wire.openai_api import completion, tool_call
from wire.server import FakeServer

VALID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
LONG = "customer-satisfaction-and-retention-specialist-for-enterprise-accounts-emea"


@tool
def réserver(table: int) -> str:
    """Book a table.

    Args:
        table: The table number.
    """
    return f"table {table} booked"


def team(model: object) -> Team:
    hub = Agent("hub", tools=[réserver], handoffs=["Café", "客服", LONG], model=model)
    return Team([hub, Agent("Café", model=model), Agent("客服", model=model),
                 Agent(LONG, model=model)])


async def test_openai_accepts_every_tool_and_replayed_call_name(
        openai_server: FakeServer) -> None:
    to_kefu = Handoff.default_tool_name("客服")
    openai_server.add(
        completion(calls=[tool_call("c1", "reserver", {"table": 4})]),
        # a refused call of a made-up name is replayed in the next request
        completion(calls=[tool_call("c2", "transfer_to_café", {"reason": "x"})]),
        completion(calls=[tool_call("c3", to_kefu, {"reason": "chinese support"})]),
        completion("您好"),
    )
    result = await Runner(team(openai_model(openai_server))).run("s", "hello")

    assert openai_server.rejections == []
    assert result.status is RunStatus.COMPLETED and result.agent == "客服"
    names = [t["function"]["name"] for t in openai_server.bodies[0]["tools"]]
    assert names[:3] == ["reserver", "transfer_to_cafe", to_kefu]
    assert all(VALID.fullmatch(n) for n in names) and len(names[3]) == 64
    replayed = [c["function"]["name"] for m in openai_server.bodies[2]["messages"]
                for c in m.get("tool_calls", ())]
    assert replayed == ["reserver", "transfer_to_cafe"]


async def test_anthropic_accepts_every_tool_and_replayed_call_name(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        message(uses=[tool_use("toolu_1", "reserver", {"table": 4})]),
        message(uses=[tool_use("toolu_2", "transfer_to_café", {"reason": "x"})]),
        message(uses=[tool_use("toolu_3", Handoff.default_tool_name(LONG), {"reason": "vip"})]),
        message("Hello from EMEA."),
    )
    result = await Runner(team(anthropic_model(anthropic_server))).run("s", "hello")

    assert anthropic_server.rejections == []
    assert result.status is RunStatus.COMPLETED and result.agent == LONG
    names = [t["name"] for t in anthropic_server.bodies[0]["tools"]]
    assert all(VALID.fullmatch(n) for n in names)
    replayed = [b["name"] for turn in anthropic_server.bodies[2]["messages"]
                for b in turn["content"] if b["type"] == "tool_use"]
    assert replayed == ["reserver", "transfer_to_cafe"]
