"""Prompt-cache and reasoning tokens as each provider reports them, read into `Usage`
through the official SDKs against local servers speaking each API."""

from __future__ import annotations

from handoffs import Runner
from handoffs.core.messages import UserMessage
from handoffs.models.base import Model, ModelRequest, ModelResponse, Usage
from wire.anthropic_api import message
from wire.anthropic_api import stream as anthropic_stream
from wire.clients import anthropic_model, openai_model
from wire.openai_api import completion
from wire.openai_api import stream as openai_stream
from wire.server import FakeServer
from wire.teams import support_team


async def test_openai_chat_counts_cached_and_reasoning_tokens_within_its_totals(
        openai_server: FakeServer) -> None:
    openai_server.add(completion("Hi.", usage=(1_200, 300), details=(1_024, 256)))
    result = await Runner(support_team(), model=openai_model(openai_server)).run("s", "hi")

    u = result.usage
    assert (u.input_tokens, u.cache_read_tokens, u.cache_write_tokens) == (1_200, 1_024, 0)
    assert (u.output_tokens, u.reasoning_tokens) == (300, 256)


async def streamed_usage(model: Model) -> Usage:
    """The usage of the response `model` streams for one user message."""
    request = ModelRequest("a", "Be brief.", [UserMessage("hi", "a")], ())
    final = [p async for p in model.stream(request) if isinstance(p, ModelResponse)]
    assert len(final) == 1
    return final[0].usage


async def test_openai_chat_stream_reads_the_details_of_its_usage_chunk(
        openai_server: FakeServer) -> None:
    openai_server.add(openai_stream(["Hi."], usage=(2_000, 40), details=(1_536, 32)))
    u = await streamed_usage(openai_model(openai_server))
    assert (u.input_tokens, u.cache_read_tokens, u.output_tokens, u.reasoning_tokens) == (
        2_000, 1_536, 40, 32)


async def test_anthropic_adds_cache_reads_and_writes_into_input_and_keeps_them_apart(
        anthropic_server: FakeServer) -> None:
    # Anthropic's input_tokens leaves the cached tokens out: 50 + 2,000 + 30,000.
    anthropic_server.add(message("Hi.", usage=(50, 9), cache=(30_000, 2_000)))
    result = await Runner(support_team(), model=anthropic_model(anthropic_server)).run(
        "s", "hi")

    u = result.usage
    assert u.input_tokens == 32_050
    assert (u.cache_read_tokens, u.cache_write_tokens) == (30_000, 2_000)
    assert u.output_tokens == 9


async def test_anthropic_stream_counts_the_cache_the_same_way(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(anthropic_stream(["Hi."], usage=(50, 9), cache=(30_000, 2_000)))
    u = await streamed_usage(anthropic_model(anthropic_server))
    assert u.input_tokens == 32_050
    assert (u.cache_read_tokens, u.cache_write_tokens, u.output_tokens) == (30_000, 2_000, 9)
