"""An agent on OpenAI hands off to an agent on Anthropic and back, within a turn and
across turns; each server checks that the history it receives is valid for it."""

from __future__ import annotations

import itertools
import json
import re

from handoffs import Agent, Runner, RunStatus, Team
from wire.anthropic_api import message, tool_use
from wire.clients import anthropic_model, openai_model
from wire.openai_api import completion, tool_call
from wire.server import FakeServer
from wire.teams import lookup_order, order_status

OPENAI_ONLY = ('"tool_call_id"', '"role": "tool"', '"function"', '"tool_calls"')


def mixed_team(openai: FakeServer, anthropic: FakeServer) -> Team:
    triage = Agent("triage", instructions="Route customers.", tools=[order_status],
                   handoffs=["billing"], model=openai_model(openai))
    billing = Agent("billing", instructions="Handle billing.", tools=[lookup_order],
                    handoffs=["triage"], model=anthropic_model(anthropic, cache=False))
    return Team([triage, billing], entry="triage")


async def test_openai_to_anthropic_to_openai_in_one_turn_and_across_turns(
        openai_server: FakeServer, anthropic_server: FakeServer) -> None:
    openai_server.add(
        # turn 1: triage checks the order (an id no Anthropic API would accept), then hands off
        completion(calls=[tool_call("call.weird:1/x", "order_status", {"order_id": "A-1"})]),
        completion("Over to billing.", calls=[tool_call("call_h1", "transfer_to_billing",
                                                        {"reason": "refund"})]),
        # ... and answers when billing hands back
        completion("Billing has refunded A-1. Anything else?"),
        # turn 2: triage hands off again
        completion(calls=[tool_call("call_h2", "transfer_to_billing", {"reason": "invoice"})]),
    )
    anthropic_server.add(
        message("Checking.", uses=[tool_use("toolu_01", "lookup_order", {"order_id": "A-1"})]),
        message(uses=[tool_use("toolu_02", "transfer_to_triage", {"reason": "done"})]),
        # turn 2
        message("Your invoice is on its way."),
    )
    # `full`: each provider is sent the other's tool calls and results, in its own form.
    runner = Runner(mixed_team(openai_server, anthropic_server), history="full")

    first = await runner.run("s1", "I was charged twice for A-1")
    second = await runner.run("s1", "and I need an invoice")

    assert first.status is RunStatus.COMPLETED and second.status is RunStatus.COMPLETED
    assert first.output == "Billing has refunded A-1. Anything else?"
    assert [(r.source, r.target) for r in first.handoffs] == [("triage", "billing"),
                                                             ("billing", "triage")]
    assert second.output == "Your invoice is on its way." and second.agent == "billing"
    assert openai_server.rejections == [] and anthropic_server.rejections == []

    # Anthropic got valid, Anthropic-only histories: safe ids, no handoff calls replayed.
    for body in anthropic_server.bodies:
        text = json.dumps(body)
        assert not any(marker in text for marker in OPENAI_ONLY)
        assert "call_h1" not in text and "call_h2" not in text
        for turn in body["messages"]:
            for block in turn["content"]:
                if block["type"] == "tool_use":
                    assert re.fullmatch(r"[a-zA-Z0-9_-]+", block["id"])
    first_view = anthropic_server.bodies[0]["messages"]
    assert [t["role"] for t in first_view] == ["user", "assistant", "user", "assistant", "user"]
    tool_use_id = first_view[1]["content"][0]["id"]
    assert tool_use_id != "call.weird:1/x"
    assert first_view[2]["content"][0] == {"type": "tool_result", "tool_use_id": tool_use_id,
                                           "content": "A-1 shipped"}

    # The OpenAI request after the hand-back holds billing's tool call and its result, and
    # no trace of either handoff call.
    back = openai_server.bodies[2]["messages"]
    text = json.dumps(back)
    assert "toolu_01" in text and "toolu_02" not in text and "call_h1" not in text
    tool_ids = [m["tool_call_id"] for m in back if m["role"] == "tool"]
    call_ids = [c["id"] for m in back for c in m.get("tool_calls", ())]
    assert tool_ids == call_ids

    # Across turns, the second Anthropic request alternates and starts with the user.
    roles = [t["role"] for t in anthropic_server.bodies[-1]["messages"]]
    assert roles[0] == "user" and roles[-1] == "user"
    assert all(a != b for a, b in itertools.pairwise(roles))


async def test_anthropic_target_with_no_history_gets_a_valid_request(
        openai_server: FakeServer, anthropic_server: FakeServer) -> None:
    from handoffs import Handoff

    triage = Agent("triage", handoffs=[Handoff("billing", history="none")],
                   model=openai_model(openai_server))
    billing = Agent("billing", instructions="Handle billing.",
                    model=anthropic_model(anthropic_server))
    openai_server.add(completion(calls=[tool_call("call_1", "transfer_to_billing", {})]))
    anthropic_server.add(message("Billing here."))

    result = await Runner(Team([triage, billing])).run("s", "hi")

    assert result.output == "Billing here."
    assert anthropic_server.rejections == []
    assert anthropic_server.bodies[0]["messages"][0]["role"] == "user"


async def test_anthropic_thinking_to_openai_and_back_each_gets_only_its_own(
        openai_server: FakeServer, anthropic_server: FakeServer) -> None:
    # triage thinks (Anthropic, extended thinking on), billing is on OpenAI; the whole
    # history is shared (`full`). OpenAI never sees a thinking block; when billing hands
    # back, Anthropic gets triage's own thinking back before its own call, and billing's
    # OpenAI call, which has none, as text (a final assistant turn calling tools without
    # thinking is refused while thinking is on).
    from wire.anthropic_api import thinking

    triage = Agent("triage", instructions="Route customers.", tools=[order_status],
                   handoffs=["billing"], model=anthropic_model(
                       anthropic_server, settings={"thinking": {"type": "enabled",
                                                                "budget_tokens": 1024}}))
    billing = Agent("billing", instructions="Handle billing.", tools=[lookup_order],
                    handoffs=["triage"], model=openai_model(openai_server))
    anthropic_server.add(
        message(thoughts=[thinking("Check the order first.")],
                uses=[tool_use("toolu_s", "order_status", {"order_id": "A-1"})]),
        message(thoughts=[thinking("A billing matter.")],
                uses=[tool_use("toolu_h", "transfer_to_billing", {"reason": "refund"})]),
        message("Billing has refunded A-1.", thoughts=[thinking("Wrap up.")]),
    )
    openai_server.add(
        completion(calls=[tool_call("call_l", "lookup_order", {"order_id": "A-1"})]),
        completion(calls=[tool_call("call_b", "transfer_to_triage", {"reason": "done"})]),
    )
    runner = Runner(Team([triage, billing]), history="full")

    result = await runner.run("s1", "I was charged twice for A-1")

    assert result.status is RunStatus.COMPLETED
    assert result.output == "Billing has refunded A-1."
    assert openai_server.rejections == [] and anthropic_server.rejections == []
    for body in openai_server.bodies:
        sent = json.dumps(body)
        assert "thinking" not in sent and "signature" not in sent
        assert "Check the order first." not in sent
    back = anthropic_server.bodies[-1]["messages"]
    own = next(t["content"] for t in back if t["role"] == "assistant"
               and any(b.get("name") == "order_status" for b in t["content"]))
    assert own[0] == thinking("Check the order first.")
    assert "[called lookup_order with" in json.dumps(back)
