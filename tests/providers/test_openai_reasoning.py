"""Reasoning state of OpenAI-compatible servers, on the wire with the official openai
client: DeepSeek's `reasoning_content` and the thought signatures Gemini's
OpenAI-compatible endpoint puts on tool calls, kept and sent back to the same model (each
fake server refuses a history without them, as the real one does), and never to another."""

from __future__ import annotations

import json
from typing import Any

from handoffs import Agent, Runner, Team
from handoffs.models.openai import OpenAIModel
from wire.clients import FAST, openai_model
from wire.openai_api import completion, stream, tool_call
from wire.server import FakeServer
from wire.teams import lookup_order, order_status, support_team


def deepseek(server: FakeServer) -> OpenAIModel:
    return OpenAIModel("deepseek-reasoner", base_url=server.url, api_key="k", retry=FAST)


def gemini(server: FakeServer) -> OpenAIModel:
    return OpenAIModel("gemini-3-pro-preview", base_url=server.url + "/v1beta/openai/",
                       api_key="k", retry=FAST)


def assistants(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "assistant"]


async def test_reasoning_content_goes_back_on_each_tool_call_message(
        deepseek_server: FakeServer) -> None:
    deepseek_server.add(
        completion(calls=[tool_call("call_h", "transfer_to_billing", {"reason": "charge"})],
                   reasoning="A billing question."),
        completion(calls=[tool_call("call_1", "lookup_order", {"order_id": "A-1"})],
                   reasoning="Look the order up."),
        completion("Charged twice; refunding.", reasoning="It was charged twice."),
    )
    runner = Runner(support_team(), model=deepseek(deepseek_server))

    result = await runner.run("s1", "charged twice for A-1")

    assert deepseek_server.rejections == []
    assert result.output == "Charged twice; refunding."
    last = assistants(deepseek_server.bodies[-1])[-1]
    assert last["reasoning_content"] == "Look the order up."
    assert last["tool_calls"][0]["function"]["name"] == "lookup_order"


async def test_streamed_reasoning_content_is_kept_and_not_shown(
        deepseek_server: FakeServer) -> None:
    deepseek_server.add(
        stream(calls=[("call_h", "transfer_to_billing", ['{"reason": "charge"}'])],
               reasoning=["A billing ", "question."]),
        stream(calls=[("call_1", "lookup_order", ['{"order_id": "A-1"}'])],
               reasoning=["Look it ", "up."]),
        stream(["Refunding."], reasoning=["Done."]),
    )
    runner = Runner(support_team(), model=deepseek(deepseek_server))

    shown = [e["text"] async for e in runner.stream("s1", "charged twice")
             if e.type == "text_delta"]

    assert deepseek_server.rejections == []
    assert shown == ["Refunding."]
    assert assistants(deepseek_server.bodies[-1])[-1]["reasoning_content"] == "Look it up."


async def test_gemini_thought_signatures_go_back_on_their_calls(
        gemini_compat_server: FakeServer) -> None:
    gemini_compat_server.add(
        completion(calls=[tool_call("h1", "transfer_to_billing", {"reason": "charge"},
                                    signature="c2lnLWg=")]),
        completion(calls=[tool_call("c1", "lookup_order", {"order_id": "A-1"},
                                    signature="c2lnLTE="),
                          tool_call("c2", "order_status", {"order_id": "A-1"})]),
        completion("Charged twice; refunding."),
    )
    runner = Runner(support_team(), model=gemini(gemini_compat_server))

    result = await runner.run("s1", "charged twice for A-1")

    assert gemini_compat_server.rejections == []
    assert result.output == "Charged twice; refunding."
    calls = assistants(gemini_compat_server.bodies[-1])[-1]["tool_calls"]
    assert calls[0]["extra_content"] == {"google": {"thought_signature": "c2lnLTE="}}
    assert "extra_content" not in calls[1]  # only the first of parallel calls is signed


async def test_streamed_gemini_signatures_are_kept(gemini_compat_server: FakeServer) -> None:
    gemini_compat_server.add(
        stream(calls=[("h1", "transfer_to_billing", ['{"reason": "charge"}'])],
               signatures=["c2lnLWg="]),
        stream(calls=[("c1", "lookup_order", ['{"order_id": ', '"A-1"}'])],
               signatures=["c2lnLTE="]),
        stream(["Refunding."]),
    )
    runner = Runner(support_team(), model=gemini(gemini_compat_server))

    events = [e async for e in runner.stream("s1", "charged twice")]

    assert gemini_compat_server.rejections == []
    assert events[-1].type == "run_completed"
    last = assistants(gemini_compat_server.bodies[-1])[-1]["tool_calls"][0]
    assert last["extra_content"] == {"google": {"thought_signature": "c2lnLTE="}}


async def test_a_gemini_signature_never_reaches_another_model(
        gemini_compat_server: FakeServer, openai_server: FakeServer) -> None:
    # OpenAI refuses fields it does not know on a tool call; the signature is Gemini's.
    triage = Agent("triage", instructions="Route.", tools=[order_status],
                   handoffs=["billing"], model=gemini(gemini_compat_server))
    billing = Agent("billing", instructions="Bill.", tools=[lookup_order],
                    model=openai_model(openai_server))
    gemini_compat_server.add(
        completion(calls=[tool_call("s1", "order_status", {"order_id": "A-1"},
                                    signature="c2lnLXM=")]),
        completion(calls=[tool_call("h1", "transfer_to_billing", {"reason": "charge"},
                                    signature="c2lnLWg=")]),
    )
    openai_server.add(completion("Billing here."))
    runner = Runner(Team([triage, billing]), history="full")

    result = await runner.run("s1", "charged twice for A-1")

    assert gemini_compat_server.rejections == [] and openai_server.rejections == []
    assert result.output == "Billing here."
    sent = json.dumps(openai_server.bodies[0])
    assert "order_status" in sent and "thought_signature" not in sent
