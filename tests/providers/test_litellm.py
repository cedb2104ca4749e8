"""LiteLLMModel (`litellm:`) on the `litellm` package's `acompletion`, against local
servers of the APIs LiteLLM speaks: Chat Completions (its `openai/` provider) and
DeepSeek's thinking mode (its `deepseek/` provider), each recording every request."""

from __future__ import annotations

import json

import pytest

from handoffs import HandoffsError, Runner, RunStatus, get_model
from handoffs.core.messages import AssistantMessage, Reasoning, ToolCall, ToolResult, UserMessage
from handoffs.core.tools import ToolSpec
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta
from handoffs.models.litellm import LiteLLMModel
from handoffs.models.retry import RetryPolicy
from wire.clients import litellm_model
from wire.litellm_api import thinking_completion
from wire.openai_api import completion, status, stream, tool_call
from wire.server import FakeServer
from wire.teams import support_team

LOOKUP = ToolSpec("lookup_order", "Look up an order.", {
    "type": "object", "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"], "additionalProperties": False})
REASONER = "deepseek/deepseek-reasoner"


async def test_a_text_answer_with_usage(openai_server: FakeServer) -> None:
    reply = completion("Hello! How can I help?", usage=(30, 8))
    reply.body["usage"]["prompt_tokens_details"] = {"cached_tokens": 16}
    openai_server.add(reply)
    runner = Runner(support_team(), model=litellm_model(openai_server))

    result = await runner.run("s1", "hi")

    assert result.status is RunStatus.COMPLETED and result.output == "Hello! How can I help?"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 8)
    assert result.usage.cache_read_tokens == 16
    sent = openai_server.received[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer test"
    body = sent.body
    assert body["model"] == "gpt-test"
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][1] == {"role": "user", "content": "hi"}
    assert body["tools"][0]["function"]["name"] == "transfer_to_billing"


async def test_a_handoff_turn_with_tools_through_the_runner(openai_server: FakeServer) -> None:
    openai_server.add(
        completion(calls=[tool_call("call_h", "transfer_to_billing", {"reason": "refund"})]),
        completion(calls=[tool_call("call_1", "lookup_order", {"order_id": "A-1"}),
                          tool_call("call_2", "order_status", {"order_id": "A-1"})]),
        completion("A-1 was charged twice; refunding."),
    )
    runner = Runner(support_team(), model=litellm_model(openai_server))

    result = await runner.run("s1", "charged twice on A-1")

    assert result.output == "A-1 was charged twice; refunding." and result.agent == "billing"
    assert [(r.source, r.target) for r in result.handoffs] == [("triage", "billing")]
    assert openai_server.rejections == []
    last = openai_server.bodies[-1]["messages"]
    assert [m["role"] for m in last[-3:]] == ["assistant", "tool", "tool"]
    assert [c["id"] for c in last[-3]["tool_calls"]] == ["call_1", "call_2"]
    assert json.loads(last[-2]["content"])["charged"] == 2
    assert "call_h" not in json.dumps(last)


async def test_streamed_text_and_call_fragments(openai_server: FakeServer) -> None:
    openai_server.add(
        stream(calls=[("call_h", "transfer_to_billing", ['{"rea', 'son": "refund"}'])]),
        stream(calls=[("call_1", "lookup_order", ['{"order', '_id": "A-7"}'])]),
        stream(["Do", "ne", "."], usage=(40, 9)),
    )
    runner = Runner(support_team(), model=litellm_model(openai_server))

    events = [e async for e in runner.stream("s1", "check A-7")]

    assert [(e.data["agent"], e.data["text"]) for e in events if e.type == "text_delta"] == [
        ("billing", "Do"), ("billing", "ne"), ("billing", ".")]
    assert [json.loads(e.data["arguments"]) for e in events if e.type == "tool_called"] == [
        {"order_id": "A-7"}]
    result = events[-1].result
    assert result.output == "Done."
    assert result.usage_by_agent["billing"].input_tokens == 12 + 40  # both of its calls
    assert all(b["stream"] is True for b in openai_server.bodies)
    assert openai_server.rejections == []


