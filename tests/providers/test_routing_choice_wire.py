"""The routing choice on the wire: each provider is asked for it in its own structured
form (the route an enum of the allowed agents), through its official SDK, and the
handoff follows."""

from __future__ import annotations

import json
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
