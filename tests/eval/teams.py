"""A small team and a deterministic model for the eval tests (also loaded by the CLI:
`handoffs eval tests/eval/teams.py:runner cases.jsonl`).

    front ──> sales
      └────> repairs (tool: refund)

The desk model reads the user's last message: "price" goes to sales, "broken" to repairs,
"refund" makes repairs call `refund` and "price" send it back to front, "ghost" makes
front ask for an agent it has no route to (refused) before answering, "loop" makes front
ask for it forever (max_steps).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from handoffs import Agent, Runner, Team, ToolCall, UserMessage, tool
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta, Usage


@tool
def refund(order: str) -> str:
    """Refund an order.

    Args:
        order: The order number.
    """
    return f"Refunded {order}."


def build_team() -> Team:
    return Team([
        Agent("front", instructions="Route.", description="Routes.",
              handoffs=["sales", "repairs"]),
        Agent("sales", instructions="Sell.", description="Prices and offers."),
        Agent("repairs", instructions="Repair.", description="Broken things.",
              tools=[refund], handoffs=["front"]),
    ], entry="front")


def last_user(request: ModelRequest) -> str:
    for m in reversed(request.messages):
        if isinstance(m, UserMessage):
            return m.text.lower()
    return ""


class DeskModel:
    """Answers by keywords in the last user message; reports token usage like a provider."""

    def __init__(self, misroute_docks: bool = False) -> None:
        self.misroute_docks = misroute_docks
        self.n = 0

    def _call(self, name: str, **args: object) -> ModelResponse:
        self.n += 1
        return ModelResponse(tool_calls=(ToolCall(f"c{self.n}", name, json.dumps(args)),),
                             usage=Usage(10, 2, 1))

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return self._answer(request)

    def _answer(self, request: ModelRequest) -> ModelResponse:
        text = last_user(request)
        tools = {t.name for t in request.tools}
        done = {m.name for m in request.messages if getattr(m, "kind", "") == "tool_result"}
        if request.agent == "front":
            if "loop" in text:
                return self._call("transfer_to_ghost", reason="forever")
            if "ghost" in text and "transfer_to_ghost" not in done:
                return self._call("transfer_to_ghost", reason="who?")
            if "price" in text:
                target = "repairs" if self.misroute_docks and "dock" in text else "sales"
                return self._call(f"transfer_to_{target}", reason="prices")
            if "broken" in text and "transfer_to_repairs" in tools:
                return self._call("transfer_to_repairs", reason="repair")
            return ModelResponse("Hello, how can I help?", usage=Usage(10, 3, 1))
        if request.agent == "repairs" and "refund" in text and "refund" not in done:
            return self._call("refund", order="A-1")
        if request.agent == "repairs" and "price" in text and "dock" not in text:
            return self._call("transfer_to_front", reason="a price question")
        return ModelResponse(f"{request.agent} here.", usage=Usage(10, 3, 1))

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        yield await self.complete(request)


class CachedDeskModel(DeskModel):
    """`DeskModel` whose every call read 100,000 tokens, 80,000 of them from the prompt
    cache, and wrote 10,000, as the provider's dated model `desk-1-2026-01-01`."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        response = self._answer(request)
        response.usage = Usage(100_000, 10_000, 1, cache_read_tokens=80_000)
        response.model = "desk-1-2026-01-01"
        return response


team = build_team()
runner = Runner(team, model=DeskModel(), max_steps=2)
misrouting = Runner(team, model=DeskModel(misroute_docks=True), max_steps=4)
cached = Runner(team, model=CachedDeskModel(), max_steps=2)