async def test_reasoning_content_goes_back_with_its_calls_to_the_same_model(
        thinking_server: FakeServer) -> None:
    """Adapter level, DeepSeek's thinking mode through LiteLLM: `reasoning_content` is
    kept and sent back on the assistant message with the calls; the server refuses the
    same history without it."""
    thinking_server.add(
        thinking_completion("Look the order up.", calls=[
            tool_call("call_1", "lookup_order", {"order_id": "A-1"})]),
        thinking_completion("Done thinking.", "Charged twice."),
        completion("never"))
    model = litellm_model(thinking_server, REASONER, retry=RetryPolicy(max_retries=0))
    ask = [UserMessage("was A-1 charged twice?", "billing")]

    first = await model.complete(ModelRequest("billing", "Be brief.", ask, [LOOKUP]))

    assert first.stop == "tool_calls"
    assert first.reasoning == (Reasoning("litellm", "reasoning_content", {
        "reasoning_content": "Look the order up."}, model=REASONER),)
    assert (first.usage.reasoning_tokens, first.usage.cache_read_tokens) == (3, 8)  # type: ignore[union-attr]
    result = ToolResult("call_1", "lookup_order", '{"charged": 2}', "billing")
    history = [*ask, AssistantMessage("", "billing", first.tool_calls, first.reasoning),
               result]
    second = await model.complete(ModelRequest("billing", "Be brief.", history, [LOOKUP]))

    assert second.text == "Charged twice."
    sent = thinking_server.bodies[1]["messages"]
    assert sent[2]["role"] == "assistant"
    assert sent[2]["reasoning_content"] == "Look the order up."
    # what DeepSeek refuses: the same history without the reasoning
    bare = [*ask, AssistantMessage("", "billing", first.tool_calls), result]
    with pytest.raises(HandoffsError, match="reasoning_content must be passed back"):
        await model.complete(ModelRequest("billing", "Be brief.", bare, [LOOKUP]))


async def test_reasoning_is_dropped_for_another_model_or_family(
        thinking_server: FakeServer) -> None:
    thinking_server.add(completion("ok"))
    history = [UserMessage("hi", "a"), AssistantMessage("", "a", (
        ToolCall("call_1", "lookup_order", "{}"),), (
        Reasoning("litellm", "reasoning_content", {"reasoning_content": "x"},
                  model="deepseek/deepseek-chat"),
        Reasoning("gemini", "thought_signature", {"thought_signature": "c2ln"}, call_id="c"))),
        ToolResult("call_1", "lookup_order", "{}", "a"), UserMessage("and now?", "a")]

    await litellm_model(thinking_server, REASONER).complete(
        ModelRequest("a", "", history, [LOOKUP]))

    text = json.dumps(thinking_server.bodies[0])
    assert "reasoning_content" not in text and "thought_signature" not in text


async def test_reasoning_round_trip_through_the_runner(thinking_server: FakeServer) -> None:
    """The full turn: the runtime keeps `reasoning_content` on the transcript, and the
    next request of the loop carries it back (DeepSeek refuses it otherwise)."""
    thinking_server.add(
        thinking_completion("Billing.", calls=[
            tool_call("call_h", "transfer_to_billing", {"reason": "refund"})]),
        thinking_completion("Look it up.", calls=[
            tool_call("call_1", "lookup_order", {"order_id": "A-1"})]),
        thinking_completion("Done.", "Refunded."),
    )
    runner = Runner(support_team(), model=litellm_model(thinking_server, REASONER))

    result = await runner.run("s1", "refund A-1")

    assert result.output == "Refunded."
    assert thinking_server.rejections == []
    assert thinking_server.bodies[-1]["messages"][-2]["reasoning_content"] == "Look it up."


async def test_errors_are_mapped_to_codes(openai_server: FakeServer) -> None:
    openai_server.add(
        status(429, "Rate limit reached", {"retry-after": "0.2"}), completion("Made it."),
        status(401, "Incorrect API key provided"),
        status(400, "This model's maximum context length is 128000 tokens.",
               err_code="context_length_exceeded"),
        *(status(500, "The server had an error") for _ in range(3)),
    )
    model = litellm_model(openai_server, retry=RetryPolicy(max_retries=2, base_delay=0.01))
    runner = Runner(support_team(), model=model)

    ok = await runner.run("a", "hi")
    errors = [(await runner.run(s, "hi")).error for s in ("b", "c", "d")]

    assert ok.output == "Made it."
    assert [e.code if e else None for e in errors] == [
        "auth_error", "context_length_exceeded", "model_error"]
    assert errors[2] is not None and "gave up after 3 attempts" in errors[2].message
    assert len(openai_server.received) == 2 + 1 + 1 + 3  # LiteLLM's own retries are off


async def test_a_streamed_cut_answer_says_length(openai_server: FakeServer) -> None:
    reply = stream(["half a sen"])
    reply.events[-2]["choices"][0]["finish_reason"] = "length"  # type: ignore[index]
    openai_server.add(reply)
    request = ModelRequest("a", "", [UserMessage("hi", "a")], [])

    pieces = [p async for p in litellm_model(openai_server).stream(request)]

    assert pieces[0] == TextDelta("half a sen")
    assert isinstance(pieces[-1], ModelResponse) and pieces[-1].stop == "length"


def test_the_model_string_and_its_options() -> None:
    model = get_model("litellm:mistral/mistral-large-latest?timeout=20")
    assert isinstance(model, LiteLLMModel) and model.model == "mistral/mistral-large-latest"
    assert model.timeout == 20
