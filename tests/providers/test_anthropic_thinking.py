"""Anthropic extended thinking through the runner, against a local Messages API that
applies the real API's thinking rules: a final assistant turn that calls tools must start
with its thinking, signed (any change refused), and a forced tool choice is refused."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from handoffs import Agent, Handoff, Runner, RunStatus, Team
from wire.anthropic_api import message, redacted, stream, thinking, tool_use
from wire.clients import anthropic_model
from wire.server import FakeServer
from wire.teams import lookup_order, order_status, support_team

THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}


def thinking_model(server: FakeServer, **options: Any) -> Any:
    return anthropic_model(server, settings=THINKING, **options)


def assistant_turns(body: dict[str, Any]) -> list[list[dict[str, Any]]]:
    return [t["content"] for t in body["messages"] if t["role"] == "assistant"]


async def test_thinking_and_redacted_thinking_go_back_first_with_their_tool_use(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        message(thoughts=[thinking("A billing matter.")],
                uses=[tool_use("toolu_h", "transfer_to_billing", {"reason": "charge"})]),
        message("Let me look.", thoughts=[thinking("Look the order up."), redacted("EnC==")],
                uses=[tool_use("toolu_1", "lookup_order", {"order_id": "A-1"})]),
        message("Charged twice; refunding.", thoughts=[thinking("It was charged twice.")]),
    )
    runner = Runner(support_team(), model=thinking_model(anthropic_server))

    result = await runner.run("s1", "charged twice for A-1")

    assert anthropic_server.rejections == []
    assert result.status is RunStatus.COMPLETED and result.output == "Charged twice; refunding."
    last = assistant_turns(anthropic_server.bodies[-1])[-1]
    assert last == [thinking("Look the order up."), redacted("EnC=="),
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "toolu_1", "name": "lookup_order",
                     "input": {"order_id": "A-1"}}]
    # Kept on the transcript, as the provider's own opaque state.
    stored = await runner.store.load("s1")
    assert stored is not None
    kinds = [[r.kind for r in m.reasoning] for m in stored.messages if m.role == "assistant"]
    assert kinds == [["thinking"], ["thinking", "redacted_thinking"], ["thinking"]]


async def test_streamed_thinking_and_signature_deltas_are_kept_and_sent_back(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        stream(thoughts=[["Billing ", "should take this."]],
               uses=[("toolu_h", "transfer_to_billing", ['{"reason": "charge"}'])]),
        stream(["Checking."], thoughts=[["Find ", "the order."], redacted("EnC==")],
               uses=[("toolu_1", "lookup_order", ['{"order_', 'id": "A-1"}'])]),
        stream(["All ", "set."], thoughts=[["Done."]]),
    )
    runner = Runner(support_team(), model=thinking_model(anthropic_server))

    shown = [e["text"] async for e in runner.stream("s1", "charged twice")
             if e.type == "text_delta"]

    assert anthropic_server.rejections == []
    assert "".join(shown) == "Checking.All set."  # thinking is never shown as text
    last = assistant_turns(anthropic_server.bodies[-1])[-1]
    assert last[:3] == [thinking("Find the order."), redacted("EnC=="),
                        {"type": "text", "text": "Checking."}]
    assert last[3]["type"] == "tool_use"


async def test_a_refused_handoff_is_replayed_with_its_thinking(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        message(thoughts=[thinking("Send it to nobody.")],
                uses=[tool_use("toolu_x", "transfer_to_nobody", {"reason": "?"})]),
        message("I'll handle it here.", thoughts=[thinking("That route does not exist.")]),
    )
    runner = Runner(support_team(), model=thinking_model(anthropic_server))

    result = await runner.run("s1", "help")

    assert anthropic_server.rejections == []
    assert result.output == "I'll handle it here."
    assert [r.rejection for r in result.handoffs] == ["unknown_target"]
    refused = assistant_turns(anthropic_server.bodies[-1])[-1]
    assert refused[0] == thinking("Send it to nobody.")
    assert refused[1]["name"] == "transfer_to_nobody"


async def test_a_delegation_is_replayed_with_the_callers_thinking(
        anthropic_server: FakeServer) -> None:
    triage = Agent("triage", instructions="Ask billing.",
                   handoffs=[Handoff("billing", returns=True)])
    billing = Agent("billing", instructions="Answer billing questions.", tools=[lookup_order])
    anthropic_server.add(
        message(thoughts=[thinking("Ask billing for the amount.")],
                uses=[tool_use("toolu_a", "ask_billing",
                               {"reason": "amount", "task": "What was A-1 charged?"})]),
        message(thoughts=[thinking("Look it up.")],
                uses=[tool_use("toolu_l", "lookup_order", {"order_id": "A-1"})]),
        message("129.00, charged twice.", thoughts=[thinking("Found it.")]),
        message("You were charged 129.00 twice.", thoughts=[thinking("Tell the user.")]),
    )
    runner = Runner(Team([triage, billing]), model=thinking_model(anthropic_server))

    result = await runner.run("s1", "what was I charged?")

    assert anthropic_server.rejections == []
    assert result.output == "You were charged 129.00 twice."
    delegate_last = assistant_turns(anthropic_server.bodies[2])[-1]
    assert delegate_last[0] == thinking("Look it up.")
    caller_last = assistant_turns(anthropic_server.bodies[3])[-1]
    assert caller_last[0] == thinking("Ask billing for the amount.")
    assert caller_last[1]["name"] == "ask_billing"


async def test_a_forced_tool_choice_is_asked_for_in_words_and_checked_after(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        message("Sure, billing can help.", thoughts=[thinking("Answer myself?")]),
        message(thoughts=[thinking("Hand it over.")],
                uses=[tool_use("toolu_h", "transfer_to_billing", {"reason": "charge"})]),
        message("Billing here.", thoughts=[thinking("Greet.")]),
    )
    team = support_team(triage_choice="billing")
    runner = Runner(team, model=thinking_model(anthropic_server))

    result = await runner.run("s1", "charged twice")

    assert anthropic_server.rejections == []
    assert result.output == "Billing here." and result.agent == "billing"
    first = anthropic_server.bodies[0]
    assert first["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
    assert first["messages"][-1]["content"][-1] == {
        "type": "text", "text": "Call the transfer_to_billing tool in this response.",
        "cache_control": {"type": "ephemeral"}}
    # The words-only answer was not delivered: the agent was told to make the call.
    nudges = [e["code"] for e in result.events if e.type == "agent_nudged"]
    assert nudges == ["forced_call_skipped"]
    assert "Sure, billing can help." not in [e["text"] for e in result.events
                                            if e.type == "message"]


class Refund(BaseModel):
    order_id: str
    amount: float


async def test_structured_output_with_thinking_uses_an_unforced_final_tool(
        anthropic_server: FakeServer) -> None:
    agent = Agent("refunds", instructions="Decide the refund.", output_type=Refund)
    anthropic_server.add(
        message("Here it is: {\"order_id\": \"A-1\"}", thoughts=[thinking("Draft.")]),
        message(thoughts=[thinking("Now properly.")],
                uses=[tool_use("toolu_f", "final_output",
                               {"order_id": "A-1", "amount": 129.0})]),
    )
    runner = Runner(Team([agent]), model=thinking_model(anthropic_server))

    result = await runner.run("s1", "refund A-1")

    assert anthropic_server.rejections == []
    assert result.output_data == Refund(order_id="A-1", amount=129.0)
    first = anthropic_server.bodies[0]
    assert first["tool_choice"] == {"type": "auto"}
    assert "calling final_output with a Refund object" in json.dumps(first["messages"][-1])
    # The first answer did not validate: it was fed back, as without thinking.
    second = json.dumps(anthropic_server.bodies[1]["messages"])
    assert "It was not valid" in second


async def test_another_models_thinking_is_dropped_and_its_calls_sent_as_text(
        anthropic_server: FakeServer) -> None:
    # Thinking blocks are read back only by the model that wrote them: billing, another
    # model with thinking on, gets triage's tool call without them, as text (a final
    # assistant turn calling tools without thinking is refused).
    triage = Agent("triage", instructions="Route.", tools=[order_status],
                   handoffs=["billing"], model=thinking_model(anthropic_server))
    billing = Agent("billing", instructions="Bill.", tools=[lookup_order],
                    model=thinking_model(anthropic_server, name="claude-other"))
    anthropic_server.add(
        message(thoughts=[thinking("Check the status.")],
                uses=[tool_use("toolu_s", "order_status", {"order_id": "A-1"})]),
        message(thoughts=[thinking("Billing now.")],
                uses=[tool_use("toolu_h", "transfer_to_billing", {"reason": "charge"})]),
        message("Billing here.", thoughts=[thinking("Greet.")]),
    )
    runner = Runner(Team([triage, billing]), history="full")

    result = await runner.run("s1", "charged twice for A-1")

    assert anthropic_server.rejections == []
    assert result.output == "Billing here."
    sent = json.dumps(anthropic_server.bodies[2])
    assert "signature" not in sent and "Check the status." not in sent
    assert '[called order_status with {\\"order_id\\": \\"A-1\\"}]' in sent
    assert "[result of order_status] A-1 shipped" in sent


async def test_a_response_that_waited_for_approval_goes_back_with_its_thinking(
        anthropic_server: FakeServer) -> None:
    from handoffs import tool

    @tool(needs_approval=True)
    def issue_refund(order_id: str) -> str:
        """Refund an order (a person approves it first)."""
        return f"{order_id} refunded"

    anthropic_server.add(
        message(thoughts=[thinking("Refund it.")],
                uses=[tool_use("toolu_r", "issue_refund", {"order_id": "A-1"})]),
        message("Refunded.", thoughts=[thinking("Confirm.")]),
    )
    runner = Runner(Team([Agent("desk", tools=[issue_refund])]),
                    model=thinking_model(anthropic_server))

    paused = await runner.run("s1", "refund A-1")
    done = await runner.approve("s1", "toolu_r")

    assert paused.status is RunStatus.WAITING_FOR_APPROVAL
    assert anthropic_server.rejections == []
    assert done.output == "Refunded."
    assert assistant_turns(anthropic_server.bodies[-1])[-1][0] == thinking("Refund it.")


async def test_interleaved_thinking_goes_back_in_its_place(
        anthropic_server: FakeServer) -> None:
    # Thinking between a text and a tool use (interleaved thinking): the API refuses the
    # sequence rearranged, so each block goes back where it came.
    from wire.server import Reply

    cut = message(thoughts=[thinking("A billing matter.")],
                  uses=[tool_use("toolu_h", "transfer_to_billing", {"reason": "charge"})])
    interleaved = message(uses=[tool_use("toolu_1", "lookup_order", {"order_id": "A-1"})])
    body = dict(interleaved.body)
    body["content"] = [thinking("Plan first."), {"type": "text", "text": "Let me check."},
                       thinking("Which order? A-1."), *body["content"]]
    anthropic_server.add(cut, Reply(body=body), message("Refunding.",
                                                        thoughts=[thinking("Done.")]))
    runner = Runner(support_team(), model=thinking_model(anthropic_server))

    result = await runner.run("s1", "charged twice for A-1")

    assert anthropic_server.rejections == [] and result.output == "Refunding."
    sent = assistant_turns(anthropic_server.bodies[-1])[-1]
    assert [b["type"] for b in sent] == ["thinking", "text", "thinking", "tool_use"]
    assert sent[0] == thinking("Plan first.") and sent[2] == thinking("Which order? A-1.")
