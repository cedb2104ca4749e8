"""BedrockModel (`bedrock:`) on the official AWS SDK (boto3's `bedrock-runtime` client,
SigV4-signed with dummy credentials), against a local server that applies the Converse
API's rules and speaks its binary event stream, recording every request."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handoffs import Runner, RunStatus, get_model
from handoffs.core.messages import AssistantMessage, Reasoning, ToolCall, ToolResult, UserMessage
from handoffs.core.output import output_spec
from handoffs.core.tools import ToolSpec
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta
from handoffs.models.bedrock import BedrockModel
from handoffs.models.retry import RetryPolicy
from wire.bedrock_api import response, status, stream, thinking, tool_use
from wire.clients import bedrock_model
from wire.server import FakeServer, Reply
from wire.teams import support_team

LOOKUP = ToolSpec("lookup_order", "Look up an order.", {
    "type": "object", "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"], "additionalProperties": False})
THINKING = {"additionalModelRequestFields": {"thinking": {"type": "enabled",
                                                          "budget_tokens": 1024}}}


def roles(body: dict[str, Any]) -> list[tuple[str, list[str]]]:
    return [(m["role"], [next(iter(b)) for b in m["content"]]) for m in body["messages"]]


async def test_a_text_answer_with_usage_and_the_request_in_converse_form(
        bedrock_server: FakeServer) -> None:
    bedrock_server.add(response("Hello! How can I help?", usage=(50, 20, 2000, 300)))
    runner = Runner(support_team(), model=bedrock_model(bedrock_server))

    result = await runner.run("s1", "hi")

    assert result.status is RunStatus.COMPLETED and result.output == "Hello! How can I help?"
    usage = result.usage
    # Bedrock counts cache reads and writes apart; here they are part of the input.
    assert (usage.input_tokens, usage.output_tokens) == (2350, 20)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (2000, 300)
    sent = bedrock_server.received[0]
    assert sent.path == "/model/anthropic.claude-test-v1%3A0/converse"
    assert sent.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDTEST/")
    body = sent.body
    assert body["system"][0]["text"].startswith("Route customers to billing.")
    # Claude on Bedrock: cache checkpoints after the system text and the user's message.
    assert body["system"][1:] == [{"cachePoint": {"type": "default"}}]
    assert body["messages"] == [{"role": "user", "content": [
        {"text": "hi"}, {"cachePoint": {"type": "default"}}]}]
    spec = body["toolConfig"]["tools"][0]["toolSpec"]
    assert spec["name"] == "transfer_to_billing" and spec["inputSchema"]["json"]["type"] == \
        "object"
    assert body["inferenceConfig"] == {"maxTokens": 4096}


async def test_a_handoff_turn_with_tools_through_the_runner(
        bedrock_server: FakeServer) -> None:
    bedrock_server.add(
        response(uses=[tool_use("tu_h", "transfer_to_billing", {"reason": "refund"})]),
        response("Checking.", uses=[tool_use("tu_1", "lookup_order", {"order_id": "A-1"}),
                                    tool_use("tu_2", "order_status", {"order_id": "A-1"})]),
        response("A-1 was charged twice; refunding."),
    )
    runner = Runner(support_team(), model=bedrock_model(bedrock_server))

    result = await runner.run("s1", "charged twice on A-1")

    assert result.output == "A-1 was charged twice; refunding." and result.agent == "billing"
    assert [(r.source, r.target) for r in result.handoffs] == [("triage", "billing")]
    assert bedrock_server.rejections == []
    last = bedrock_server.bodies[-1]
    assert roles(last)[-2:] == [("assistant", ["text", "toolUse", "toolUse"]),
                                ("user", ["toolResult", "toolResult", "cachePoint"])]
    results = [b["toolResult"] for b in last["messages"][-1]["content"] if "toolResult" in b]
    assert [r["toolUseId"] for r in results] == ["tu_1", "tu_2"]
    assert json.loads(results[0]["content"][0]["text"])["charged"] == 2
    assert results[0]["status"] == "success"
    assert "tu_h" not in json.dumps(last)


async def test_reasoning_with_its_signature_goes_back_first_in_its_message(
        bedrock_server: FakeServer) -> None:
    """Adapter level, Claude with thinking on: the reasoning block is kept and sent back
    ahead of the call; the server refuses a current-loop call message without it."""
    thought = thinking("Look the order up.", "sig-bedrock-1")
    bedrock_server.add(
        response(uses=[tool_use("tu_1", "lookup_order", {"order_id": "A-1"})],
                 thoughts=[thought]),
        response("Charged twice."), response("never"))
    model = bedrock_model(bedrock_server, settings=THINKING, retry=RetryPolicy(max_retries=0))
    ask = [UserMessage("was A-1 charged twice?", "billing")]

    first = await model.complete(ModelRequest("billing", "Be brief.", ask, [LOOKUP]))

    assert first.stop == "tool_calls"
    assert first.reasoning == (Reasoning("bedrock", "reasoning_text", {"reasoningText": {
        "text": "Look the order up.", "signature": "sig-bedrock-1"}},
        model="anthropic.claude-test-v1:0"),)
    result = ToolResult("tu_1", "lookup_order", '{"charged": 2}', "billing")
    history = [*ask, AssistantMessage("", "billing", first.tool_calls, first.reasoning),
               result]
    second = await model.complete(ModelRequest("billing", "Be brief.", history, [LOOKUP]))

    assert second.text == "Charged twice."
    assert bedrock_server.bodies[1]["messages"][1]["content"] == [
        thought, tool_use("tu_1", "lookup_order", {"order_id": "A-1"})]
    # the same history without the reasoning block is what Bedrock refuses
    bare = [*ask, AssistantMessage("", "billing", first.tool_calls), result]
    with pytest.raises(Exception, match="Expected `thinking`"):
        await model.complete(ModelRequest("billing", "Be brief.", bare, [LOOKUP]))


async def test_reasoning_goes_only_to_the_model_that_made_it(
        bedrock_server: FakeServer) -> None:
    bedrock_server.add(response("ok"))
    history = [UserMessage("hi", "a"), AssistantMessage("", "a", (
        ToolCall("tu_1", "lookup_order", "{}"),), (
        Reasoning("bedrock", "reasoning_text", {"reasoningText": {"text": "t",
                                                                  "signature": "s"}},
                  model="anthropic.claude-other-v1:0"),
        Reasoning("anthropic", "thinking", {"type": "thinking", "signature": "x"}))),
        ToolResult("tu_1", "lookup_order", "{}", "a")]

    await bedrock_model(bedrock_server).complete(ModelRequest("a", "", history, [LOOKUP]))

    assert roles(bedrock_server.bodies[0])[1] == ("assistant", ["toolUse"])
    assert bedrock_server.rejections == []


async def test_reasoning_round_trip_through_the_runner(bedrock_server: FakeServer) -> None:
    """The full turn with thinking on: the runtime keeps the reasoning block on the
    transcript, and the next request of the loop starts its call message with it."""
    bedrock_server.add(
        response(uses=[tool_use("tu_h", "transfer_to_billing", {"reason": "refund"})],
                 thoughts=[thinking("Billing it is.", "sig-h")]),
        response(uses=[tool_use("tu_1", "lookup_order", {"order_id": "A-1"})],
                 thoughts=[thinking("Look it up.", "sig-1")]),
        response("Refunded."),
    )
    model = bedrock_model(bedrock_server, settings=THINKING)

    result = await Runner(support_team(), model=model).run("s1", "refund A-1")

    assert result.output == "Refunded."
    assert bedrock_server.rejections == []
    assert roles(bedrock_server.bodies[-1])[-2] == ("assistant",
                                                    ["reasoningContent", "toolUse"])


async def test_streamed_text_calls_reasoning_and_usage(bedrock_server: FakeServer) -> None:
    bedrock_server.add(
        stream(uses=[("tu_h", "transfer_to_billing", ['{"reason":', ' "refund"}'])]),
        stream(uses=[("tu_1", "lookup_order", ['{"order_id"', ': "A-7"}'])]),
        stream(["Do", "ne", "."], usage=(40, 9, 32, 0)),
    )
    runner = Runner(support_team(), model=bedrock_model(bedrock_server))

    events = [e async for e in runner.stream("s1", "check A-7")]

    assert [(e.data["agent"], e.data["text"]) for e in events if e.type == "text_delta"] == [
        ("billing", "Do"), ("billing", "ne"), ("billing", ".")]
    assert [json.loads(e.data["arguments"]) for e in events if e.type == "tool_called"] == [
        {"order_id": "A-7"}]
    result = events[-1].result
    assert result.output == "Done."
    assert result.usage_by_agent["billing"].cache_read_tokens == 32
    assert all(r.path.endswith("/converse-stream") for r in bedrock_server.received)
    assert bedrock_server.rejections == []


async def test_a_streamed_reasoning_block_and_a_cut_answer(bedrock_server: FakeServer) -> None:
    bedrock_server.add(stream(["half a sen"], thoughts=[("Think.", "sig-s")],
                              stop="max_tokens"))
    request = ModelRequest("a", "", [UserMessage("hi", "a")], [])

    pieces = [p async for p in bedrock_model(bedrock_server).stream(request)]

    assert pieces[0] == TextDelta("half a sen")
    last = pieces[-1]
    assert isinstance(last, ModelResponse) and last.stop == "length"
    assert [r.data for r in last.reasoning] == [
        {"reasoningText": {"text": "Think.", "signature": "sig-s"}}]


async def test_structured_output_and_tool_choice_in_converse_form(
        bedrock_server: FakeServer) -> None:
    from pydantic import BaseModel

    class Refund(BaseModel):
        order_id: str

    bedrock_server.add(response('{"order_id": "A-1"}'), response("x"))
    model = bedrock_model(bedrock_server)
    spec = output_spec(Refund, "a")
    ask = [UserMessage("hi", "a")]
    await model.complete(ModelRequest("a", "", ask, [], output=spec))
    await model.complete(ModelRequest("a", "", ask, [LOOKUP], tool_choice="lookup_order"))

    fmt = bedrock_server.bodies[0]["outputConfig"]["textFormat"]
    assert fmt["type"] == "json_schema"
    assert json.loads(fmt["structure"]["jsonSchema"]["schema"]) == spec.schema
    assert bedrock_server.bodies[1]["toolConfig"]["toolChoice"] == {
        "tool": {"name": "lookup_order"}}
    assert bedrock_server.rejections == []


async def test_errors_are_mapped_to_codes(bedrock_server: FakeServer) -> None:
    bedrock_server.add(
        status(429, "ThrottlingException", "Too many requests, please wait."),
        response("Made it."),
        status(403, "UnrecognizedClientException", "The security token included in the "
                                                   "request is invalid."),
        status(400, "ValidationException", "Input is too long for requested model."),
        *(status(503, "ServiceUnavailableException", "Bedrock is unable to process your "
                                                     "request.") for _ in range(3)),
        status(408, "ModelTimeoutException", "Model has timed out in processing the request."),
    )
    model = bedrock_model(bedrock_server, retry=RetryPolicy(max_retries=2, base_delay=0.01))
    runner = Runner(support_team(), model=model)
    once = Runner(support_team(), model=bedrock_model(bedrock_server,
                                                      retry=RetryPolicy(max_retries=0)))

    ok = await runner.run("a", "hi")
    errors = [(await runner.run(s, "hi")).error for s in ("b", "c", "d")]
    errors.append((await once.run("e", "hi")).error)

    assert ok.output == "Made it."
    assert [e.code if e else None for e in errors] == [
        "auth_error", "context_length_exceeded", "model_error", "timeout"]
    assert errors[2] is not None and "gave up after 3 attempts" in errors[2].message
    assert len(bedrock_server.received) == 2 + 1 + 1 + 3 + 1


async def test_a_throttling_event_inside_the_stream_is_retried(
        bedrock_server: FakeServer) -> None:
    broken = Reply(events=[{"messageStart": {"role": "assistant"}},
                           {"exception": "throttlingException",
                            "message": "Too many tokens, please wait."}])
    bedrock_server.add(broken, stream(["fine"]))
    request = ModelRequest("a", "", [UserMessage("hi", "a")], [])

    pieces = [p async for p in bedrock_model(bedrock_server).stream(request)]

    assert isinstance(pieces[-1], ModelResponse) and pieces[-1].text == "fine"
    assert len(bedrock_server.received) == 2


async def test_no_credentials_is_an_auth_error(bedrock_server: FakeServer,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")

    result = await Runner(support_team(), model=bedrock_model(bedrock_server)).run("s", "hi")

    assert result.error is not None and result.error.code == "auth_error"
    assert "AWS_ACCESS_KEY_ID" in result.error.message
    assert bedrock_server.received == []


def test_the_model_string_and_its_options() -> None:
    model = get_model("bedrock:us.amazon.nova-pro-v1:0?region=eu-west-1&max_tokens=512")
    assert isinstance(model, BedrockModel) and model.model == "us.amazon.nova-pro-v1:0"
    assert (model.region, model.max_tokens) == ("eu-west-1", 512)


async def test_cache_points_follow_the_model_family_and_can_be_turned_off(
        bedrock_server: FakeServer) -> None:
    bedrock_server.add(*[response("Hi.") for _ in range(4)])
    for name, options in (("amazon.nova-pro-v1:0", {}), ("meta.llama3-70b-instruct-v1:0", {}),
                          ("anthropic.claude-test-v1:0", {"cache": False})):
        await Runner(support_team(), model=bedrock_model(bedrock_server, name, **options)).run(
            name, "hi")
    spec = "bedrock:anthropic.claude-test-v1:0?cache=false"
    assert get_model(spec, endpoint_url=bedrock_server.url).cache is False

    assert bedrock_server.rejections == []  # Llama, which refuses cachePoint, got none
    marked = ["cachePoint" in json.dumps(b) for b in bedrock_server.bodies]
    assert marked == [True, False, False]
