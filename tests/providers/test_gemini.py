"""GeminiModel (`gemini:`) on the official `google-genai` SDK, against a local server
that applies the Gemini API's rules (function call turns, response counts, Gemini 3's
thought signatures) and records every request."""

from __future__ import annotations

import json
from typing import Any

import pytest

from handoffs import Agent, HandoffsError, Runner, RunStatus, Team, get_model
from handoffs.core.messages import AssistantMessage, Reasoning, ToolCall, ToolResult, UserMessage
from handoffs.core.output import output_spec
from handoffs.core.tools import ToolSpec
from handoffs.models.base import ModelRequest, ModelResponse, TextDelta
from handoffs.models.gemini import SKIP_SIGNATURE, GeminiModel
from handoffs.models.retry import RetryPolicy
from wire.clients import gemini_model, responses_model
from wire.gemini_api import call, canon, response, status, stream
from wire.responses_api import call as rcall
from wire.responses_api import reasoning
from wire.responses_api import response as rresponse
from wire.server import FakeServer
from wire.teams import lookup_order, order_status, support_team

LOOKUP = ToolSpec("lookup_order", "Look up an order.", {
    "type": "object", "properties": {"order_id": {"type": "string"}},
    "required": ["order_id"], "additionalProperties": False})
SIG_1 = "c2lnbmF0dXJlLW9uZQ=="  # URL-safe base64, as the API and the SDK write bytes
SIG_2 = "c2lnbmF0dXJlLXR3bw=="
SIG_3 = "c2lnbmF0dXJlLXRocmVl"


def parts(body: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """Each content's role and the kinds of its parts."""
    return [(c["role"], [next(k for k in p if k != "thoughtSignature") for p in c["parts"]])
            for c in canon(body)["contents"]]


def bodies(server: FakeServer) -> list[dict[str, Any]]:
    """The requests the server accepted, as proto JSON reads them (see `canon`)."""
    return [canon(b) for b in server.bodies]


async def test_a_text_answer_with_usage_and_the_request_in_gemini_form(
        gemini_server: FakeServer) -> None:
    gemini_server.add(response("Hello! How can I help?", usage=(300, 20, 256, 48)))
    runner = Runner(support_team(), model=gemini_model(gemini_server))

    result = await runner.run("s1", "hi")

    assert result.status is RunStatus.COMPLETED and result.output == "Hello! How can I help?"
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens) == (300, 68)  # thoughts are output
    assert (usage.cache_read_tokens, usage.reasoning_tokens) == (256, 48)
    sent = gemini_server.received[0]
    assert sent.path.endswith("/models/gemini-test:generateContent")
    assert sent.headers["x-goog-api-key"] == "test"
    body = canon(sent.body)
    assert body["systemInstruction"]["parts"][0]["text"].startswith(
        "Route customers to billing.")
    assert body["contents"] == [{"role": "user", "parts": [{"text": "hi"}]}]
    declaration = body["tools"][0]["functionDeclarations"][0]
    assert declaration["name"] == "transfer_to_billing"
    assert declaration["parametersJsonSchema"]["type"] == "object"


async def test_a_handoff_turn_with_tools_through_the_runner(gemini_server: FakeServer) -> None:
    gemini_server.add(
        response(calls=[call("transfer_to_billing", {"reason": "refund"})]),
        response(calls=[call("lookup_order", {"order_id": "A-1"}),
                        call("order_status", {"order_id": "A-1"})]),
        response("A-1 was charged twice; refunding."),
    )
    runner = Runner(support_team(), model=gemini_model(gemini_server))

    result = await runner.run("s1", "charged twice on A-1")

    assert result.output == "A-1 was charged twice; refunding." and result.agent == "billing"
    assert [(r.source, r.target) for r in result.handoffs] == [("triage", "billing")]
    assert gemini_server.rejections == []
    last = bodies(gemini_server)[-1]
    assert parts(last)[-2:] == [("model", ["functionCall", "functionCall"]),
                                ("user", ["functionResponse", "functionResponse"])]
    calls = [p["functionCall"] for p in last["contents"][-2]["parts"]]
    answers = [p["functionResponse"] for p in last["contents"][-1]["parts"]]
    assert [c["id"] for c in calls] == [a["id"] for a in answers]  # ids made for the pair
    assert json.loads(answers[0]["response"]["output"])["charged"] == 2
    assert "transfer_to_billing" not in json.dumps(last["contents"])


