"""The request prefix stays byte-stable across handoffs, so a provider's prompt cache
(OpenAI's automatic prefix cache, Anthropic's cache breakpoints) keeps hitting: an
agent's system text and tools never change from call to call, and each of its requests
extends the one before (the handoff's note is a message at the handoff, not system text).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from pydantic import BaseModel

from handoffs import Agent, Handoff, Runner, Team, tool
from handoffs.models import ModelRequest
from handoffs.models.openai import OpenAIModel
from handoffs.testing import ScriptedModel, call, reply, transfer


class Case(BaseModel):
    order_id: str


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: shipped"


def team() -> Team:
    return Team([
        Agent("triage", instructions="Route the customer.", tools=[lookup],
              handoffs=[Handoff("billing", payload=Case)]),
        Agent("billing", instructions="Answer billing questions.", tools=[lookup],
              handoffs=["triage"]),
    ])


def wire(request: ModelRequest) -> dict[str, Any]:
    """The Chat Completions body the request goes out as (what a prefix cache sees)."""
    return OpenAIModel("gpt-test", api_key="unused").body(request)


async def test_an_agents_prefix_is_byte_stable_across_handoffs_and_turns() -> None:
    model = ScriptedModel({
        "triage": [reply("Hello, how can I help?"),
                   transfer("billing", reason="a double charge", order_id="A-1"),
                   reply("Anything else?"), reply("Bye.")],
        "billing": [reply("Let me check A-1."), call("lookup", order_id="A-1"),
                    reply("Refunded."), transfer("triage", reason="done")],
    })
    runner = Runner(team(), model=model)
    for text in ("hi", "I was charged twice", "please refund", "thanks, that's all",
                 "bye"):
        await runner.run("s", text)

    by_agent: dict[str, list[dict[str, Any]]] = {}
    for request in model.requests:
        by_agent.setdefault(request.agent, []).append(wire(request))
    assert {a: len(b) for a, b in by_agent.items()} == {"triage": 4, "billing": 4}
    for agent, bodies in by_agent.items():
        first = bodies[0]
        for later in bodies[1:]:
            # The system text and the tools: byte-identical in every call of the agent.
            assert json.dumps(later["messages"][0]) == json.dumps(first["messages"][0])
            assert json.dumps(later["tools"]) == json.dumps(first["tools"])
        for earlier, later in itertools.pairwise(bodies):
            # Each request extends the one before: its messages are a prefix of the next.
            sent = earlier["messages"]
            assert json.dumps(later["messages"][:len(sent)]) == json.dumps(sent), agent
    # What the model needs to know is still there: who handed it over, why, and what.
    billing_first = by_agent["billing"][0]["messages"]
    note = billing_first[-1]["content"]
    assert "triage handed the conversation to you: a double charge" in note
    assert '"order_id": "A-1"' in note or '"order_id":"A-1"' in note
    assert "handed" not in billing_first[0]["content"]
