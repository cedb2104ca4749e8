"""OpenAIModel through the runner, against a local server speaking Chat Completions."""

from __future__ import annotations

import dataclasses
import json
import time

from handoffs import Runner, RunStatus
from handoffs.models.retry import RetryPolicy
from wire.clients import openai_model
from wire.openai_api import completion, status, stream, tool_call
from wire.server import FakeServer, Reply
from wire.teams import support_team


async def test_text_reply_reaches_the_user_with_usage(openai_server: FakeServer) -> None:
    openai_server.add(completion("Hello! How can I help?", usage=(30, 8)))
    runner = Runner(support_team(), model=openai_model(openai_server))

    result = await runner.run("s1", "hi")

    assert result.status is RunStatus.COMPLETED
    assert result.output == "Hello! How can I help?"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (30, 8)
    assert result.usage_by_agent["triage"].requests == 1
    body = openai_server.bodies[0]
    assert body["model"] == "gpt-test"
    system, user = body["messages"]
    assert system["role"] == "system"
    assert system["content"].startswith(
        "Route customers to billing.\n\nWhat another agent should answer: ")
    assert user == {"role": "user", "content": "hi"}
    assert [t["function"]["name"] for t in body["tools"]] == ["transfer_to_billing"]
    assert "tool_choice" not in body
    assert body["parallel_tool_calls"] is False  # a one-way route: one call per response


async def test_one_tool_call_is_answered_by_a_tool_message(openai_server: FakeServer) -> None:
    openai_server.add(
        completion(calls=[tool_call("call_1", "transfer_to_billing", {"reason": "charge"})]),
        completion(calls=[tool_call("call_2", "lookup_order", {"order_id": "A-1"})]),
        completion("A-1 was charged twice; refunding."),
    )
    runner = Runner(support_team(), model=openai_model(openai_server))

    result = await runner.run("s1", "charged twice on A-1")

    assert result.output == "A-1 was charged twice; refunding."
    assert result.agent == "billing"
    last = openai_server.bodies[-1]["messages"]
    assert last[-2]["role"] == "assistant"
    assert last[-2]["tool_calls"][0]["id"] == "call_2"
    assert last[-1]["role"] == "tool" and last[-1]["tool_call_id"] == "call_2"
    assert json.loads(last[-1]["content"])["charged"] == 2
    assert openai_server.rejections == []


async def test_parallel_tool_calls_all_run_and_are_all_answered(
        openai_server: FakeServer) -> None:
    openai_server.add(
        completion(calls=[tool_call("call_1", "transfer_to_billing", {})]),
        completion(calls=[tool_call("call_a", "lookup_order", {"order_id": "A-1"}),
                          tool_call("call_b", "order_status", {"order_id": "A-2"})]),
        completion("Both checked."),
    )
    runner = Runner(support_team(), model=openai_model(openai_server))

    result = await runner.run("s1", "two orders")

    assert result.output == "Both checked."
    messages = openai_server.bodies[-1]["messages"]
    assistant = next(m for m in messages if m.get("tool_calls"))
    assert [c["id"] for c in assistant["tool_calls"]] == ["call_a", "call_b"]
    tools = [m for m in messages if m["role"] == "tool"]
    assert [(m["tool_call_id"], m["content"]) for m in tools][1] == ("call_b", "A-2 shipped")
    assert openai_server.rejections == []


async def test_handoff_call_is_not_replayed_to_the_target(openai_server: FakeServer) -> None:
    openai_server.add(
        completion("Let me get billing.",
                   calls=[tool_call("call_h", "transfer_to_billing", {"reason": "refund"})]),
        completion("Billing here."),
    )
    runner = Runner(support_team(), model=openai_model(openai_server))

    result = await runner.run("s1", "refund please")

    assert [r.target for r in result.handoffs] == ["billing"]
    target_view = openai_server.bodies[1]
    assert "call_h" not in json.dumps(target_view["messages"])
    assert target_view["messages"][0]["role"] == "system"
    assert "handed" not in target_view["messages"][0]["content"]  # the system text stays
    assert target_view["messages"][1:3] == [
        {"role": "user", "content": "refund please"},
        {"role": "assistant", "content": "Let me get billing."},
    ]
    note = target_view["messages"][3]  # the handoff's note, where the handoff happened
    assert note["role"] == "user"
    assert "triage handed the conversation to you: refund" in note["content"]


async def test_streamed_text_arrives_as_deltas_and_whole_in_the_message(
        openai_server: FakeServer) -> None:
    openai_server.add(stream(["Hel", "lo ", "there"], usage=(9, 3)))
    runner = Runner(support_team(), model=openai_model(openai_server))

    events = [e async for e in runner.stream("s1", "hi")]

    deltas = [e.data["text"] for e in events if e.type == "text_delta"]
    assert deltas == ["Hel", "lo ", "there"]
    assert [e.data["text"] for e in events if e.type == "message"] == ["Hello there"]
    result = events[-1].result
    assert result.usage.input_tokens == 9 and result.usage.output_tokens == 3
    body = openai_server.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


