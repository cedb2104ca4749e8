"""`Agent(routing="choice")`: one constrained routing decision per user message, then the
handoff it names or the agent's own answer, with the transfer tools kept out of its
steps; `Handoff(examples=...)` in the tool description and the choice."""

from __future__ import annotations

import json

import pydantic
import pytest

from handoffs import Agent, Handoff, HandoffReason, HandoffsError, Runner, RunStatus, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer


def _team(**agent: object) -> Team:
    triage = Agent("triage", instructions="Route customers.", description="Greets customers.",
                   handoffs=[Handoff("billing", examples=["I was charged twice"],
                                     counter_examples=["my app crashes"]),
                             "technical"], **agent)  # type: ignore[arg-type]
    return Team([triage, Agent("billing", description="Charges and invoices."),
                 Agent("technical", description="Crashes and setup.")])


def _choice(route: str, reason: str = "because", **extra: object) -> str:
    return json.dumps({"route": route, "reason": reason, **extra})


async def test_the_choice_hands_the_message_to_the_route_it_names() -> None:
    model = ScriptedModel([reply(_choice("technical", "a crash")), reply("Technical here.")])
    result = await Runner(_team(routing="choice"), model=model).run("s", "the app crashes")

    assert result.status is RunStatus.COMPLETED
    assert (result.agent, result.output) == ("technical", "Technical here.")
    record = result.handoffs[0]
    assert (record.target, record.reason, record.explanation, record.accepted) == (
        "technical", HandoffReason.LLM, "a crash", True)
    asked = model.requests[0]
    assert asked.agent == "triage" and asked.tools == () and asked.output is not None
    assert asked.output.schema["properties"]["route"]["enum"] == [
        "triage", "billing", "technical"]
    assert asked.output.strict is True
    # The options are described, examples included; the text on transfer tools is gone.
    assert '- "billing": Hand the conversation to billing: Charges and invoices. For: ' \
        '"I was charged twice". Not for: "my app crashes".' in asked.system
    assert "Route customers." in asked.system
    assert [r.agent for r in model.requests] == ["triage", "technical"]


async def test_choosing_itself_lets_the_agent_answer_without_transfer_tools() -> None:
    @tool
    def lookup_order(order_id: str) -> str:
        """Look an order up."""
        return "shipped"

    model = ScriptedModel([reply(_choice("triage")), call("lookup_order", order_id="A-1"),
                           reply("It shipped.")])
    result = await Runner(_team(routing="choice", tools=[lookup_order]), model=model).run(
        "s", "where is A-1?")

    assert (result.agent, result.output) == ("triage", "It shipped.")
    assert result.handoffs == []
    own = model.requests[1:]
    assert len(own) == 2  # one choice per user message, none after the tool's result
    for r in own:
        assert [t.name for t in r.tools] == ["lookup_order"]
        assert r.output is None
        assert "transfer_to" not in r.system
    assert result.usage.requests == 3


async def test_an_answer_that_is_no_valid_choice_falls_back_to_transfer_tools() -> None:
    model = ScriptedModel([reply("billing I think"), reply("Hello!"),
                           reply(_choice("nobody")), reply("Still me.")])
    runner = Runner(_team(routing="choice"), model=model)

    first = await runner.run("s", "hi")
    second = await runner.run("s", "hi again")

    assert (first.output, second.output) == ("Hello!", "Still me.")
    fallback = model.requests[1]
    assert "transfer_to_billing" in [t.name for t in fallback.tools]
    assert "transfer_to_billing" in [t.name for t in model.requests[3].tools]


async def test_the_team_default_applies_and_an_agent_can_opt_out() -> None:
    model = ScriptedModel([reply("Hi.")])
    team = Team(_team(routing="tools").agents, routing="choice")
    await Runner(team, model=model).run("s", "hi")
    assert model.requests[0].output is None  # the agent's own setting wins

    model = ScriptedModel([reply(_choice("billing")), reply("Billing.")])
    team = Team(_team().agents, routing="choice")
    result = await Runner(team, model=model).run("s", "charged twice")
    assert result.agent == "billing"


class Refund(pydantic.BaseModel):
    order_id: str


