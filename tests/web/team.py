"""The team the browser tests serve: the support team on the offline rule model, streamed
in small pieces with a pause between them (so a turn lasts long enough to drop its
connection), plus a phone-only agent, so that picking it from the web is refused, a
cashier whose voucher tool waits for the operator's approval, and a notes agent that
answers in Markdown (and tries some HTML). Turns are traced (a global SDK tracer provider
with no exporter), so their events carry trace ids."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator

from handoffs import Agent, Runner, Team, tool
from handoffs.core.messages import ToolCall, ToolResult, UserMessage
from handoffs.examples.support import build_team, rule_model
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta, Usage, chunked

PAUSE = float(os.environ.get("HANDOFFS_WEB_PAUSE", "0.03"))
"""Seconds between two streamed pieces of an answer."""

NOTES = """**Your order** is on its way. Here is what we know:

| order | item | status |
| --- | --- | ---: |
| A-1001 | Noise-cancelling headphones | delivered |
| A-1002 | USB-C dock | shipped |

1. Track it at [the carrier's page](https://example.com/track?id=A-1002).
2. Or write to <mailto:help@example.com>.

Not a link: [click](javascript:alert(1)); not markup: <img src=x onerror="window.pwned=1">
and <script>window.pwned=2</script>. Code stays code: `**not bold**`.

> Thanks for waiting, and *sorry* for the delay.
"""
"""What the notes agent answers, whatever it is asked."""


class Paced:
    """The offline model, with a pause before each streamed piece."""

    def __init__(self) -> None:
        self.inner = rule_model(stream_chunks=6)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.agent in OWN:
            return OWN[request.agent](request)
        return await self.inner.complete(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        if request.agent in OWN:
            for piece in chunked(OWN[request.agent](request), 12):
                await asyncio.sleep(PAUSE)
                yield piece
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
                                           '{"amount": 20}'),), Usage(40, 9, 1), "till-1")
    last = request.messages[-1]
    if isinstance(last, ToolResult) and last.is_error:
        return ModelResponse("Sorry, I could not send the voucher.", (), Usage(52, 8, 1),
                             "till-1")
    return ModelResponse(f"Done: {last.text}.", (), Usage(52, 6, 1), "till-1")


def notes(request: ModelRequest) -> ModelResponse:
    """Asks for a handoff it has no route for (refused: the model reads why), then answers."""
    if isinstance(request.messages[-1], UserMessage):
        n = sum(isinstance(m, UserMessage) for m in request.messages)
        return ModelResponse("", (ToolCall(f"policy_{n}", "transfer_to_policy",
                                           '{"reason": "Ask the policy desk"}'),),
                             Usage(25, 7, 1), "notes-1")
    return ModelResponse(NOTES, (), Usage(30, 120, 1), "notes-1")


OWN = {"cashier": cashier, "notes": notes}


def make_runner(traced: bool = True) -> Runner:
    """The web tests' runner; `traced` sets the application's tracer provider (no
    exporter), so every turn is traced, as a served app would: only in a server process
    of its own, never in the test process (it is global and cannot be unset)."""
    if traced:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider

        trace.set_tracer_provider(TracerProvider())

    support = build_team()
    phone = Agent("phone", description="Phone support; serves calls only.",
                  channels=("voice",), display_name="Phone line", icon="📞",
                  color="#0f766e")
    till = Agent("cashier", description="Vouchers, with the operator's approval.",
                 tools=[issue_voucher], display_name="Cashier", icon="💶", color="#b45309")
    writer = Agent("notes", description="Answers in Markdown.", display_name="Notes",
                   icon="📝", color="#475569")
    team = Team([*support.agents, phone, till, writer], entry="triage", fallback="triage")
    return Runner(team, model=Paced())
