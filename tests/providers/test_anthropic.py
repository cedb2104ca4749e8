"""AnthropicModel through the runner, against a local server speaking the Messages API."""

from __future__ import annotations

from handoffs import Runner, RunStatus
from handoffs.models.retry import RetryPolicy
from wire.anthropic_api import message, status, stream, tool_use
from wire.clients import anthropic_model
from wire.server import FakeServer
from wire.teams import support_team


async def test_text_reply_with_system_prompt_and_default_max_tokens(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(message("Hi there.", usage=(40, 6)))
    runner = Runner(support_team(), model=anthropic_model(anthropic_server))

    result = await runner.run("s1", "hello")

    assert result.output == "Hi there."
    assert (result.usage.input_tokens, result.usage.output_tokens) == (40, 6)
    body = anthropic_server.bodies[0]
    (system,) = body["system"]  # one text block, a cache breakpoint (caching is on)
    assert system["text"].startswith(
        "Route customers to billing.\n\nWhat another agent should answer: ")
    assert "call its transfer tool at once, without announcing it" in system["text"]
    assert body["max_tokens"] == 4096
    assert body["messages"] == [{"role": "user", "content": [{
        "type": "text", "text": "hello", "cache_control": {"type": "ephemeral"}}]}]
    assert body["tools"][0]["name"] == "transfer_to_billing"
    assert body["tools"][0]["input_schema"]["type"] == "object"


async def test_tool_use_is_answered_by_a_tool_result_block(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        message(uses=[tool_use("toolu_01", "transfer_to_billing", {"reason": "charge"})]),
        message("Let me look.", uses=[tool_use("toolu_02", "lookup_order",
                                               {"order_id": "A-1"})]),
        message("Charged twice; refunding."),
    )
    runner = Runner(support_team(), model=anthropic_model(anthropic_server))

    result = await runner.run("s1", "charged twice")

    assert result.output == "Charged twice; refunding."
    messages = anthropic_server.bodies[-1]["messages"]
    assert messages[-2] == {"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_02", "name": "lookup_order",
         "input": {"order_id": "A-1"}}]}
    result_block = messages[-1]["content"][0]
    assert result_block["type"] == "tool_result" and result_block["tool_use_id"] == "toolu_02"
    assert anthropic_server.rejections == []


async def test_parallel_tool_uses_are_answered_in_one_user_turn(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        message(uses=[tool_use("toolu_h", "transfer_to_billing", {})]),
        message(uses=[tool_use("toolu_a", "lookup_order", {"order_id": "A-1"}),
                      tool_use("toolu_b", "order_status", {"order_id": "A-2"})]),
        message("Both fine."),
    )
    runner = Runner(support_team(), model=anthropic_model(anthropic_server))

    result = await runner.run("s1", "two orders")

    assert result.output == "Both fine."
    last = anthropic_server.bodies[-1]["messages"][-1]
    assert last["role"] == "user"
    assert [b["tool_use_id"] for b in last["content"]] == ["toolu_a", "toolu_b"]
    assert anthropic_server.rejections == []


async def test_streamed_text_and_input_json_fragments(anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        stream(["Moving you", " to billing."],
               uses=[("toolu_h", "transfer_to_billing", ['{"reason"', ': "refu', 'nd"}'])]),
        stream(uses=[("toolu_1", "lookup_order", ['{"order_', 'id": "A-9"}'])]),
        stream(["All ", "set."], usage=(50, 4)),
    )
    runner = Runner(support_team(), model=anthropic_model(anthropic_server))

    events = [e async for e in runner.stream("s1", "refund A-9")]

    deltas = [(e.data["agent"], e.data["text"]) for e in events if e.type == "text_delta"]
    assert deltas == [("triage", "Moving you"), ("triage", " to billing."),
                      ("billing", "All "), ("billing", "set.")]
    assert [e.data["arguments"] for e in events if e.type == "tool_called"] == [
        '{"order_id": "A-9"}']
    result = events[-1].result
    assert result.output == "All set."
    assert result.handoffs[0].explanation == "refund"
    assert result.usage.requests == 3
    assert all(b["stream"] is True for b in anthropic_server.bodies)
    assert anthropic_server.rejections == []


