"""The team the browser tests serve: the support team on the offline rule model, streamed
in small pieces with a pause between them (so a turn lasts long enough to drop its
connection), plus a phone-only agent, so that picking it from the web is refused, a
cashier whose voucher tool waits for the operator's approval, a notes agent that answers
in Markdown (and tries some HTML; a code block with a long line when asked for the
config), and a parcel tracker whose tool always fails. A message with `[fail]` in it
fails the turn (every model call of it raises). The team suggests the support team's
first messages. Turns are traced (a global SDK tracer provider with no exporter), so
their events carry trace ids."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from dataclasses import replace

from handoffs import Agent, Runner, Team, tool
from handoffs.core.messages import ToolCall, ToolResult, UserMessage
from handoffs.errors import ModelError
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
"""What the notes agent answers, whatever it is asked (but the config)."""

CONFIG = """Here is the whole line to put in your config:

```
dock.firmware.channel=stable;dock.monitor.reconnect=always;dock.usb.power_management=off;dock.ethernet.wake_on_lan=on
```
"""
"""What the notes agent answers when asked for the config: a code block whose line is
wider than any pane (it scrolls sideways)."""

FAIL = "[fail]"
"""A user message with this in it fails its turn: every model call of it raises."""


class Paced:
    """The offline model, with a pause before each streamed piece."""

    def __init__(self) -> None:
        self.inner = rule_model(stream_chunks=6)

    async def complete(self, request: ModelRequest) -> ModelResponse:
        _fail_if_asked(request)
        if request.agent in OWN:
            return OWN[request.agent](request)
        return await self.inner.complete(request)

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        _fail_if_asked(request)
        if request.agent in OWN:
            for piece in chunked(OWN[request.agent](request), 12):
                await asyncio.sleep(PAUSE)
                yield piece
            return
        async for part in self.inner.stream(request):
            await asyncio.sleep(PAUSE)
            yield part


def _fail_if_asked(request: ModelRequest) -> None:
    users = [m for m in request.messages if isinstance(m, UserMessage)]
    if users and FAIL in users[-1].text:
        raise ModelError("The model is down (the test asked for a failure).")


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
    users = [m for m in request.messages if isinstance(m, UserMessage)]
    asked = users[-1].text if users else ""
    return ModelResponse(CONFIG if "config" in asked else NOTES, (), Usage(30, 120, 1),
                         "notes-1")


@tool
def track_parcel(parcel: str) -> str:
    """Where a parcel is now."""
    raise RuntimeError(f"the carrier's tracking service is down (parcel {parcel})")


def tracker(request: ModelRequest) -> ModelResponse:
    """Calls its tool (which always fails) on a user's message, then says it could not."""
    last = request.messages[-1]
    if isinstance(last, UserMessage):
        n = sum(isinstance(m, UserMessage) for m in request.messages)
        return ModelResponse("", (ToolCall(f"track_{n}", "track_parcel",
                                           f'{{"parcel": "P-{n:04d}"}}'),), Usage(20, 6, 1),
                             "tracker-1")
    return ModelResponse("Sorry, I can't see where your parcel is right now: the carrier's "
                         "tracking is down. Please try again later.", (), Usage(30, 14, 1),
                         "tracker-1")


OWN = {"cashier": cashier, "notes": notes, "tracker": tracker}


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
    parcels = Agent("tracker", description="Tracks parcels (its tool is down).",
                    tools=[track_parcel], display_name="Parcel tracker", icon="📦",
                    color="#0369a1")
    # HANDOFFS_WEB_PERSON_KEEPS=1: a person who holds the conversation keeps it.
    keeps = os.environ.get("HANDOFFS_WEB_PERSON_KEEPS") == "1"
    team = Team([*support.agents, phone, till, writer, parcels], entry="triage",
                fallback="triage", suggested_prompts=support.suggested_prompts,
                policy=replace(support.policy, person_keeps_conversation=keeps))
    return Runner(team, model=Paced())
