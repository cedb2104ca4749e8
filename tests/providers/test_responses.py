"""ResponsesModel (`openai-responses:`) on the official `openai` SDK, against a local
server that applies the Responses API's rules for stateless clients and records every
request."""

from __future__ import annotations

import json

import pytest

from handoffs import Runner, RunStatus, get_model
from handoffs.core.messages import AssistantMessage, Reasoning, ToolCall, ToolResult, UserMessage
from handoffs.core.tools import ToolSpec
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta
from handoffs.models.responses import ResponsesModel
from handoffs.models.retry import RetryPolicy
from wire.clients import responses_model
from wire.responses_api import ResponsesWire, call, reasoning, response, status, stream
from wire.server import FakeServer, Reply
from wire.teams import support_team

LOOKUP = ToolSpec("lookup_order", "Look up an order.", {
    "type": "object", "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"], "additionalProperties": False})
OPEN = ToolSpec("search", "Search.", {
    "type": "object", "properties": {"q": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["q"]})


async def test_a_stateless_request_with_usage_of_cached_and_reasoning_tokens(
        responses_server: FakeServer) -> None:
    responses_server.add(response("Hello! How can I help?", usage=(300, 80, 256, 64)))
    runner = Runner(support_team(), model=responses_model(responses_server))

    result = await runner.run("s1", "hi")

    assert result.status is RunStatus.COMPLETED and result.output == "Hello! How can I help?"
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens) == (300, 80)
    assert (usage.cache_read_tokens, usage.reasoning_tokens) == (256, 64)
    body = responses_server.bodies[0]
    assert body["store"] is False and "previous_response_id" not in body
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["instructions"].startswith("Route customers to billing.")
    assert body["input"] == [{"role": "user", "content": "hi"}]
    assert body["tools"][0]["name"] == "transfer_to_billing"
    assert body["parallel_tool_calls"] is False


async def test_a_handoff_turn_with_tools_through_the_runner(
        responses_server: FakeServer) -> None:
    responses_server.add(
        response(calls=[call("call_h", "transfer_to_billing", {"reason": "refund"})]),
        response(calls=[call("call_1", "lookup_order", {"order_id": "A-1"}),
                        call("call_2", "order_status", {"order_id": "A-1"})]),
        response("A-1 was charged twice; refunding."),
    )
    runner = Runner(support_team(), model=responses_model(responses_server))

    result = await runner.run("s1", "charged twice on A-1")

    assert result.output == "A-1 was charged twice; refunding." and result.agent == "billing"
    assert [(r.source, r.target) for r in result.handoffs] == [("triage", "billing")]
    assert responses_server.rejections == []
    last = responses_server.bodies[-1]
    assert last["instructions"].startswith("Answer billing questions.")
    kinds = [(i.get("type", "message"), i.get("call_id")) for i in last["input"]]
    assert kinds[-4:] == [("function_call", "call_1"), ("function_call", "call_2"),
                          ("function_call_output", "call_1"),
                          ("function_call_output", "call_2")]
    assert "call_h" not in json.dumps(last)  # the accepted transfer is never replayed
    output = last["input"][-2]
    assert json.loads(output["output"])["charged"] == 2
    # each tool strict where its schema allows it, and `strict` said either way
    strict = {t["name"]: t["strict"] for t in last["tools"]}
    assert strict["lookup_order"] is True and strict["order_status"] is True
    assert set(strict.values()) <= {True, False}


async def test_encrypted_reasoning_goes_back_with_the_call_it_led_to(
        responses_server: FakeServer) -> None:
    """Adapter level: the reasoning item is kept on the response and, from the
    transcript's assistant message, sent back verbatim before its call."""
    thought = reasoning("rs_1", "gAAAA-secret-1", summary="Look the order up first.")
    responses_server.add(
        response(calls=[call("call_1", "lookup_order", {"order_id": "A-1"})],
                 thoughts=[thought], usage=(50, 40, 0, 32)),
        response("Charged twice."))
    model = responses_model(responses_server)
    ask = [UserMessage("was A-1 charged twice?", "billing")]

    first = await model.complete(ModelRequest("billing", "Be brief.", ask, [LOOKUP]))

    assert first.tool_calls == (ToolCall("call_1", "lookup_order", '{"order_id": "A-1"}'),)
    assert first.stop == "tool_calls"
    assert first.reasoning == (Reasoning("openai-responses", "reasoning_item", thought,
                                         model="o4-mini-test"),)
    history = [*ask, AssistantMessage("", "billing", first.tool_calls, first.reasoning),
               ToolResult("call_1", "lookup_order", '{"charged": 2}', "billing")]
    second = await model.complete(ModelRequest("billing", "Be brief.", history, [LOOKUP]))

    assert second.text == "Charged twice." and second.stop == "end"
    assert responses_server.rejections == []
    sent = responses_server.bodies[1]["input"]
    assert sent[1] == thought
    assert sent[2] == {"type": "function_call", "call_id": "call_1", "name": "lookup_order",
                       "arguments": '{"order_id": "A-1"}'}


