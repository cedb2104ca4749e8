"""`handoffs demo` picks a real provider when one is configured; opt-in live runs.

Live tests run only with HANDOFFS_LIVE=1 and the provider's key, e.g.
    HANDOFFS_LIVE=1 OPENAI_API_KEY=... ANTHROPIC_API_KEY=... pytest tests/providers -k live
"""

from __future__ import annotations

import os

import pytest

from handoffs import Agent, Runner, RunStatus, Team
from handoffs.demo import demo_model, run_demo
from handoffs.examples.support import CONVERSATION, build_team
from wire.openai_api import stream
from wire.server import FakeServer

# Read before the autouse fixture clears provider variables for the offline tests.
LIVE = os.environ.get("HANDOFFS_LIVE") == "1"
OPENAI_KEY = os.environ.get("OPENAI_API_KEY")
ANTHROPIC_KEY = os.environ.get("ANTHROPIC_API_KEY")
needs_openai = pytest.mark.skipif(not (LIVE and OPENAI_KEY),
                                  reason="live: set HANDOFFS_LIVE=1 and OPENAI_API_KEY")
needs_anthropic = pytest.mark.skipif(not (LIVE and ANTHROPIC_KEY),
                                     reason="live: set HANDOFFS_LIVE=1 and ANTHROPIC_API_KEY")


def test_demo_model_prefers_flag_then_handoffs_model_then_keys() -> None:
    assert demo_model("ollama:llama3.2", {"OPENAI_API_KEY": "k"}) == ("ollama:llama3.2",
                                                                      "--model")
    assert demo_model(None, {"HANDOFFS_MODEL": "openai:x", "OPENAI_API_KEY": "k"})[0] == \
        "openai:x"
    assert demo_model(None, {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}) == (
        "openai:gpt-4.1-mini", "OPENAI_API_KEY is set")
    assert demo_model(None, {"ANTHROPIC_API_KEY": "k"})[0] == "anthropic:claude-sonnet-4-6"
    assert demo_model(None, {}) == (None, "")


async def test_demo_says_which_real_provider_it_uses(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        openai_server: FakeServer) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.url + "/v1")
    openai_server.add(*(stream([f"real answer {i}"]) for i in range(len(CONVERSATION))))

    code = await run_demo()

    out = capsys.readouterr().out
    assert code == 0, out
    assert "openai:gpt-4.1-mini, a real provider (because OPENAI_API_KEY is set)" in out
    assert "triage: real answer 0" in out
    assert openai_server.bodies[0]["model"] == "gpt-4.1-mini"


async def test_demo_scripted_flag_wins_over_a_key(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test")

    await run_demo(scripted=True)

    assert "SCRIPTED" in capsys.readouterr().out


@needs_openai
async def test_live_support_example_on_openai() -> None:
    from handoffs.models.openai import OpenAIModel

    runner = Runner(build_team(), model=OpenAIModel("gpt-4.1-mini", api_key=OPENAI_KEY))
    result = await runner.run("live-openai", CONVERSATION[0])
    assert result.status is not RunStatus.FAILED, result.error
    assert result.output


@needs_anthropic
async def test_live_support_example_on_anthropic() -> None:
    from handoffs.models.anthropic import AnthropicModel

    model = AnthropicModel("claude-sonnet-4-6", api_key=ANTHROPIC_KEY)
    result = await Runner(build_team(), model=model).run("live-anthropic", CONVERSATION[0])
    assert result.status is not RunStatus.FAILED, result.error
    assert result.output


@needs_openai
@needs_anthropic
async def test_live_openai_hands_off_to_anthropic_and_back() -> None:
    from handoffs.models.anthropic import AnthropicModel
    from handoffs.models.openai import OpenAIModel

    triage = Agent("triage", instructions="Hand every billing question to billing.",
                   handoffs=["billing"], tool_choice="billing",
                   model=OpenAIModel("gpt-4.1-mini", api_key=OPENAI_KEY))
    billing = Agent("billing", instructions="Answer in one sentence, then hand back to "
                    "triage.", handoffs=["triage"],
                    model=AnthropicModel("claude-sonnet-4-6", api_key=ANTHROPIC_KEY))
    result = await Runner(Team([triage, billing])).run("live-mixed", "Why was I charged?")
    assert result.status is not RunStatus.FAILED, result.error
