"""Hosted services as users reach them, on the wire with the official openai client (a
hosted name resolved to a local fake server): no default output limit for hosted URLs,
`max_completion_tokens` for reasoning models, Azure OpenAI's two APIs and credentials."""

from __future__ import annotations

import asyncio

import pytest

from handoffs import Agent, Runner, Team
from handoffs.models.azure import AzureOpenAIModel
from handoffs.models.endpoints import is_local, is_reasoning_model
from handoffs.models.openai import OpenAIModel
from handoffs.models.registry import get_model
from wire.clients import FAST
from wire.compat_api import hosted
from wire.openai_api import completion
from wire.server import FakeServer

SOLO = Team([Agent("solo")])


async def test_a_hosted_compatible_service_gets_no_default_output_limit(
        openai_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    base = hosted(monkeypatch, "api.together.xyz", openai_server.url) + "/v1"
    openai_server.add(completion("Hello from a hosted model."))
    model = OpenAIModel("meta-llama/Llama-3.3-70B-Instruct-Turbo", base_url=base,
                        api_key="k", retry=FAST)

    result = await Runner(SOLO, model=model).run("s1", "hi")

    assert result.output == "Hello from a hosted model."
    body = openai_server.bodies[0]
    assert "max_tokens" not in body and "max_completion_tokens" not in body


async def test_a_local_server_keeps_its_default_limit_and_local_can_be_said(
        openai_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    openai_server.add(completion("a"), completion("b"))
    base = hosted(monkeypatch, "gpu-box.example.net", openai_server.url) + "/v1"
    await Runner(SOLO, model=OpenAIModel("m", base_url=openai_server.url + "/v1",
                                         retry=FAST)).run("s1", "hi")
    await Runner(SOLO, model=OpenAIModel("m", base_url=base, local=True, retry=FAST)).run(
        "s2", "hi")

    assert [b["max_tokens"] for b in openai_server.bodies] == [1024, 1024]


def test_which_urls_are_local() -> None:
    local = ["http://localhost:11434/v1", "http://127.0.0.1:8000/v1", "http://[::1]:8080",
             "http://10.0.0.5:8000/v1", "http://192.168.1.20/v1", "http://172.20.0.3/v1",
             "http://host.docker.internal:11434/v1", "http://vllm.localhost/v1"]
    hosted_ = ["https://api.groq.com/openai/v1", "https://openrouter.ai/api/v1",
               "https://generativelanguage.googleapis.com/v1beta/openai/",
               "https://myres.openai.azure.com/openai/v1/", "https://api.openai.com/v1",
               "https://8.8.8.8/v1", None]
    assert [is_local(u) for u in local] == [True] * len(local)
    assert [is_local(u) for u in hosted_] == [False] * len(hosted_)


def test_which_models_reason() -> None:
    assert all(map(is_reasoning_model, ["o1", "o1-mini", "o3", "o3-mini", "o4-mini",
                                         "gpt-5", "gpt-5-mini", "gpt-5.1", "openai/o3"]))
    assert not any(map(is_reasoning_model, ["gpt-4o", "gpt-4.1-mini", "omni", "gpt-50",
                                             "llama3.2", "qwen2.5:0.5b"]))


async def test_a_reasoning_model_gets_max_completion_tokens_never_max_tokens(
        openai_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    base = hosted(monkeypatch, "api.openai.com", openai_server.url) + "/v1"
    openai_server.add(completion("Thought it through."), completion("Again."))
    team = Team([Agent("solo", model_settings={"max_tokens": 2000})])
    await Runner(team, model=OpenAIModel("o4-mini", base_url=base, api_key="k",
                                         retry=FAST)).run("s1", "hi")
    # A deployment name says nothing: reasoning_model=True says it.
    await Runner(team, model=OpenAIModel("my-deployment", base_url=base, api_key="k",
                                         reasoning_model=True, retry=FAST)).run("s2", "hi")

    assert openai_server.rejections == []
    for body in openai_server.bodies:
        assert "max_tokens" not in body and body["max_completion_tokens"] == 2000


async def test_azure_v1_api_with_a_key_from_a_model_string(
        azure_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = hosted(monkeypatch, "myres.openai.azure.com", azure_server.url)
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", endpoint)
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "azure-key")
    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    azure_server.add(completion("Hello from Azure."))
    model = get_model("azure:support-gpt4o?max_retries=0")

    result = await Runner(SOLO, model=model).run("s1", "hi")

    assert result.output == "Hello from Azure."
    assert azure_server.provider.seen == [("v1", None, "api-key")]  # type: ignore[attr-defined]
    body = azure_server.bodies[0]
    assert body["model"] == "support-gpt4o" and "max_tokens" not in body


async def test_azure_dated_api_with_an_entra_id_token_provider(
        azure_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    endpoint = hosted(monkeypatch, "myres.openai.azure.com", azure_server.url)
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    asked: list[str] = []

    async def token() -> str:  # as azure.identity.aio.get_bearer_token_provider gives
        asked.append("token")
        return "entra-token"

    azure_server.add(completion("Dated API."), completion("v1 API."))
    dated = AzureOpenAIModel("support-gpt4o", endpoint=endpoint, api_version="2024-10-21",
                             token_provider=token, retry=FAST)
    v1 = AzureOpenAIModel("support-gpt4o", endpoint=endpoint, retry=FAST,
                          token_provider=lambda: "entra-token")  # a sync provider

    first = await Runner(SOLO, model=dated).run("s1", "hi")
    second = await Runner(SOLO, model=v1).run("s2", "hi")

    assert (first.output, second.output) == ("Dated API.", "v1 API.")
    assert azure_server.provider.seen == [  # type: ignore[attr-defined]
        ("support-gpt4o", "2024-10-21", "entra"), ("v1", None, "entra")]
    assert asked


def test_azure_without_endpoint_or_credentials_says_what_to_set() -> None:
    from handoffs import HandoffsError
    from handoffs.errors import ModelError
    from handoffs.models.base import ModelRequest

    with pytest.raises(HandoffsError, match="AZURE_OPENAI_ENDPOINT"):
        get_model("azure:dep")
    model = AzureOpenAIModel("dep", endpoint="https://myres.openai.azure.com")
    with pytest.raises(ModelError, match="AZURE_OPENAI_API_KEY") as caught:
        asyncio.run(model.complete(ModelRequest("solo", "", [], [])))
    assert caught.value.code == "auth_error"
