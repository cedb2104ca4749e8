"""Model strings, the default model from the environment, and the optional extras."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from handoffs import Agent, HandoffsError, Runner, Team
from handoffs.models.anthropic import AnthropicModel
from handoffs.models.openai import OpenAIModel
from handoffs.models.registry import get_model
from wire.anthropic_api import message
from wire.openai_api import completion
from wire.server import FakeServer
from wire.teams import support_team


def test_model_strings_resolve_to_adapters(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    openai = get_model("openai:gpt-4.1-mini")
    assert isinstance(openai, OpenAIModel) and openai.model == "gpt-4.1-mini"
    assert openai.base_url is None
    claude = get_model("anthropic:claude-sonnet-4-6")
    assert isinstance(claude, AnthropicModel) and claude.model == "claude-sonnet-4-6"
    ollama = get_model("ollama:llama3.2")
    assert isinstance(ollama, OpenAIModel) and ollama.model == "llama3.2"
    assert ollama.base_url == "http://localhost:11434/v1" and ollama.provider == "ollama"


def test_unknown_provider_and_bad_strings_say_what_is_known() -> None:
    with pytest.raises(HandoffsError, match="known: anthropic, azure, bedrock, gemini, "
                                            "litellm, ollama, openai, openai-responses"):
        get_model("gemenai:pro")
    with pytest.raises(HandoffsError, match="provider:name"):
        get_model("gpt-4")


@pytest.mark.parametrize(("spec", "says"), [
    ("anthropic:claude-sonnet-4-6?foo=1",
     "AnthropicModel has no option 'foo'; it takes api_key, base_url, "),
    ("ollama:qwen2.5:0.5b?text_tool_calls=maybe",
     "the option 'text_tool_calls' takes true or false, not 'maybe'"),
    ("openai:gpt-4.1-mini?timeout=soon", "the option 'timeout' takes float, not 'soon'"),
])
def test_a_model_option_that_does_not_fit_is_refused_by_name(spec: str, says: str) -> None:
    with pytest.raises(HandoffsError) as caught:
        get_model(spec)
    assert caught.value.code == "invalid_model"
    assert says in str(caught.value) and "__init__" not in str(caught.value)


def test_keyword_options_are_checked_like_query_options() -> None:
    with pytest.raises(HandoffsError, match="has no option 'temprature'"):
        get_model("anthropic:claude-sonnet-4-6", temprature=0.2)


@pytest.mark.parametrize("module,spec,extra", [
    ("openai", "openai:gpt-4.1-mini", "handoffs[openai]"),
    ("anthropic", "anthropic:claude-sonnet-4-6", "handoffs[anthropic]"),
    ("openai", "openai-responses:gpt-5-mini", "handoffs[openai]"),
    ("google.genai", "gemini:gemini-2.5-flash", "handoffs[gemini]"),
    ("boto3", "bedrock:amazon.nova-pro-v1:0", "handoffs[bedrock]"),
    ("litellm", "litellm:mistral/mistral-large-latest", "handoffs[litellm]"),
])
def test_a_missing_sdk_names_the_extra_to_install(
        monkeypatch: pytest.MonkeyPatch, module: str, spec: str, extra: str) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # makes `import <module>` fail
    with pytest.raises(HandoffsError, match=re.escape(f"pip install '{extra}'")):
        get_model(spec)


async def test_openai_base_url_points_openai_strings_at_any_compatible_server(
        monkeypatch: pytest.MonkeyPatch, openai_server: FakeServer) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url + "/v1")
    monkeypatch.setenv("HANDOFFS_MODEL", "openai:local-model")
    openai_server.add(completion("from the local server"))

    result = await Runner(support_team()).run("s", "hi")

    assert result.output == "from the local server"
    assert openai_server.bodies[0]["model"] == "local-model"
    assert openai_server.received[0].headers["authorization"] == "Bearer unused"


async def test_agents_name_their_models_by_string(
        monkeypatch: pytest.MonkeyPatch, anthropic_server: FakeServer) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
    anthropic_server.add(message("claude here"))
    team = Team([Agent("solo", model="anthropic:claude-test")])

    result = await Runner(team).run("s", "hi")

    assert result.output == "claude here"
    assert anthropic_server.bodies[0]["model"] == "claude-test"


def test_import_handoffs_does_not_import_provider_sdks() -> None:
    code = ("import sys, handoffs, handoffs.models.registry\n"
            "from handoffs import Runner\n"
            "print(sorted(m for m in ('openai', 'anthropic', 'httpx', 'httpx2', "
            "'google.genai', 'boto3', 'botocore', 'litellm', 'aiohttp') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
