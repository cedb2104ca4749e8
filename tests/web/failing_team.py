"""A team whose every failure carries internal text, for tests/web/test_customer_errors.py:
a tool that cannot reach its host, a provider that answers 503, a rejected API key.

`front` (the entry) calls `check_warranty` (it always raises, naming an internal host)
when the message says "warranty", and answers after the failure; a message with
"provider" or "key" makes its model raise the provider's message, and so does that of
`desk`, the team's fallback, so the turn goes to the fallback (whose handoff explains
the failure) and then fails."""

from __future__ import annotations

from collections.abc import AsyncIterator

from handoffs import Agent, Runner, Team, tool
from handoffs.core.messages import ToolCall, ToolResult, UserMessage
from handoffs.errors import ModelError
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta

TOOL_FAILS = "connection refused to warranty.internal:8443"
PROVIDER_FAILS = "The provider answered 503: upstream overloaded at llm-gw.internal"
KEY_REFUSED = "Incorrect API key provided: sk-...abcd."
INTERNAL = (TOOL_FAILS, "warranty.internal", "RuntimeError", PROVIDER_FAILS, "llm-gw.internal",
            "answered 503", KEY_REFUSED, "sk-...abcd", "Incorrect API key")
"""Text no customer may ever receive."""


@tool
def check_warranty(order: str) -> str:
    """Whether an order is under warranty."""
    raise RuntimeError(TOOL_FAILS)


class Failing:
    """Fails as the user's latest message asks (see the module's doc)."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        said = [m for m in request.messages if isinstance(m, UserMessage)][-1].text
        if "provider" in said:
            raise ModelError(PROVIDER_FAILS, "model_error")
        if "key" in said:
            raise ModelError(KEY_REFUSED, "auth_error")
        last = request.messages[-1]
        if request.agent == "front" and "warranty" in said:
            if isinstance(last, ToolResult):
                return ModelResponse("I could not check your warranty just now.")
            return ModelResponse("", (ToolCall("w1", "check_warranty", '{"order": "A-1"}'),))
        return ModelResponse(f"{request.agent} here: how can I help?")

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.complete(request)


def make_runner() -> Runner:
    front = Agent("front", description="Answers first.", tools=[check_warranty])
    desk = Agent("desk", description="Takes over when something fails.")
    return Runner(Team([front, desk], fallback="desk"), model=Failing())
