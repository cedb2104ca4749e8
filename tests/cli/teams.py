"""Teams the CLI tests load by path: good ones, and ones `handoffs check` must flag."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from handoffs import (
    Agent,
    GuardrailResult,
    Handoff,
    HumanAgent,
    ModelError,
    RunContext,
    Runner,
    Team,
    guardrail,
    tool,
)
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool(name="look up")
def bad_name(order_id: str) -> str:
    """A tool whose name has a space, which providers refuse."""
    return order_id


team = Team([
    Agent("front", description="Greets and routes.", handoffs=["maths"]),
    Agent("maths", description="Calculus and algebra.", handoffs=["front"]),
])

runner = Runner(team, model=ScriptedModel([transfer("maths", reason="calculus"),
                                           reply("The derivative of x^2 is 2x.")]))

@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order (a person approves each call)."""
    return f"refunded {order_id}"


approvals = Runner(Team([Agent("billing", tools=[refund])]), model=ScriptedModel([
    call("refund", order_id="A-1"), reply("A-1 is refunded."),
    call("refund", order_id="A-2"), reply("I could not refund A-2.")]))

two_refunds = Runner(Team([Agent("billing", tools=[refund])]), model=ScriptedModel([
    [call("refund", "call_a1", order_id="A-1"), call("refund", "call_a2", order_id="A-2")],
    reply("Done with both.")]))

failing = Runner(Team([Agent("solo")]),
                 model=ScriptedModel([ModelError("the provider is down")]))


def build() -> Team:
    return Team([Agent("solo", description="Answers everything.")])


def badly_named() -> Team:
    return Team([Agent("entry", tools=[bad_name])])


def unresolved() -> Team:
    return Team([Agent("a", handoffs=["ghost"])])


def flawed() -> Team:
    return Team([
        Agent("entry", description="Routes.", handoffs=["quiet", "vault"]),
        Agent("quiet"),
        Agent("vault", description="Secrets.", system_only=True),
        Agent("island", description="Nothing leads here."),
        HumanAgent("nobody", description="A person no one can reach."),
    ])


not_a_team = 42


class SlowModel:
    """Streams one word, then takes a long time: a turn to interrupt with Ctrl-C."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(60)
        return ModelResponse("never")

    async def stream(self, request: ModelRequest) -> AsyncIterator[TextDelta | ModelResponse]:
        yield TextDelta("Thinking ")
        await asyncio.sleep(60)
        yield ModelResponse("Thinking forever.")


slow = Runner(Team([Agent("slow", description="Takes its time.")]), model=SlowModel())


def _three_argument_hook(ctx: object, payload: object, extra: object) -> None:
    """No handoff can call this: it needs a third argument."""


def bad_hook() -> Team:
    return Team([Agent("a", handoffs=[Handoff("b", on_handoff=_three_argument_hook)]),
                 Agent("b")])


@guardrail(name="no_poems")
def no_poems(ctx: RunContext, text: str) -> GuardrailResult:
    """Refuses poems with a reply (an expected refusal, not a failure)."""
    if "poem" in text:
        return GuardrailResult.trip("A poem.", reply="I only help with flights.",
                                    reasoning="asks for a poem")
    return GuardrailResult.ok()


guarded = Runner(Team([Agent("desk", input_guardrails=[no_poems])]),
                 model=ScriptedModel([reply("thrown away")]))