async def test_streamed_tool_call_arguments_split_across_chunks_are_joined(
        openai_server: FakeServer) -> None:
    openai_server.add(
        stream(calls=[("call_h", "transfer_to_billing", ['{"rea', 'son": "re', 'fund"}'])]),
        stream(calls=[("call_1", "lookup_order", ['{"order', '_id"', ': "A-', '7"}']),
                      ("call_2", "order_status", ['{"order_id": ', '"A-8"}'])]),
        stream(["Done", "."]),
    )
    runner = Runner(support_team(), model=openai_model(openai_server))

    events = [e async for e in runner.stream("s1", "check A-7 and A-8")]

    called = [(e.data["tool"], json.loads(e.data["arguments"]))
              for e in events if e.type == "tool_called"]
    assert called == [("lookup_order", {"order_id": "A-7"}),
                      ("order_status", {"order_id": "A-8"})]
    assert events[-1].result.handoffs[0].explanation == "refund"
    # Every agent of the chain streams: the final answer came from billing as deltas.
    assert [(e.data["agent"], e.data["text"]) for e in events if e.type == "text_delta"] == [
        ("billing", "Done"), ("billing", ".")]
    assert openai_server.rejections == []


async def test_429_with_retry_after_waits_then_succeeds(openai_server: FakeServer) -> None:
    openai_server.add(status(429, "Rate limit reached", {"retry-after": "0.3"},
                             kind="requests", err_code="rate_limit_exceeded"),
                      completion("Made it."))
    runner = Runner(support_team(), model=openai_model(openai_server))

    result = await runner.run("s1", "hi")

    assert result.output == "Made it."
    first, second = openai_server.received
    assert second.at - first.at >= 0.3


async def test_retry_after_ms_is_preferred(openai_server: FakeServer) -> None:
    openai_server.add(status(429, "slow down", {"retry-after-ms": "250", "retry-after": "9"}),
                      completion("ok"))
    runner = Runner(support_team(), model=openai_model(openai_server))

    result = await runner.run("s1", "hi")

    assert result.output == "ok"
    first, second = openai_server.received
    assert 0.25 <= second.at - first.at < 5


async def test_500_three_times_fails_the_run_with_model_error(
        openai_server: FakeServer) -> None:
    openai_server.add(*(status(500, "The server had an error") for _ in range(3)))
    model = openai_model(openai_server, retry=RetryPolicy(max_retries=2, base_delay=0.01))

    result = await Runner(support_team(), model=model).run("s1", "hi")

    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "model_error"
    assert "gave up after 3 attempts" in result.error.message
    assert len(openai_server.received) == 3


async def test_unauthorised_key_fails_at_once_with_auth_error(
        openai_server: FakeServer) -> None:
    openai_server.add(status(401, "Incorrect API key provided"))

    result = await Runner(support_team(), model=openai_model(openai_server)).run("s1", "hi")

    assert result.error is not None and result.error.code == "auth_error"
    assert len(openai_server.received) == 1


async def test_context_too_long_is_context_length_exceeded(openai_server: FakeServer) -> None:
    openai_server.add(status(400, "This model's maximum context length is 128000 tokens.",
                             err_code="context_length_exceeded"))

    result = await Runner(support_team(), model=openai_model(openai_server)).run("s1", "hi")

    assert result.error is not None and result.error.code == "context_length_exceeded"
    assert len(openai_server.received) == 1


async def test_exhausted_quota_is_not_retried(openai_server: FakeServer) -> None:
    openai_server.add(status(429, "You exceeded your current quota",
                             err_code="insufficient_quota"))

    result = await Runner(support_team(), model=openai_model(openai_server)).run("s1", "hi")

    assert result.error is not None and result.error.code == "rate_limited"
    assert len(openai_server.received) == 1


async def test_slow_server_times_out_with_timeout(openai_server: FakeServer) -> None:
    # The server would answer after 10 s; the turn must end with `timeout` well before
    # (a margin wide enough for a loaded machine: this checks the timeout, not speed).
    openai_server.add(Reply(body={}, delay=10.0))
    model = openai_model(openai_server, timeout=0.2, retry=RetryPolicy(max_retries=0))

    started = time.monotonic()
    result = await Runner(support_team(), model=model).run("s1", "hi")

    assert result.error is not None and result.error.code == "timeout"
    assert time.monotonic() - started < 8.0


