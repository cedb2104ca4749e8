"""Fixtures: fake provider servers on 127.0.0.1, and models of the real SDKs aimed at them."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# `wire` lives beside this folder; make it importable however pytest roots the tests.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wire.anthropic_api import AnthropicWire
from wire.bedrock_api import BedrockWire
from wire.compat_api import AzureWire, DeepSeekWire, GeminiCompatWire
from wire.gemini_api import GeminiWire
from wire.litellm_api import ThinkingChatWire
from wire.openai_api import OpenAIWire
from wire.responses_api import ResponsesWire
from wire.server import FakeServer


@pytest.fixture(autouse=True)
def _no_provider_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # LiteLLM fetches a price list from the internet on import unless told not to.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL", "HANDOFFS_MODEL", "OLLAMA_BASE_URL",
                "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
                "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "AWS_ACCESS_KEY_ID",
                "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION",
                "AWS_DEFAULT_REGION", "AWS_BEARER_TOKEN_BEDROCK", "AWS_ENDPOINT_URL",
                "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY", "OPENAI_API_VERSION"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def openai_server() -> Iterator[FakeServer]:
    server = FakeServer(OpenAIWire()).start()
    yield server
    server.stop()


@pytest.fixture
def anthropic_server() -> Iterator[FakeServer]:
    server = FakeServer(AnthropicWire()).start()
    yield server
    server.stop()


@pytest.fixture
def responses_server() -> Iterator[FakeServer]:
    server = FakeServer(ResponsesWire()).start()
    yield server
    server.stop()


@pytest.fixture
def gemini_server() -> Iterator[FakeServer]:
    server = FakeServer(GeminiWire()).start()
    yield server
    server.stop()


@pytest.fixture
def bedrock_server(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeServer]:
    """A fake Bedrock runtime, with dummy AWS credentials in the environment (boto3 signs
    every request) and no AWS files or instance metadata to find others in."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    server = FakeServer(BedrockWire()).start()
    yield server
    server.stop()


@pytest.fixture
def thinking_server() -> Iterator[FakeServer]:
    server = FakeServer(ThinkingChatWire()).start()
    yield server
    server.stop()


@pytest.fixture
def deepseek_server() -> Iterator[FakeServer]:
    server = FakeServer(DeepSeekWire()).start()
    yield server
    server.stop()


@pytest.fixture
def gemini_compat_server() -> Iterator[FakeServer]:
    """Gemini's OpenAI-compatible endpoint (the `gemini_server` fixture is its own API)."""
    server = FakeServer(GeminiCompatWire()).start()
    yield server
    server.stop()


@pytest.fixture
def azure_server() -> Iterator[FakeServer]:
    server = FakeServer(AzureWire()).start()
    yield server
    server.stop()