async def test_a_thought_signature_goes_back_on_the_part_it_came_on(
        gemini_server: FakeServer) -> None:
    """Adapter level, on a Gemini 3 model: the signature is kept per call and sent back
    on that call's part; without it the server refuses the request."""
    gemini_server.add(
        response(calls=[call("lookup_order", {"order_id": "A-1"}, "fc-1", SIG_1)],
                 usage=(40, 10, 0, 30)),
        response("Charged twice.", text_signature=SIG_2))
    model = gemini_model(gemini_server, "gemini-3-pro-test")
    ask = [UserMessage("was A-1 charged twice?", "billing")]

    first = await model.complete(ModelRequest("billing", "Be brief.", ask, [LOOKUP]))

    assert first.tool_calls == (ToolCall("fc-1", "lookup_order", '{"order_id": "A-1"}'),)
    assert first.stop == "tool_calls"
    assert first.reasoning == (Reasoning("gemini", "thought_signature",
                                         {"thought_signature": SIG_1},
                                         model="gemini-3-pro-test", call_id="fc-1"),)
    history = [*ask, AssistantMessage("", "billing", first.tool_calls, first.reasoning),
               ToolResult("fc-1", "lookup_order", '{"charged": 2}', "billing")]
    second = await model.complete(ModelRequest("billing", "Be brief.", history, [LOOKUP]))

    assert second.text == "Charged twice." and second.stop == "end"
    assert second.reasoning[0].call_id is None  # the answer's own signature, kept too
    assert gemini_server.rejections == []
    sent = bodies(gemini_server)[1]["contents"][1]["parts"][0]
    assert sent == {"functionCall": {"id": "fc-1", "name": "lookup_order",
                                     "args": {"order_id": "A-1"}},
                    "thoughtSignature": SIG_1}


async def test_gemini_3_refuses_a_current_turn_call_without_its_signature(
        gemini_server: FakeServer) -> None:
    """The rule the adapter keeps: shown by sending the same history without it."""
    history = [UserMessage("hi", "a"),
               AssistantMessage("", "a", (ToolCall("fc-1", "lookup_order", "{}"),)),
               ToolResult("fc-1", "lookup_order", "{}", "a")]
    gemini_server.add(response("ok"))
    model = gemini_model(gemini_server, "gemini-3-pro-test",
                         retry=RetryPolicy(max_retries=0))
    # Another provider's call: the documented skip marker stands in for a signature.
    await model.complete(ModelRequest("a", "", history, [LOOKUP]))
    assert bodies(gemini_server)[0]["contents"][1]["parts"][0]["thoughtSignature"] == \
        SKIP_SIGNATURE

    from handoffs.models import gemini

    body = gemini_model(gemini_server, "gemini-2.5-test").body(
        ModelRequest("a", "", history, [LOOKUP]))
    assert "thought_signature" not in body["contents"][1]["parts"][0]  # 2.x: none needed
    unsigned = gemini.gemini_contents(history, "gemini-3-pro-test", sign=False)
    client = model._client()
    with pytest.raises(Exception, match="missing a thought_signature"):
        await client.aio.models.generate_content(model="gemini-3-pro-test",
                                                 contents=unsigned)


async def test_signatures_round_trip_through_the_runner(gemini_server: FakeServer) -> None:
    """The full turn on Gemini 3: the runtime keeps each response's signatures on the
    transcript, and every later request of the turn carries the real ones back."""
    gemini_server.add(
        response(calls=[call("transfer_to_billing", {"reason": "refund"}, "fc-h", SIG_1)]),
        response(calls=[call("lookup_order", {"order_id": "A-1"}, "fc-1", SIG_2)]),
        response("Refunded."),
    )
    runner = Runner(support_team(), model=gemini_model(gemini_server, "gemini-3-pro-test"))

    result = await runner.run("s1", "refund A-1")

    assert result.output == "Refunded."
    assert gemini_server.rejections == []
    last = bodies(gemini_server)[-1]["contents"]
    signed = [p for c in last for p in c["parts"] if "functionCall" in p]
    assert [(p["functionCall"]["id"], p["thoughtSignature"]) for p in signed] == [
        ("fc-1", SIG_2)]