async def test_malformed_json_arguments_become_feedback(openai_server: FakeServer) -> None:
    openai_server.add(
        completion(calls=[tool_call("call_1", "transfer_to_billing", {})]),
        completion(calls=[tool_call("call_2", "lookup_order", '{"order_id": "A-1"')]),
        completion(calls=[tool_call("call_3", "lookup_order", {"order_id": "A-1"})]),
        completion("Found it."),
    )
    runner = Runner(support_team(), model=openai_model(openai_server))

    result = await runner.run("s1", "A-1?")

    assert result.output == "Found it."
    third = openai_server.bodies[2]["messages"]
    broken = next(m for m in third if m.get("tool_call_id") == "call_2")
    assert "not valid JSON" in broken["content"]
    call = next(m for m in third if m.get("tool_calls"))["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {}  # replayed as a valid object
    assert openai_server.rejections == []


async def test_tool_choice_forces_a_handoff_in_openai_form(openai_server: FakeServer) -> None:
    openai_server.add(completion(calls=[tool_call("call_1", "transfer_to_billing", {})]),
                      completion("Billing."))
    runner = Runner(support_team(triage_choice="billing"), model=openai_model(openai_server))

    await runner.run("s1", "hi")

    assert openai_server.bodies[0]["tool_choice"] == {
        "type": "function", "function": {"name": "transfer_to_billing"}}
    assert "tool_choice" not in openai_server.bodies[1]


async def test_tool_choice_required_and_none_pass_through(openai_server: FakeServer) -> None:
    for choice in ("required", "none", "auto"):
        # A words-only answer to a forced choice is asked again once (converge), then kept.
        openai_server.add(*[completion("ok")] * (2 if choice == "required" else 1))
        runner = Runner(support_team(triage_choice=choice), model=openai_model(openai_server))
        await runner.run(f"s-{choice}", "hi")
    assert [b["tool_choice"] for b in openai_server.bodies] == [
        "required", "required", "none", "auto"]


async def test_a_stream_that_fails_before_any_text_is_retried(
        openai_server: FakeServer) -> None:
    openai_server.add(status(503, "overloaded"), stream(["fine"]))
    runner = Runner(support_team(), model=openai_model(openai_server))

    events = [e async for e in runner.stream("s1", "hi")]

    assert events[-1].result.output == "fine"
    assert len(openai_server.received) == 2


async def test_usage_is_summed_per_agent_and_per_turn(openai_server: FakeServer) -> None:
    openai_server.add(
        completion(calls=[tool_call("call_1", "transfer_to_billing", {})], usage=(100, 10)),
        completion(calls=[tool_call("call_2", "lookup_order", {"order_id": "A"})],
                   usage=(200, 20)),
        completion("ok", usage=(300, 30)),
    )
    result = await Runner(support_team(), model=openai_model(openai_server)).run("s1", "x")

    assert (result.usage.input_tokens, result.usage.output_tokens,
            result.usage.requests) == (600, 60, 3)
    assert result.usage_by_agent["triage"].input_tokens == 100
    assert result.usage_by_agent["billing"].to_dict() == {
        "input_tokens": 500, "output_tokens": 50, "requests": 2}


async def test_no_api_key_fails_with_auth_error_without_a_request(
        openai_server: FakeServer) -> None:
    from handoffs.models.openai import OpenAIModel

    result = await Runner(support_team(), model=OpenAIModel("gpt-test")).run("s1", "hi")

    assert result.error is not None and result.error.code == "auth_error"
    assert "OPENAI_API_KEY" in result.error.message


def test_one_model_serves_several_event_loops(openai_server: FakeServer) -> None:
    openai_server.add(completion("one"), completion("two"))
    runner = Runner(support_team(), model=openai_model(openai_server))

    assert runner.run_sync("s1", "hi").output == "one"
    assert runner.run_sync("s2", "hi").output == "two"


async def test_long_tool_descriptions_are_cut_to_what_openai_accepts(
        openai_server: FakeServer) -> None:
    from handoffs import Agent, Team, tool

    @tool
    def wordy() -> str:
        return "ok"

    long_tool = dataclasses.replace(wordy, description="x" * 3000)
    openai_server.add(completion("fine"))
    team = Team([Agent("solo", tools=[long_tool])])

    result = await Runner(team, model=openai_model(openai_server)).run("s1", "hi")

    assert result.output == "fine"
    assert len(openai_server.bodies[0]["tools"][0]["function"]["description"]) == 1024


async def test_agent_model_settings_are_sent_on_the_wire(openai_server: FakeServer) -> None:
    from handoffs import Agent, Team

    openai_server.add(completion("ok"))
    team = Team([Agent("solo", model_settings={"temperature": 0.2, "max_tokens": 64})])
    await Runner(team, model=openai_model(openai_server)).run("s1", "hi")
    body = openai_server.bodies[0]
    assert (body["temperature"], body["max_tokens"]) == (0.2, 64)
