"""Prompt-cache and reasoning tokens as each provider reports them, read into `Usage`
through the official SDKs against local servers speaking each API."""

from __future__ import annotations

from typing import Any

from handoffs import Runner
from handoffs.core.messages import UserMessage
from handoffs.core.tools import ToolSpec
from handoffs.models import get_model
from handoffs.models.base import Model, ModelRequest, ModelResponse, Usage
from wire.anthropic_api import message, tool_use
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


# Anthropic's cache breakpoints (`AnthropicModel(cache=True)`, the default).

EPHEMERAL = {"type": "ephemeral"}


def marked(body: dict[str, Any]) -> list[str]:
    """Where `body` carries cache breakpoints: `system`, `tool <name>`, `messages.<i>.<k>`."""
    found = []
    system = body.get("system")
    if isinstance(system, list):
        found += [f"system.{k}" for k, b in enumerate(system) if "cache_control" in b]
    found += [f"tool {t['name']}" for t in body.get("tools", ()) if "cache_control" in t]
    for i, m in enumerate(body["messages"]):
        found += [f"messages.{i}.{k}" for k, b in enumerate(m["content"])
                  if "cache_control" in b]
    return found


async def test_anthropic_marks_the_system_text_and_the_last_two_user_turns(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        message(uses=[tool_use("toolu_1", "transfer_to_billing", {"reason": "charge"})]),
        message(uses=[tool_use("toolu_2", "lookup_order", {"order_id": "A-1"})]),
        message("Refunded."),
        message("You're welcome."),
    )
    runner = Runner(support_team(), model=anthropic_model(anthropic_server))
    await runner.run("s", "charged twice")
    await runner.run("s", "thanks")

    assert anthropic_server.rejections == []  # never more than the API's 4 breakpoints
    bodies = anthropic_server.bodies
    for body in bodies:
        assert body["system"][0]["cache_control"] == EPHEMERAL  # caches the tools with it
        assert not any("cache_control" in t for t in body["tools"])
    # The newest user turn's last block, and the one before (where the previous request
    # of the agent ended), whatever that block is: text, a tool result, the note.
    last = bodies[-1]["messages"]
    assert marked(bodies[-1]) == ["system.0", f"messages.{len(last) - 3}.0",
                                  f"messages.{len(last) - 1}.0"]
    loop = bodies[2]["messages"]  # billing after its lookup: the tool result is newest
    assert loop[-1]["content"][-1]["type"] == "tool_result"
    assert loop[-1]["content"][-1]["cache_control"] == EPHEMERAL
    # The system text went out as the same bytes in both of billing's requests.
    assert bodies[1]["system"] == bodies[2]["system"] == bodies[3]["system"]


async def test_anthropic_without_system_text_marks_the_last_tool(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(message("Hi."))
    model = anthropic_model(anthropic_server)
    request = ModelRequest("a", "", [UserMessage("hi", "a")],
                           (ToolSpec("lookup", "Look up.", {"type": "object",
                                                            "properties": {}}),))
    await model.complete(request)
    assert marked(anthropic_server.bodies[0]) == ["tool lookup", "messages.0.0"]


async def test_anthropic_caching_can_be_turned_off(anthropic_server: FakeServer) -> None:
    anthropic_server.add(message("Hi."), message("Hi."))
    await Runner(support_team(), model=anthropic_model(anthropic_server, cache=False)).run(
        "s", "hi")
    spec = f"anthropic:claude-test?cache=false&base_url={anthropic_server.url}&api_key=k"
    await Runner(support_team(), model=get_model(spec)).run("t", "hi")

    for body in anthropic_server.bodies:
        assert marked(body) == [] and isinstance(body["system"], str)