async def test_a_handoff_from_gemini_to_openai_and_back_keeps_each_ones_reasoning_apart(
        gemini_server: FakeServer, responses_server: FakeServer) -> None:
    """Gemini's signatures never reach OpenAI and OpenAI's encrypted reasoning never
    reaches Gemini; each gets its own back (`history="full"`: both see every call)."""
    triage = Agent("triage", instructions="Route customers.", tools=[order_status],
                   handoffs=["billing"], model=gemini_model(gemini_server,
                                                            "gemini-3-pro-test"))
    billing = Agent("billing", instructions="Handle billing.", tools=[lookup_order],
                    handoffs=["triage"], model=responses_model(responses_server))
    team = Team([triage, billing], entry="triage")
    gemini_server.add(
        response(calls=[call("order_status", {"order_id": "A-1"}, "fc-s", SIG_1)]),
        response(calls=[call("transfer_to_billing", {"reason": "refund"}, "fc-h", SIG_2)]),
        response("Billing refunded A-1.", text_signature=SIG_3),
    )
    responses_server.add(
        rresponse(calls=[rcall("call_l", "lookup_order", {"order_id": "A-1"})],
                  thoughts=[reasoning("rs_1", "gAAAA-openai-1")]),
        rresponse(calls=[rcall("call_b", "transfer_to_triage", {"reason": "done"})],
                  thoughts=[reasoning("rs_2", "gAAAA-openai-2")]),
    )

    result = await Runner(team, history="full").run("s1", "refund A-1")

    assert result.output == "Billing refunded A-1."
    assert gemini_server.rejections == [] and responses_server.rejections == []
    for body in responses_server.bodies:
        text = json.dumps(body)
        assert "thoughtSignature" not in text and "thought_signature" not in text
        assert SIG_1 not in text and SIG_2 not in text
    back = bodies(gemini_server)[-1]
    text = json.dumps(back)
    assert "gAAAA-openai" not in text and "rs_1" not in text
    calls = {p["functionCall"]["name"]: p.get("thoughtSignature")
             for c in back["contents"] for p in c["parts"] if "functionCall" in p}
    # OpenAI's call reaches Gemini 3 with the documented skip marker, not a signature;
    # Gemini's own call carries its own signature (once the runtime keeps it).
    assert calls["lookup_order"] == SKIP_SIGNATURE
    assert calls["order_status"] == SIG_1


async def test_streamed_text_and_calls(gemini_server: FakeServer) -> None:
    gemini_server.add(
        stream(calls=[call("transfer_to_billing", {"reason": "refund"})]),
        stream(calls=[call("lookup_order", {"order_id": "A-7"})]),
        stream(["Do", "ne", "."], usage=(40, 9, 32, 4)),
    )
    runner = Runner(support_team(), model=gemini_model(gemini_server))

    events = [e async for e in runner.stream("s1", "check A-7")]

    assert [(e.data["agent"], e.data["text"]) for e in events if e.type == "text_delta"] == [
        ("billing", "Do"), ("billing", "ne"), ("billing", ".")]
    assert [e.data["tool"] for e in events if e.type == "tool_called"] == ["lookup_order"]
    result = events[-1].result
    assert result.output == "Done."
    billing = result.usage_by_agent["billing"]
    assert (billing.cache_read_tokens, billing.reasoning_tokens) == (32, 4)
    assert all(r.path.endswith(":streamGenerateContent?alt=sse")
               for r in gemini_server.received)
    assert gemini_server.rejections == []


async def test_a_stream_cut_by_the_output_limit_says_length(gemini_server: FakeServer) -> None:
    gemini_server.add(stream(["half a sen"], finish="MAX_TOKENS"))
    request = ModelRequest("a", "", [UserMessage("hi", "a")], [])

    pieces = [p async for p in gemini_model(gemini_server).stream(request)]

    assert pieces[0] == TextDelta("half a sen")
    assert isinstance(pieces[-1], ModelResponse) and pieces[-1].stop == "length"


