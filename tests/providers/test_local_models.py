"""Small local models behind OpenAI-compatible servers (Ollama, llama.cpp, vLLM), on the
wire with the official openai client: tool calls written as text, a default output
limit, strict schemas only where they are valid."""

from __future__ import annotations

import json

import pytest

from handoffs import Agent, Runner, RunStatus, Team, tool
from handoffs.models.openai import OpenAIModel
from handoffs.models.registry import get_model
from wire.clients import openai_model
from wire.openai_api import completion, stream
from wire.server import FakeServer
from wire.teams import support_team


def call_text(name: str, **arguments: object) -> str:
    return json.dumps({"name": name, "arguments": arguments})


async def test_a_tool_call_written_as_text_is_read_as_the_call(
        openai_server: FakeServer) -> None:
    openai_server.add(
        completion(call_text("transfer_to_billing", reason="double charge")),
        completion("```json\n" + call_text("lookup_order", order_id="A-1") + "\n```"),
        completion("A-1 was charged twice; I am refunding one."),
    )
    runner = Runner(support_team(), model=openai_model(openai_server, text_tool_calls=True))

    result = await runner.run("s1", "charged twice for A-1")

    assert result.status is RunStatus.COMPLETED
    assert (result.agent, result.output) == ("billing", "A-1 was charged twice; I am "
                                             "refunding one.")
    assert result.handoffs[0].explanation == "double charge"
    last = openai_server.bodies[-1]["messages"]
    assert last[-2]["role"] == "assistant" and last[-2]["content"] is None
    assert last[-2]["tool_calls"][0]["function"]["name"] == "lookup_order"
    assert last[-1]["role"] == "tool" and json.loads(last[-1]["content"])["charged"] == 2
    assert openai_server.rejections == []


async def test_a_list_of_text_calls_is_read_as_parallel_calls(
        openai_server: FakeServer) -> None:
    calls = [{"name": "lookup_order", "arguments": {"order_id": "A-1"}},
             {"name": "order_status", "arguments": {"order_id": "A-2"}}]
    openai_server.add(completion(json.dumps(calls)), completion("Both checked."))
    team = Team([Agent("billing", tools=list(support_team().plan("billing").tools.values()))])
    runner = Runner(team, model=openai_model(openai_server, text_tool_calls=True))

    result = await runner.run("s1", "A-1 and A-2?")

    assert result.output == "Both checked."
    tools = [m for m in openai_server.bodies[-1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tools][1] == "A-2 shipped"


async def test_a_call_written_as_text_is_never_the_answer(
        openai_server: FakeServer) -> None:
    # With the option off, nothing reads the call: the answer is held back and the
    # model told to answer in words.
    openai_server.add(completion(call_text("transfer_to_billing", reason="x")),
                      completion("Hello! What can I do for you?"))
    off = Runner(support_team(), model=openai_model(openai_server))

    result = await off.run("s1", "hi")

    assert result.output == "Hello! What can I do for you?"
    nudged = [e["code"] for e in result.events if e.type == "agent_nudged"]
    assert nudged == ["call_text"]
    assert "tool call written as text" in openai_server.bodies[1]["messages"][-1]["content"]


async def test_a_text_call_of_a_tool_the_agent_lacks_is_an_invalid_call(
        openai_server: FakeServer) -> None:
    openai_server.add(completion(call_text("delete_everything", scope="all")),
                      completion("Sorry, I cannot do that."))
    on = Runner(support_team(), model=openai_model(openai_server, text_tool_calls=True))

    result = await on.run("s2", "hi")

    assert (result.output, result.agent) == ("Sorry, I cannot do that.", "triage")
    feedback = openai_server.bodies[1]["messages"][-1]
    assert feedback["role"] == "tool"
    assert "There is no tool named 'delete_everything'" in feedback["content"]


async def test_a_streamed_text_call_is_read_and_its_text_never_shown(
        openai_server: FakeServer) -> None:
    text = call_text("transfer_to_billing", reason="refund")
    openai_server.add(stream([text[:10], text[10:]]), stream(["Billing ", "here."]))
    runner = Runner(support_team(), model=openai_model(openai_server, text_tool_calls=True))

    events = [e async for e in runner.stream("s1", "refund please")]

    deltas = [e["text"] for e in events if e.type == "text_delta"]
    assert deltas == ["Billing ", "here."]
    assert events[-1].type == "run_completed" and events[-1]["agent"] == "billing"


async def test_requests_to_a_local_server_carry_a_default_max_tokens(
        openai_server: FakeServer) -> None:
    openai_server.add(completion("hi"), completion("hi"), completion("hi"))
    await Runner(support_team(), model=openai_model(openai_server)).run("s1", "hi")
    await Runner(support_team(), model=openai_model(
        openai_server, local_max_tokens=256)).run("s2", "hi")
    chatty = Team([Agent("solo", model_settings={"max_completion_tokens": 4000})])
    await Runner(chatty, model=openai_model(openai_server)).run("s3", "hi")

    first, second, third = openai_server.bodies
    assert first["max_tokens"] == 1024
    assert second["max_tokens"] == 256
    assert "max_tokens" not in third and third["max_completion_tokens"] == 4000
    assert openai_server.rejections == []


async def test_the_ollama_registry_string_carries_its_options_to_the_wire(
        openai_server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_BASE_URL", openai_server.url + "/v1")
    openai_server.add(completion(call_text("transfer_to_billing")), completion("Billing."))
    model = get_model("ollama:qwen2.5:0.5b?text_tool_calls=true&local_max_tokens=512")

    result = await Runner(support_team(), model=model).run("s1", "refund")

    assert result.agent == "billing"
    assert [b["max_tokens"] for b in openai_server.bodies] == [512, 512]
    assert openai_server.bodies[0]["model"] == "qwen2.5:0.5b"


def test_openai_itself_gets_no_default_max_tokens() -> None:
    model = OpenAIModel("gpt-4.1-mini", api_key="test")
    assert model.max_tokens is None
    assert OpenAIModel("m", api_key="t", base_url="https://api.openai.com/v1").max_tokens is None


@tool
def reserve(guests: int, day: str) -> str:
    """Reserve a table."""
    return "reserved"


@tool
def search(query: str, limit: int = 5) -> str:
    """Search the menu."""
    return "found"


async def test_function_tools_are_strict_with_optional_parameters_as_nullable(
        openai_server: FakeServer) -> None:
    openai_server.add(completion("hi"))
    team = Team([Agent("host", tools=[reserve, search], handoffs=["kitchen"]),
                 Agent("kitchen")])

    await Runner(team, model=openai_model(openai_server)).run("s1", "hi")

    fns = {t["function"]["name"]: t["function"] for t in openai_server.bodies[0]["tools"]}
    assert fns["reserve"]["strict"] is True
    assert fns["reserve"]["parameters"]["additionalProperties"] is False
    # `limit` is optional: required but nullable in the strict form (null: its default)
    assert fns["search"]["strict"] is True
    assert fns["search"]["parameters"]["properties"]["limit"]["anyOf"][1] == {"type": "null"}
    assert fns["search"]["parameters"]["additionalProperties"] is False
    assert fns["transfer_to_kitchen"]["strict"] is True  # `reason` is optional too
    assert openai_server.rejections == []
