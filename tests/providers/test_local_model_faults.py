"""What small local models and their servers do wrong, on the wire with the official
openai client against a local server: calls written in Qwen's tags or after a stray
fence, several calls in one answer, a server that refuses the model's own output with a
500, an error event inside a stream."""

from __future__ import annotations

import json

from handoffs import Agent, Runner, RunStatus, Team
from wire.clients import openai_model
from wire.openai_api import completion, status, stream, tool_call
from wire.server import FakeServer, Reply
from wire.teams import LOOKUPS, lookup_order, order_status, support_team


def call_text(name: str, **arguments: object) -> str:
    return json.dumps({"name": name, "arguments": arguments})


def desk() -> Team:
    return Team([Agent("billing", tools=[lookup_order, order_status])])


async def test_calls_in_tags_after_a_stray_fence_and_one_per_line_are_read(
        openai_server: FakeServer) -> None:
    LOOKUPS.clear()
    openai_server.add(
        completion("<tool_call>\n" + call_text("lookup_order", order_id="A-1")
                   + "\n</tool_call>"),
        completion(call_text("lookup_order", order_id="A-2") + "\n```"),
        completion(call_text("lookup_order", order_id="A-3") + "\n"
                   + call_text("order_status", order_id="A-3")),
        completion("All three checked."),
    )
    runner = Runner(desk(), model=openai_model(openai_server, text_tool_calls=True))

    result = await runner.run("s", "check my orders")

    assert result.output == "All three checked."
    assert LOOKUPS == ["A-1", "A-2", "A-3"]
    last = openai_server.bodies[-1]["messages"]
    assert [m["content"] for m in last if m["role"] == "tool"][-1] == "A-3 shipped"


async def test_a_server_that_cannot_read_the_models_output_gets_feedback_not_retries(
        openai_server: FakeServer) -> None:
    # llama.cpp's llama-server answers 500 when the model's text is not a valid call.
    openai_server.add(
        status(500, "The model produced output that does not match the expected Hermes 2 "
               "Pro format"),
        completion("Your order A-1 was charged twice."),
    )
    runner = Runner(support_team(), model=openai_model(openai_server, text_tool_calls=True))

    result = await runner.run("s", "why two charges?")

    assert result.status is RunStatus.COMPLETED
    assert result.output == "Your order A-1 was charged twice."
    assert len(openai_server.bodies) == 2  # not four identical retries
    feedback = openai_server.bodies[1]["messages"][-1]
    assert feedback["role"] == "user" and "could not be read" in feedback["content"]
    assert [e["code"] for e in result.events if e.type == "agent_nudged"] == [
        "malformed_output"]


async def test_an_error_event_inside_a_stream_is_classified_and_retried(
        openai_server: FakeServer) -> None:
    error = {"error": {"message": "slot unavailable", "type": "server_error", "code": 503}}
    openai_server.add(Reply(raw_sse=f"data: {json.dumps(error)}\n\n"),
                      stream(["Hello ", "again."]))
    runner = Runner(support_team(), model=openai_model(openai_server))

    events = [e async for e in runner.stream("s", "hi")]

    done = events[-1]
    assert done.type == "run_completed" and done["output"] == "Hello again."
    assert len(openai_server.bodies) == 2


async def test_a_stream_error_that_is_not_retryable_fails_with_its_code(
        openai_server: FakeServer) -> None:
    error = {"error": {"message": "bad key", "type": "invalid_request_error", "code": 401}}
    openai_server.add(Reply(raw_sse=f"data: {json.dumps(error)}\n\n"))
    runner = Runner(support_team(), model=openai_model(openai_server))

    events = [e async for e in runner.stream("s", "hi")]

    assert events[-1].type == "run_failed" and events[-1]["code"] == "auth_error"


async def test_refused_handoffs_are_not_replayed_to_later_turns(
        openai_server: FakeServer) -> None:
    openai_server.add(
        completion(calls=[tool_call("c1", "transfer_to_nowhere", {"reason": "x"})]),
        completion("I can help with billing."),
        completion("Still here."),
    )
    runner = Runner(support_team(), model=openai_model(openai_server))

    await runner.run("s", "hi")
    await runner.run("s", "and now?")

    same_turn = json.dumps(openai_server.bodies[1]["messages"])
    later_turn = json.dumps(openai_server.bodies[2]["messages"])
    assert "transfer_to_nowhere" in same_turn  # the refusal is the model's feedback
    assert "transfer_to_nowhere" not in later_turn
    assert "I can help with billing." in later_turn
    state = await runner.get_session("s")
    assert state is not None and state.handoffs[0].rejection == "unknown_target"


async def test_a_call_written_as_text_is_never_streamed_to_the_user(
        openai_server: FakeServer) -> None:
    text = call_text("lookup_order", order_id="A-1")
    openai_server.add(stream([text[:12], text[12:]]), stream(["Hello ", "there."]))
    lone = Team([Agent("helper")])  # no tools: nothing reads the call
    runner = Runner(lone, model=openai_model(openai_server, text_tool_calls=True))

    events = [e async for e in runner.stream("s", "hi")]

    shown = "".join(e["text"] for e in events if e.type == "text_delta")
    assert shown == "Hello there."
    assert events[-1]["output"] == "Hello there."