async def test_429_with_retry_after_then_success(anthropic_server: FakeServer) -> None:
    anthropic_server.add(status(429, "rate limited", {"retry-after": "0.2"}),
                         message("ok"))

    result = await Runner(support_team(), model=anthropic_model(anthropic_server)).run("s", "x")

    assert result.output == "ok"
    first, second = anthropic_server.received
    assert second.at - first.at >= 0.2


async def test_overloaded_529_is_retried_then_fails_with_model_error(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(*(status(529, "Overloaded") for _ in range(3)))
    model = anthropic_model(anthropic_server, retry=RetryPolicy(max_retries=2, base_delay=0.01))

    result = await Runner(support_team(), model=model).run("s", "x")

    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "model_error"
    assert len(anthropic_server.received) == 3


async def test_prompt_too_long_is_context_length_exceeded(anthropic_server: FakeServer) -> None:
    anthropic_server.add(status(400, "prompt is too long: 210000 tokens > 200000 maximum"))

    result = await Runner(support_team(), model=anthropic_model(anthropic_server)).run("s", "x")

    assert result.error is not None and result.error.code == "context_length_exceeded"


async def test_tool_choice_in_anthropic_form(anthropic_server: FakeServer) -> None:
    for choice in ("billing", "required", "none", "auto"):
        # A words-only answer to a forced choice is asked again once (converge), then kept.
        anthropic_server.add(*[message("ok")] * (2 if choice in ("billing", "required") else 1))
        runner = Runner(support_team(triage_choice=choice),
                        model=anthropic_model(anthropic_server))
        await runner.run(f"s-{choice}", "hi")
    # triage has one-way routes: one tool call per response (never asked with "none")
    one = {"disable_parallel_tool_use": True}
    assert [b["tool_choice"] for b in anthropic_server.bodies] == [
        *[{"type": "tool", "name": "transfer_to_billing", **one}] * 2,
        *[{"type": "any", **one}] * 2, {"type": "none"}, {"type": "auto", **one}]


async def test_missing_key_fails_with_auth_error_without_a_request(
        anthropic_server: FakeServer) -> None:
    from handoffs.models.anthropic import AnthropicModel

    model = AnthropicModel("claude-test", base_url=anthropic_server.url)

    result = await Runner(support_team(), model=model).run("s", "x")

    assert result.error is not None and result.error.code == "auth_error"
    assert "ANTHROPIC_API_KEY" in result.error.message
    assert anthropic_server.received == []


async def test_error_event_inside_a_stream_before_text_is_retried(
        anthropic_server: FakeServer) -> None:
    from wire.server import Reply

    overloaded = ('event: error\ndata: {"type": "error", "error": {"type": '
                  '"overloaded_error", "message": "Overloaded"}}\n\n')
    anthropic_server.add(Reply(raw_sse=overloaded), stream(["fine"]))

    events = [e async for e in Runner(support_team(), model=anthropic_model(
        anthropic_server)).stream("s", "x")]

    assert events[-1].result.output == "fine"
    assert len(anthropic_server.received) == 2


async def test_settings_the_sdk_has_no_argument_for_are_sent_in_the_body(
        anthropic_server: FakeServer) -> None:
    # Newer anthropic SDKs dropped `temperature` from messages.create's signature (the
    # API still takes it): it must reach the server, plain and streamed, not fail the turn.
    from handoffs import Agent, Team

    anthropic_server.add(message("ok"), stream(["ok"]))
    model = anthropic_model(anthropic_server, settings={"temperature": 0.2})
    team = Team([Agent("solo", model_settings={"top_p": 0.9})])
    runner = Runner(team, model=model)
    assert (await runner.run("s1", "hi")).output == "ok"
    streamed = [e async for e in runner.stream("s1", "again")]
    assert streamed[-1].type == "run_completed"
    for body in anthropic_server.bodies:
        assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.2, 0.9, 4096)
    assert "extra_body" not in anthropic_server.bodies[0]