async def test_reasoning_is_sent_only_to_the_model_that_made_it(
        responses_server: FakeServer) -> None:
    responses_server.add(response("ok"), response("ok"), response("ok"))
    item = reasoning("rs_9", "gAAAA-other")
    history = [UserMessage("hi", "billing"),
               AssistantMessage("", "a", (ToolCall("c1", "lookup_order", "{}"),), (
                   Reasoning("openai-responses", "reasoning_item", item, model="o3"),
                   Reasoning("anthropic", "thinking", {"type": "thinking", "thinking": "x",
                                                       "signature": "s"}))),
               ToolResult("c1", "lookup_order", "{}", "a")]

    await responses_model(responses_server).complete(ModelRequest("a", "", history, [LOOKUP]))
    # a model that does not reason neither asks for reasoning nor sends any back
    plain = responses_model(responses_server, model="gpt-4.1-test")
    await plain.complete(ModelRequest("a", "", history, [LOOKUP]))

    for body in responses_server.bodies:
        assert all(i.get("type") != "reasoning" for i in body["input"])
        assert "signature" not in json.dumps(body)
    assert "include" not in responses_server.bodies[1]
    assert responses_server.rejections == []


async def test_encrypted_reasoning_round_trip_through_the_runner(
        responses_server: FakeServer) -> None:
    """The full turn: the runtime keeps `ModelResponse.reasoning` on the transcript's
    assistant message, and the next request of the same agent carries it back."""
    thought = reasoning("rs_7", "gAAAA-secret-7")
    responses_server.add(
        response(calls=[call("call_h", "transfer_to_billing", {"reason": "refund"})]),
        response(calls=[call("call_1", "lookup_order", {"order_id": "A-1"})],
                 thoughts=[thought]),
        response("Refunded."),
    )
    runner = Runner(support_team(), model=responses_model(responses_server))

    result = await runner.run("s1", "refund A-1")

    assert result.output == "Refunded."
    assert responses_server.rejections == []
    sent = responses_server.bodies[-1]["input"]
    index = sent.index(thought)
    assert sent[index + 1]["type"] == "function_call"
    assert sent[index + 1]["call_id"] == "call_1"


async def test_streamed_text_and_calls_and_the_final_usage(
        responses_server: FakeServer) -> None:
    responses_server.add(
        stream(calls=[call("call_h", "transfer_to_billing", {"reason": "refund"})]),
        stream(calls=[call("call_1", "lookup_order", {"order_id": "A-7"})],
               thoughts=[reasoning("rs_2", "gAAAA-s2")]),
        stream(["Do", "ne", "."], usage=(40, 9, 32, 0)),
    )
    runner = Runner(support_team(), model=responses_model(responses_server))

    events = [e async for e in runner.stream("s1", "check A-7")]

    assert [(e.data["agent"], e.data["text"]) for e in events if e.type == "text_delta"] == [
        ("billing", "Do"), ("billing", "ne"), ("billing", ".")]
    assert [e.data["tool"] for e in events if e.type == "tool_called"] == ["lookup_order"]
    result = events[-1].result
    assert result.output == "Done."
    assert result.usage_by_agent["billing"].cache_read_tokens == 32
    assert all(b["stream"] is True for b in responses_server.bodies)
    assert responses_server.rejections == []


async def test_a_streamed_response_keeps_its_reasoning_and_stop() -> None:
    server = FakeServer(ResponsesWire()).start()
    try:
        thought = reasoning("rs_3", "gAAAA-s3")
        server.add(stream(["cut"], thoughts=[thought], incomplete="max_output_tokens"))
        pieces = [p async for p in responses_model(server).stream(
            ModelRequest("a", "", [UserMessage("hi", "billing")], []))]
    finally:
        server.stop()
    assert pieces[0] == TextDelta("cut")
    last = pieces[-1]
    assert isinstance(last, ModelResponse)
    assert last.text == "cut" and last.stop == "length"
    assert [r.data for r in last.reasoning] == [thought]


