"""The team the browser tests serve: the support team on the offline rule model, streamed
in small pieces with a pause between them (so a turn lasts long enough to drop its
connection), plus a phone-only agent, so that picking it from the web is refused, and a
cashier whose voucher tool waits for the operator's approval."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from handoffs import Agent, Runner, Team, tool
from handoffs.core.messages import ToolCall, UserMessage
from handoffs.examples.support import build_team, rule_model
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta

PAUSE = float(os.environ.get("HANDOFFS_WEB_PAUSE", "0.03"))
"""Seconds between two streamed pieces of an answer."""


class Paced:
    """The offline model, with a pause before each streamed piece."""

    def __init__(self) -> None:
        self.inner = rule_model(stream_chunks=6)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.agent == "cashier":
            return cashier(request)
        return await self.inner.complete(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        if request.agent == "cashier":
            yield cashier(request)
            return
        async for part in self.inner.stream(request):
            await asyncio.sleep(PAUSE)
            yield part


@tool(needs_approval=True)
def issue_voucher(amount: int) -> str:
    """Send the customer a voucher."""
    return f"voucher of {amount} EUR sent"


def cashier(request: ModelRequest) -> ModelResponse:
    """Asks for a voucher after the user speaks; answers once the tool has run."""
    if isinstance(request.messages[-1], UserMessage):
        n = sum(isinstance(m, UserMessage) for m in request.messages)
        return ModelResponse("", (ToolCall(f"voucher_{n}", "issue_voucher",
                                           '{"amount": 20}'),))
    return ModelResponse(f"Done: {request.messages[-1].text}.")


def make_runner() -> Runner:
    support = build_team()
    phone = Agent("phone", description="Phone support; serves calls only.",
                  channels=("voice",), display_name="Phone line", icon="📞",
                  color="#0f766e")
    till = Agent("cashier", description="Vouchers, with the operator's approval.",
                 tools=[issue_voucher], display_name="Cashier", icon="💶", color="#b45309")
    team = Team([*support.agents, phone, till], entry="triage", fallback="triage")
    return Runner(team, model=Paced())
