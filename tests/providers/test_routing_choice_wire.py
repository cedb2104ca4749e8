"""The routing choice on the wire: each provider is asked for it in its own structured
form (the route an enum of the allowed agents), through its official SDK, and the
handoff follows."""

from __future__ import annotations

import json
import math
from typing import Any

from handoffs import Agent, Runner, Team
from wire import anthropic_api, bedrock_api, gemini_api, openai_api, responses_api
from wire.clients import (
    anthropic_model,
    bedrock_model,
    gemini_model,
    litellm_model,
    openai_model,
    responses_model,
)
from wire.server import FakeServer

CHOICE = json.dumps({"route": "technical", "reason": "a crash"})
ENUM = ["triage", "billing", "technical"]


def _team() -> Team:
    triage = Agent("triage", routing="choice", handoffs=["billing", "technical"])
    return Team([triage, Agent("billing", description="Charges."),
                 Agent("technical", description="Crashes.")])


def _enums(value: Any) -> list[list[Any]]:
    """Every `enum` list anywhere in a request body (JSON texts inside it decoded)."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            return []
    if isinstance(value, dict):
        found = [value["enum"]] if isinstance(value.get("enum"), list) else []
        return found + [e for v in value.values() for e in _enums(v)]
    if isinstance(value, list):
        return [e for v in value for e in _enums(v)]
    return []


async def _routes(server: FakeServer, model: Any) -> dict[str, Any]:
    result = await Runner(_team(), model=model).run("s", "the app crashes on start")
    assert (result.agent, result.output) == ("technical", "Technical here.")
    assert result.handoffs[0].explanation == "a crash"
    assert server.rejections == []
    first: dict[str, Any] = server.bodies[0]
    assert ENUM in _enums(first)
    assert len(server.bodies) == 2
    return first


async def test_openai_chat_asks_a_strict_json_schema(openai_server: FakeServer) -> None:
    openai_server.add(openai_api.completion(CHOICE), openai_api.completion("Technical here."))
    first = await _routes(openai_server, openai_model(openai_server))
    fmt = first["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    assert "tools" not in first


async def test_anthropic_asks_a_forced_tool(anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        anthropic_api.message(uses=[anthropic_api.tool_use(
            "toolu_1", "final_output", json.loads(CHOICE))]),
        anthropic_api.message("Technical here."))
    first = await _routes(anthropic_server, anthropic_model(anthropic_server))
    assert [t["name"] for t in first["tools"]] == ["final_output"]


async def test_responses_asks_a_text_format(responses_server: FakeServer) -> None:
    responses_server.add(responses_api.response(CHOICE),
                         responses_api.response("Technical here."))
    first = await _routes(responses_server, responses_model(responses_server))
    assert first["text"]["format"]["type"] == "json_schema"


async def test_gemini_asks_a_response_schema(gemini_server: FakeServer) -> None:
    gemini_server.add(gemini_api.response(CHOICE), gemini_api.response("Technical here."))
    first = await _routes(gemini_server, gemini_model(gemini_server))
    assert "application/json" in json.dumps(first)


async def test_bedrock_asks_an_output_config(bedrock_server: FakeServer) -> None:
    bedrock_server.add(bedrock_api.response(CHOICE), bedrock_api.response("Technical here."))
    first = await _routes(bedrock_server, bedrock_model(bedrock_server))
    assert first["outputConfig"]["textFormat"]["type"] == "json_schema"


async def test_litellm_asks_a_json_schema(openai_server: FakeServer) -> None:
    openai_server.add(openai_api.completion(CHOICE), openai_api.completion("Technical here."))
    first = await _routes(openai_server, litellm_model(openai_server))
    assert first["response_format"]["type"] == "json_schema"


# -- the calibrated choice: token probabilities asked and read in each provider's form ----

LEANING = [("bill", math.log(0.95)), ("tech", math.log(0.02)), ("tri", math.log(0.03))]
"""The model's leaning with a content-free message: billing."""
CRASH = [("bill", math.log(0.70)), ("tech", math.log(0.25)), ("tri", math.log(0.05))]
"""With the user's message: billing still first, technical far above its prior."""


def _said(route: str, top: list[tuple[str, float]]) -> tuple[str, list[Any]]:
    """A choice naming `route`, and its tokens: the value split after four letters."""
    text = json.dumps({"route": route, "reason": "r"})
    head, rest = text.split(route, 1)
    return text, [(head, -0.01, []), (route[:4], top[0][1], top),
                  (route[4:] + rest, -0.01, [])]


choice, crash = _said("billing", CRASH)
prior, leaning = _said("billing", LEANING)


def _calibrated_team() -> Team:
    triage = Agent("triage", routing="calibrated", handoffs=["billing", "technical"])
    return Team([triage, Agent("billing", description="Charges."),
                 Agent("technical", description="Crashes.")])


async def _calibrated(server: FakeServer, model: Any) -> list[dict[str, Any]]:
    result = await Runner(_calibrated_team(), model=model).run("s", "the app crashes")
    assert (result.agent, result.output) == ("technical", "Technical here.")
    assert server.rejections == []
    assert len(server.bodies) == 5  # the choice, three content-free messages, the answer
    return server.bodies


async def test_openai_chat_calibrates_the_choice_by_its_top_logprobs(
        openai_server: FakeServer) -> None:
    openai_server.add(openai_api.completion(choice, logprobs=crash),
                      *[openai_api.completion(prior, logprobs=leaning)] * 3,
                      openai_api.completion("Technical here."))
    bodies = await _calibrated(openai_server, openai_model(openai_server))
    assert [(b.get("logprobs"), b.get("top_logprobs")) for b in bodies] == [(True, 20)] * 4 + [
        (None, None)]
    # the empty content-free message as the adapter sends an empty user message
    assert [b["messages"][-1]["content"] for b in bodies[1:4]] == [
        "N/A", "[MASK]", "(continue)"]


async def test_responses_calibrates_the_choice_by_its_output_text_logprobs(
        responses_server: FakeServer) -> None:
    responses_server.add(responses_api.response(choice, logprobs=crash),
                         *[responses_api.response(prior, logprobs=leaning)] * 3,
                         responses_api.response("Technical here."))
    bodies = await _calibrated(responses_server, responses_model(responses_server))
    assert all("message.output_text.logprobs" in b["include"] and b["top_logprobs"] == 20
               for b in bodies[:4])
    assert "top_logprobs" not in bodies[4]
    assert "message.output_text.logprobs" not in bodies[4]["include"]


async def test_gemini_calibrates_the_choice_by_its_logprobs_result(
        gemini_server: FakeServer) -> None:
    gemini_server.add(gemini_api.response(choice, logprobs=crash),
                      *[gemini_api.response(prior, logprobs=leaning)] * 3,
                      gemini_api.response("Technical here."))
    bodies = await _calibrated(gemini_server, gemini_model(gemini_server))
    configs = [gemini_api.canon(b).get("generationConfig", {}) for b in bodies]
    assert [(c.get("responseLogprobs"), c.get("logprobs")) for c in configs] == [
        (True, 20)] * 4 + [(None, None)]


async def test_anthropic_has_no_token_probabilities_and_keeps_the_plain_choice(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        anthropic_api.message(uses=[anthropic_api.tool_use(
            "toolu_1", "final_output", {"route": "billing", "reason": "r"})]),
        anthropic_api.message("Billing here."))
    result = await Runner(_calibrated_team(), model=anthropic_model(anthropic_server)).run(
        "s", "the app crashes")
    assert (result.agent, result.output) == ("billing", "Billing here.")
    assert anthropic_server.rejections == [] and len(anthropic_server.bodies) == 2