async def test_a_route_with_a_payload_gets_it_from_the_same_choice() -> None:
    got: list[object] = []
    triage = Agent("triage", routing="choice", handoffs=[Handoff(
        "refunds", payload=Refund, on_handoff=lambda ctx, p: got.append(p))])
    team = Team([triage, Agent("refunds")])
    model = ScriptedModel([reply(_choice("refunds", "refund", refunds={"order_id": "A-7"})),
                           reply("Refunding A-7.")])

    result = await Runner(team, model=model).run("s", "refund A-7")

    assert result.agent == "refunds" and got == [Refund(order_id="A-7")]
    schema = model.requests[0].output.schema  # type: ignore[union-attr]
    assert schema["properties"]["refunds"]["anyOf"][0]["required"] == ["order_id"]


async def test_a_refused_choice_leaves_the_agent_answering() -> None:
    team = Team([Agent("triage", routing="choice",
                       handoffs=[Handoff("billing", enabled=lambda ctx: True)]),
                 Agent("billing", channels=["phone"])])
    model = ScriptedModel([reply(_choice("billing")), reply("I can help here.")])

    result = await Runner(team, model=model).run("s", "charged twice", channel="web")

    assert (result.agent, result.output) == ("triage", "I can help here.")
    assert result.handoffs[0].accepted is False
    assert [t.name for t in model.requests[1].tools] == []


async def test_the_choice_streams() -> None:
    model = ScriptedModel([reply(_choice("billing")), reply("Billing here.")])
    events = [e async for e in Runner(_team(routing="choice"), model=model).stream(
        "s", "charged twice")]
    assert events[-1].result.agent == "billing"  # type: ignore[attr-defined]
    assert any(e.type == "agent_handoff" for e in events)


def test_examples_must_be_texts_and_routing_a_known_mode() -> None:
    with pytest.raises(HandoffsError):
        Handoff("billing", examples="charged twice")  # type: ignore[arg-type]
    with pytest.raises(HandoffsError):
        Agent("a", routing="vote")  # type: ignore[arg-type]
    with pytest.raises(HandoffsError):
        Team([Agent("a")], routing="vote")  # type: ignore[arg-type]


def test_examples_appear_compactly_in_the_transfer_tool() -> None:
    spec = _team().plan("triage").routes["transfer_to_billing"].spec
    assert spec.description.endswith(
        'For: "I was charged twice". Not for: "my app crashes".')
    plain = _team().plan("triage").routes["transfer_to_technical"].spec
    assert "For:" not in plain.description


def _chain() -> Team:
    return Team([Agent("triage", handoffs=["billing"]),
                 Agent("billing", handoffs=["refunds", "triage"]),
                 Agent("refunds")], routing="choice")


async def test_an_agent_handed_the_message_makes_no_second_choice_and_keeps_its_routes(
        ) -> None:
    model = ScriptedModel([reply(_choice("billing", "a charge")),
                           transfer("refunds", reason="a duplicate"),
                           reply("Refunded.")])
    result = await Runner(_chain(), model=model).run("s", "charged twice for A-1")

    assert (result.agent, result.output) == ("refunds", "Refunded.")
    assert [r.agent for r in model.requests] == ["triage", "billing", "refunds"]
    billing = model.requests[1]
    assert billing.output is None  # no choice: the message was routed already
    assert {"transfer_to_refunds", "transfer_to_triage"} <= {t.name for t in billing.tools}


async def test_runtime_feedback_after_the_message_is_no_new_choice() -> None:
    model = ScriptedModel([reply(_choice("triage")), reply(""), reply("Hello.")])
    result = await Runner(_chain(), model=model).run("s", "hi")

    assert result.output == "Hello."
    assert len(model.requests) == 3
    again = model.requests[2]
    assert again.messages[-1].kind == "note"  # the runtime's word on the empty answer
    assert again.output is None and again.tools == ()


async def test_a_rambling_reason_is_cut_short() -> None:
    model = ScriptedModel([reply(_choice("billing", "why " * 400)), reply("Billing.")])
    result = await Runner(_chain(), model=model).run("s", "charged twice")
    explanation = result.handoffs[0].explanation or ""
    assert len(explanation) <= 200 and explanation.endswith("…")
