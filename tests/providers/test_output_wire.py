"""Structured output on the wire: each provider is asked in its own form, and the typed
object comes back through the official SDK clients."""

from __future__ import annotations

import json

import pydantic

from handoffs import Agent, Runner, Team
from wire.anthropic_api import message, tool_use
from wire.anthropic_api import stream as anthropic_stream
from wire.clients import anthropic_model, openai_model
from wire.openai_api import completion, stream
from wire.server import FakeServer


class Invoice(pydantic.BaseModel):
    order_id: str
    amount: float


class Loose(pydantic.BaseModel):
    order_id: str
    note: str = ""  # optional: not strict-compatible


async def test_openai_gets_a_strict_json_schema_response_format(
        openai_server: FakeServer) -> None:
    openai_server.add(completion('{"order_id": "A-1", "amount": 4.5}'))
    runner = Runner(Team([Agent("billing", output_type=Invoice)]),
                    model=openai_model(openai_server))

    result = await runner.run("s", "invoice")

    assert result.output_data == Invoice(order_id="A-1", amount=4.5)
    fmt = openai_server.bodies[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "Invoice"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert openai_server.rejections == []


async def test_openai_gets_strict_false_when_the_type_has_optional_fields(
        openai_server: FakeServer) -> None:
    openai_server.add(stream(['{"order_id": ', '"A-1"}']))
    runner = Runner(Team([Agent("billing", output_type=Loose)]),
                    model=openai_model(openai_server))

    events = [e async for e in runner.stream("s", "invoice")]

    assert events[-1].result.output_data == Loose(order_id="A-1")
    assert openai_server.bodies[0]["response_format"]["json_schema"]["strict"] is False
    assert openai_server.rejections == []


async def test_anthropic_answers_through_a_final_output_tool(
        anthropic_server: FakeServer) -> None:
    anthropic_server.add(
        message(uses=[tool_use("toolu_1", "final_output", {"order_id": "A-1",
                                                           "amount": "x"})]),
        message(uses=[tool_use("toolu_2", "final_output", {"order_id": "A-1",
                                                           "amount": 2})]),
    )
    runner = Runner(Team([Agent("billing", output_type=Invoice)]),
                    model=anthropic_model(anthropic_server))

    result = await runner.run("s", "invoice")

    assert result.output_data == Invoice(order_id="A-1", amount=2)
    first = anthropic_server.bodies[0]
    final = [t for t in first["tools"] if t["name"] == "final_output"]
    assert final and final[0]["input_schema"]["properties"]["amount"]["type"] == "number"
    assert first["tool_choice"] == {"type": "any"}
    # The invalid first answer went back as feedback, in a valid Messages request.
    second = json.dumps(anthropic_server.bodies[1]["messages"])
    assert "not valid" in second
    assert anthropic_server.rejections == []


async def test_anthropic_streamed_final_output(anthropic_server: FakeServer) -> None:
    anthropic_server.add(anthropic_stream(
        uses=[("toolu_1", "final_output", ['{"order_id": "B-2", ', '"amount": 3}'])]))
    runner = Runner(Team([Agent("billing", output_type=Invoice)]),
                    model=anthropic_model(anthropic_server))

    events = [e async for e in runner.stream("s", "invoice")]

    assert events[-1].result.output_data == Invoice(order_id="B-2", amount=3)
