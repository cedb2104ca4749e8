"""The team the Temporal tests run, in process and on workers (`handoffs worker
tests/temporal/flow_team.py:runner ...`).

Its model decides from the request alone, so any worker process can take any step of a
turn: `triage` hands every message to `billing` (a transfer); `billing` looks the order up
(the tool `lookup`, which waits `slow S` seconds when the message says so), asks `policy`
(a delegation), then answers; a message starting with `approve` makes `billing` call
`refund`, which waits for a person's approval; one starting with `person` goes to the
human `operator`. Every model call is appended to the file
`$FLOW_CALLS` (agent and step), every start and end of `lookup` to `$FLOW_MARKS`.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

from handoffs import Agent, Handoff, HumanAgent, Runner, Team, tool
from handoffs.core.messages import ToolCall, ToolResult, UserMessage
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta, Usage


def _note(env: str, line: str) -> None:
    path = os.environ.get(env)
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


@tool
async def lookup(order: str, seconds: float = 0) -> str:
    """Find an order.

    Args:
        order: The order number.
        seconds: How long the lookup takes.
    """
    _note("FLOW_MARKS", f"start {order} {os.getpid()}")
    if seconds:
        await asyncio.sleep(seconds)
    _note("FLOW_MARKS", f"end {order} {os.getpid()}")
    return f"order {order}: charged twice"


@tool(needs_approval=True)
def refund(order: str) -> str:
    """Refund an order (a person approves it first).

    Args:
        order: The order number.
    """
    _note("FLOW_MARKS", f"refund {order}")
    return f"refunded {order}"


class FlowModel:
    """Answers from the request alone (see the module)."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        messages = list(request.messages)
        last = max((i for i, m in enumerate(messages) if isinstance(m, UserMessage)),
                   default=-1)
        text = messages[last].text if last >= 0 else ""
        done = {m.name for m in messages[last + 1:] if isinstance(m, ToolResult)}
        agent = request.agent
        step = f"{agent} {len(messages)} {sorted(done)}"
        _note("FLOW_CALLS", step)

        def call(name: str, **args: object) -> ModelResponse:
            cid = f"{agent}-{len(messages)}-{name}"
            return ModelResponse("", (ToolCall(cid, name, json.dumps(args)),),
                                 Usage(10, 5, 1), "flow")

        if agent == "triage":
            if text.startswith("person"):
                return call("transfer_to_operator", reason="asks for a person")
            return call("transfer_to_billing", reason="a billing question")
        if agent == "policy":
            return ModelResponse("Refunds within 30 days are allowed.", (), Usage(8, 4, 1),
                                 "flow")
        words = text.split()
        if words and words[0] == "approve":
            if "refund" not in done:
                return call("refund", order="A-1")
            return ModelResponse("Your refund is done.", (), Usage(9, 4, 1), "flow")
        if "lookup" not in done:
            seconds = float(words[1]) if words[:1] == ["slow"] else 0.0
            return call("lookup", order="A-1", seconds=seconds)
        if "ask_policy" not in done:
            return call("ask_policy", reason="may we refund?")
        return ModelResponse("You will get a refund within 30 days.", (), Usage(9, 4, 1),
                             "flow")

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.complete(request)


team = Team([
    Agent("triage", handoffs=[Handoff("billing"), Handoff("operator")]),
    HumanAgent("operator", handoffs=[Handoff("billing")]),
    Agent("billing", tools=[lookup, refund], handoffs=[Handoff("policy", returns=True)]),
    Agent("policy"),
])


def runner() -> Runner:
    """The team on the flow model, with the store `$FLOW_STORE` (default: memory)."""
    return Runner(team, model=FlowModel(), store=os.environ.get("FLOW_STORE"))
