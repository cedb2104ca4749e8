"""Our models on the real SDK clients, aimed at a fake server."""

from __future__ import annotations

from typing import Any

from handoffs.models.anthropic import AnthropicModel
from handoffs.models.bedrock import BedrockModel
from handoffs.models.gemini import GeminiModel
from handoffs.models.litellm import LiteLLMModel
from handoffs.models.openai import OpenAIModel
from handoffs.models.responses import ResponsesModel
from handoffs.models.retry import RetryPolicy

from .server import FakeServer

FAST = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05)
"""Backoff short enough for tests; a Retry-After is still honoured as the server says."""


def openai_model(server: FakeServer, name: str = "gpt-test", **options: Any) -> OpenAIModel:
    options.setdefault("retry", FAST)
    return OpenAIModel(name, base_url=server.url + "/v1", api_key="test", **options)


def anthropic_model(server: FakeServer, name: str = "claude-test", **options: Any
                    ) -> AnthropicModel:
    options.setdefault("retry", FAST)
    return AnthropicModel(name, base_url=server.url, api_key="test", **options)


def responses_model(server: FakeServer, model: str = "o4-mini-test", **options: Any
                    ) -> ResponsesModel:
    options.setdefault("retry", FAST)
    return ResponsesModel(model, base_url=server.url + "/v1", api_key="test", **options)


def gemini_model(server: FakeServer, model: str = "gemini-test", **options: Any
                 ) -> GeminiModel:
    options.setdefault("retry", FAST)
    return GeminiModel(model, base_url=server.url, api_key="test", **options)


def bedrock_model(server: FakeServer, model: str = "anthropic.claude-test-v1:0",
                  **options: Any) -> BedrockModel:
    options.setdefault("retry", FAST)
    return BedrockModel(model, region="us-east-1", endpoint_url=server.url, **options)


def litellm_model(server: FakeServer, model: str = "openai/gpt-test", **options: Any
                  ) -> LiteLLMModel:
    options.setdefault("retry", FAST)
    return LiteLLMModel(model, api_base=server.url + "/v1", api_key="test", **options)