async def test_structured_output_and_tool_choice_in_responses_form(
        responses_server: FakeServer) -> None:
    from pydantic import BaseModel

    from handoffs.core.output import output_spec

    class Refund(BaseModel):
        order_id: str
        amount: float

    responses_server.add(response('{"order_id": "A-1", "amount": 5.0}'), response("x"))
    model = responses_model(responses_server)
    spec = output_spec(Refund, "a")
    await model.complete(ModelRequest("a", "", [UserMessage("hi", "billing")], [], output=spec))
    await model.complete(ModelRequest("a", "", [UserMessage("hi", "billing")], [LOOKUP, OPEN],
                                      tool_choice="lookup_order"))

    fmt = responses_server.bodies[0]["text"]["format"]
    assert fmt["type"] == "json_schema" and fmt["name"] == spec.name
    assert fmt["schema"] == spec.schema
    second = responses_server.bodies[1]
    assert second["tool_choice"] == {"type": "function", "name": "lookup_order"}
    # a schema strict mode refuses is sent with strict false, not left to default true
    assert [t["strict"] for t in second["tools"]] == [True, False]
    assert responses_server.rejections == []


async def test_previous_response_id_is_never_sent(responses_server: FakeServer) -> None:
    responses_server.add(response("ok"))
    model = responses_model(responses_server, settings={"previous_response_id": "resp_0",
                                                        "store": True})

    await model.complete(ModelRequest("a", "", [UserMessage("hi", "billing")], []))

    body = responses_server.bodies[0]
    assert "previous_response_id" not in body and body["store"] is False


async def test_errors_are_mapped_to_codes(responses_server: FakeServer) -> None:
    responses_server.add(
        status(429, "Rate limit reached", {"retry-after": "0.2"},
               err_code="rate_limit_exceeded"), response("Made it."),
        status(401, "Incorrect API key provided"),
        status(400, "Your input exceeds the context window of this model.",
               err_code="context_length_exceeded"),
        *(status(500, "The server had an error") for _ in range(3)),
    )
    model = responses_model(responses_server, retry=RetryPolicy(max_retries=2,
                                                                base_delay=0.01))
    runner = Runner(support_team(), model=model)

    ok = await runner.run("a", "hi")
    codes = [(await runner.run(s, "hi")).error for s in ("b", "c", "d")]

    assert ok.output == "Made it."
    first, second = responses_server.received[:2]
    assert second.at - first.at >= 0.2
    assert [e.code if e else None for e in codes] == ["auth_error", "context_length_exceeded",
                                                      "model_error"]
    assert codes[2] is not None and "gave up after 3 attempts" in codes[2].message
    assert len(responses_server.received) == 2 + 1 + 1 + 3


async def test_an_error_event_inside_a_stream_is_classified(
        responses_server: FakeServer) -> None:
    events = [{"type": "response.created", "sequence_number": 1, "response": {
                  "id": "resp_1", "object": "response", "created_at": 1, "status":
                  "in_progress", "model": "o4-mini-test", "output": [],
                  "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}},
              {"type": "error", "sequence_number": 2, "code": "rate_limit_exceeded",
               "message": "Rate limit reached", "param": None}]
    responses_server.add(Reply(events=events), Reply(events=events), stream(["fine"]))
    model = responses_model(responses_server)

    request = ModelRequest("a", "", [UserMessage("hi", "billing")], [])
    pieces = [p async for p in model.stream(request)]

    assert pieces[-1].text == "fine"  # type: ignore[union-attr]
    assert len(responses_server.received) == 3  # retried: rate limits pass


def test_the_model_string_and_its_options(monkeypatch: object) -> None:
    model = get_model("openai-responses:gpt-5-mini?api_key=k&reasoning_items=false")
    assert isinstance(model, ResponsesModel) and model.model == "gpt-5-mini"
    assert model.reasoning_items is False
    reasoner = get_model("openai-responses:o3", api_key="k")
    assert isinstance(reasoner, ResponsesModel) and reasoner.reasoning_items is True


async def test_no_key_fails_before_a_request_unless_a_server_is_named(
        responses_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    result = await Runner(support_team(), model=ResponsesModel("gpt-5-mini")).run("s", "hi")
    assert result.error is not None and result.error.code == "auth_error"
    assert "OPENAI_API_KEY" in result.error.message

    monkeypatch.setenv("OPENAI_BASE_URL", responses_server.url + "/v1")  # vLLM, Ollama
    responses_server.add(response("local"))
    local = await Runner(support_team(), model=ResponsesModel("qwen3")).run("s", "hi")
    assert local.output == "local"
    assert responses_server.received[0].headers["authorization"] == "Bearer unused"
