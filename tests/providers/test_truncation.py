"""An answer the output limit cut is a visible outcome, not a silent half sentence: on the
wire with both official SDKs (OpenAI `finish_reason: "length"`, Anthropic `stop_reason:
"max_tokens"`), an event, feedback and a second try, then `output_truncated`; a call cut
mid-arguments is never run."""

from __future__ import annotations

import json

from handoffs import Agent, Runner, RunStatus, Team
from wire.anthropic_api import message, stream, tool_use
from wire.clients import anthropic_model, openai_model
from wire.openai_api import completion, tool_call
from wire.server import FakeServer
from wire.teams import LOOKUPS, lookup_order, support_team


def cuts(result: object) -> list[dict[str, object]]:
    return [e.data for e in result.events if e.type == "answer_truncated"]  # type: ignore[attr-defined]


async def test_a_cut_answer_is_not_delivered_and_the_agent_answers_again_shorter(
        openai_server: FakeServer) -> None:
    openai_server.add(completion("Your refund of 129 EUR will be", finish="length",
                                 usage=(40, 1024)),
                      completion("Refund of 129 EUR on its way."))
    runner = Runner(Team([Agent("solo")]), model=openai_model(openai_server))

    result = await runner.run("s1", "refund?")

    assert result.status is RunStatus.COMPLETED
    assert result.output == "Refund of 129 EUR on its way."
    assert cuts(result) == [{"agent": "solo", "limit": 1024, "delivered": False}]
    told = openai_server.bodies[1]["messages"][-1]
    assert told["role"] == "user" and "cut off by the output limit (1024 tokens)" in \
        told["content"]
    assert "will be" not in json.dumps(openai_server.bodies[1])  # the cut text is not kept


async def test_cut_twice_the_turn_fails_with_output_truncated(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(message("A long story that", stop="max_tokens", usage=(30, 4096)),
                         message("Another long", stop="max_tokens", usage=(60, 4096)))
    runner = Runner(Team([Agent("solo")]), model=anthropic_model(anthropic_server))

    result = await runner.run("s1", "tell me everything")

    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "output_truncated"
    assert [c["delivered"] for c in cuts(result)] == [False, False]


async def test_the_fallback_takes_a_turn_whose_answers_are_cut(
        openai_server: FakeServer, anthropic_server: FakeServer) -> None:
    openai_server.add(completion("Half", finish="length"), completion("Half", finish="length"))
    anthropic_server.add(message("A short, whole answer."))
    team = Team([Agent("writer", model=openai_model(openai_server)),
                 Agent("helpdesk", model=anthropic_model(anthropic_server))],
                entry="writer", fallback="helpdesk")

    result = await Runner(team).run("s1", "hi")

    assert result.output == "A short, whole answer." and result.agent == "helpdesk"
    assert result.handoffs[-1].extra["error"]["code"] == "output_truncated"


async def test_an_agent_that_accepts_cut_answers_gets_them_with_the_event(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(stream(["Once upon ", "a time"], stop="max_tokens", usage=(9, 64)))
    runner = Runner(Team([Agent("teller", accept_truncated=True)]),
                    model=anthropic_model(anthropic_server, max_tokens=64))

    events = [e async for e in runner.stream("s1", "a story")]

    result = events[-1].result
    assert result.status is RunStatus.COMPLETED and result.output == "Once upon a time"
    assert cuts(result) == [{"agent": "teller", "limit": 64, "delivered": True}]


async def test_a_call_cut_by_the_limit_is_never_run(anthropic_server: FakeServer) -> None:
    # The limit struck while the model wrote the order number: "A-1" of "A-1001", which
    # parses as a whole object. Running it would look up the wrong order.
    LOOKUPS.clear()
    anthropic_server.add(
        message(uses=[tool_use("toolu_h", "transfer_to_billing", {"reason": "charge"})]),
        message(uses=[tool_use("toolu_1", "lookup_order", {"order_id": "A-1"})],
                stop="max_tokens", usage=(80, 256)),
        message("Which order was it exactly?"),
    )
    runner = Runner(support_team(), model=anthropic_model(anthropic_server))

    result = await runner.run("s1", "charged twice for A-1001")

    assert LOOKUPS == []
    assert result.output == "Which order was it exactly?"
    answer = anthropic_server.bodies[-1]["messages"][-1]["content"][0]
    assert answer["type"] == "tool_result" and answer["is_error"] is True
    assert "cut off by the output limit" in answer["content"]
    assert cuts(result)[0]["tool"] == "lookup_order"


async def test_a_cut_streamed_call_of_half_json_is_not_run(openai_server: FakeServer) -> None:
    from wire.openai_api import stream as chat_stream

    LOOKUPS.clear()
    openai_server.add(
        chat_stream(calls=[("c1", "lookup_order", ['{"order_id": "A-10'])], finish="length"),
        chat_stream(["Which order?"]),
    )
    team = Team([Agent("billing", tools=[lookup_order])])
    events = [e async for e in Runner(team, model=openai_model(openai_server)).stream(
        "s1", "look up A-1001")]

    assert LOOKUPS == [] and events[-1].result.output == "Which order?"
    sent = openai_server.bodies[1]["messages"]
    assert "cut off by the output limit" in sent[-1]["content"]
    assert sent[-2]["tool_calls"][0]["id"] == "c1"


async def test_an_openai_tool_call_cut_with_parsable_arguments_is_not_run(
        openai_server: FakeServer) -> None:
    LOOKUPS.clear()
    openai_server.add(
        completion(calls=[tool_call("c1", "lookup_order", {"order_id": "A-1"})],
                   finish="length"),
        completion("Which order?"),
    )
    team = Team([Agent("billing", tools=[lookup_order])])

    result = await Runner(team, model=openai_model(openai_server)).run("s1", "A-1001?")

    assert LOOKUPS == [] and result.output == "Which order?"