async def test_structured_output_and_tool_choice_in_gemini_form(
        gemini_server: FakeServer) -> None:
    from pydantic import BaseModel

    class Refund(BaseModel):
        order_id: str

    gemini_server.add(response('{"order_id": "A-1"}'), response("x"))
    model = gemini_model(gemini_server)
    spec = output_spec(Refund, "a")
    ask = [UserMessage("hi", "a")]
    await model.complete(ModelRequest("a", "", ask, [], output=spec))
    await model.complete(ModelRequest("a", "", ask, [LOOKUP], tool_choice="lookup_order"))

    config = bodies(gemini_server)[0]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"] == spec.schema
    assert bodies(gemini_server)[1]["toolConfig"] == {"functionCallingConfig": {
        "mode": "ANY", "allowedFunctionNames": ["lookup_order"]}}
    assert gemini_server.rejections == []


async def test_errors_are_mapped_to_codes(gemini_server: FakeServer) -> None:
    retry_info = [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "0.3s"}]
    gemini_server.add(
        status(429, "Resource has been exhausted (e.g. check quota).", details=retry_info),
        response("Made it."),
        status(400, "API key not valid. Please pass a valid API key."),
        status(403, "Permission denied."),
        status(400, "The input token count (1200000) exceeds the maximum number of tokens "
                    "allowed (1048576)."),
        *(status(503, "The model is overloaded. Please try again later.") for _ in range(3)),
    )
    model = gemini_model(gemini_server, retry=RetryPolicy(max_retries=2, base_delay=0.01))
    runner = Runner(support_team(), model=model)

    ok = await runner.run("a", "hi")
    errors = [(await runner.run(s, "hi")).error for s in ("b", "c", "d", "e")]

    assert ok.output == "Made it."
    first, second = gemini_server.received[:2]
    assert second.at - first.at >= 0.3  # Google's RetryInfo delay, honoured
    assert [e.code if e else None for e in errors] == [
        "model_error", "auth_error", "context_length_exceeded", "model_error"]
    assert errors[3] is not None and "gave up after 3 attempts" in errors[3].message
    assert len(gemini_server.received) == 2 + 1 + 1 + 1 + 3


async def test_a_malformed_function_call_is_the_models_fault(gemini_server: FakeServer) -> None:
    gemini_server.add(response("", finish="MALFORMED_FUNCTION_CALL"))
    with pytest.raises(HandoffsError) as caught:
        await gemini_model(gemini_server).complete(
            ModelRequest("a", "", [UserMessage("hi", "a")], [LOOKUP]))
    assert caught.value.code == "malformed_output"


def test_the_model_string_options_and_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    model = get_model("gemini:gemini-2.5-flash?timeout=30")
    assert isinstance(model, GeminiModel) and model.model == "gemini-2.5-flash"
    assert model.timeout == 30 and model.vertexai is False
    vertex = get_model("gemini:gemini-2.5-flash?vertexai=true&project=p&location=europe-west4")
    assert isinstance(vertex, GeminiModel) and vertex.vertexai and vertex.project == "p"
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    assert get_model("gemini:x").vertexai is True  # type: ignore[attr-defined]


async def test_no_api_key_fails_with_auth_error_without_a_request(
        gemini_server: FakeServer) -> None:
    model = GeminiModel("gemini-test", base_url=gemini_server.url)
    result = await Runner(support_team(), model=model).run("s", "hi")
    assert result.error is not None and result.error.code == "auth_error"
    assert "GEMINI_API_KEY" in result.error.message
    assert gemini_server.received == []


async def test_vertex_ai_express_mode_through_the_same_sdk(gemini_server: FakeServer) -> None:
    gemini_server.add(response("from Vertex AI"))
    model = GeminiModel("gemini-2.5-flash", vertexai=True, api_key="vertex-key",
                        base_url=gemini_server.url, retry=RetryPolicy(max_retries=0))

    answer = await model.complete(ModelRequest("a", "", [UserMessage("hi", "a")], []))

    assert answer.text == "from Vertex AI"
    sent = gemini_server.received[0]
    assert sent.path == "/v1beta1/publishers/google/models/gemini-2.5-flash:generateContent"
    assert sent.headers["x-goog-api-key"] == "vertex-key"
