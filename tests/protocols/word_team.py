"""A team whose one agent does what the user's message says, so a test can leave a
conversation in any state: `hold FILE` (the model waits until FILE exists: the turn runs,
the A2A task stays `working`), `person` (a person takes the conversation over:
`input-required`), `refund` (a call waits for a person's approval: `input-required`),
`fail` (the model breaks: `failed`), `ask QUESTION` (a call of the client's own
`confirm` tool, when the client offers one: AG-UI's frontend tools); anything else it
answers `noted: <text>`."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator

from handoffs import Agent, Handoff, HumanAgent, Runner, Team, tool
from handoffs.core.messages import ToolCall, ToolResult, UserMessage
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order.

    Args:
        order_id: The order to refund.
    """
    return f"refunded {order_id}"


class WordModel:
    """Answers by the first word of the user's latest message (see the module's doc)."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        said = [m for m in request.messages if isinstance(m, UserMessage)][-1].text
        word, _, rest = said.partition(" ")
        last = request.messages[-1]
        if isinstance(last, ToolResult) and last.name == "confirm":  # the client's tool
            return ModelResponse(text=f"the user answered: {last.text}")
        if isinstance(last, ToolResult):
            return ModelResponse(text="done")
        if word == "ask" and any(t.name == "confirm" for t in request.tools):
            return ModelResponse(tool_calls=(
                ToolCall("c-ask", "confirm", json.dumps({"question": rest})),))
        if word == "hold":
            while not os.path.exists(rest):
                await asyncio.sleep(0.02)
            return ModelResponse(text="released")
        if word == "fail":
            raise RuntimeError("the model broke, as asked")
        if word == "person":
            return ModelResponse(tool_calls=(ToolCall("c1", "transfer_to_person", "{}"),))
        if word == "refund":
            return ModelResponse(tool_calls=(
                ToolCall("c1", "refund", json.dumps({"order_id": "A-1"})),))
        return ModelResponse(text=f"noted: {said}")

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.complete(request)


def runner() -> Runner:
    desk = Agent("desk", description="Does what it is told.", tools=[refund],
                 handoffs=[Handoff("person")])
    person = HumanAgent("person", description="A person at the desk.")
    return Runner(Team([desk, person]), model=WordModel())


def user_decides() -> Runner:
    """The same team, whose user decides the calls that wait for approval."""
    desk = Agent("desk", description="Does what it is told.", tools=[refund],
                 handoffs=[Handoff("person")])
    person = HumanAgent("person", description="A person at the desk.")
    return Runner(Team([desk, person], approvals_by="user"), model=WordModel())
