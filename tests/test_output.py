"""Structured output (`Agent(output_type=...)`) end to end through the runner."""

from __future__ import annotations

import json

import pydantic
import pytest

from handoffs import Agent, Handoff, Runner, RunStatus, Team, TeamError, tool
from handoffs.core.messages import Note
from handoffs.testing import ScriptedModel, reply, transfer


class Invoice(pydantic.BaseModel):
    order_id: str
    amount: float
    currency: str = "EUR"


def billing(**kw: object) -> Agent:
    return Agent("billing", instructions="Issue invoices.", output_type=Invoice, **kw)  # type: ignore[arg-type]


async def test_a_valid_answer_is_the_typed_object_and_its_json() -> None:
    model = ScriptedModel([reply('{"order_id": "A-1", "amount": 12.5}')])
    runner = Runner(Team([billing()]), model=model)

    result = await runner.run("s", "invoice A-1")

    assert result.status is RunStatus.COMPLETED
    assert result.output_data == Invoice(order_id="A-1", amount=12.5)
    assert json.loads(result.output) == {"order_id": "A-1", "amount": 12.5, "currency": "EUR"}
    assert result.to_dict()["output_data"]["amount"] == 12.5
    spec = model.requests[0].output
    assert spec is not None and spec.name == "Invoice" and spec.type is Invoice
    assert spec.schema["additionalProperties"] is False


async def test_a_fenced_answer_is_read_too() -> None:
    runner = Runner(Team([billing()]), model=ScriptedModel([
        reply('```json\n{"order_id": "A-1", "amount": 3}\n```')]))
    assert (await runner.run("s", "x")).output_data == Invoice(order_id="A-1", amount=3)


async def test_an_invalid_answer_goes_back_to_the_model_with_the_errors() -> None:
    model = ScriptedModel([reply("Sure, 12 euros."),
                           reply('{"order_id": "A-1", "amount": "twelve"}'),
                           reply('{"order_id": "A-1", "amount": 12}')])
    runner = Runner(Team([billing()]), model=model)

    result = await runner.run("s", "invoice A-1")

    assert result.output_data == Invoice(order_id="A-1", amount=12)
    second, third = model.requests[1].messages, model.requests[2].messages
    assert isinstance(second[-1], Note) and "not valid" in second[-1].text
    assert "Invoice" in second[-1].text
    assert "amount" in third[-1].text  # the field that was wrong is named
    assert [e.type for e in result.events].count("message") == 3


async def test_an_agent_that_never_gives_a_valid_object_fails_and_the_fallback_answers() -> None:
    helpdesk = Agent("helpdesk", instructions="Apologise.")
    model = ScriptedModel({"billing": [reply("no"), reply("still no"), reply("{}")],
                           "helpdesk": [reply("Sorry, a colleague will send it.")]})
    runner = Runner(Team([billing(), helpdesk], fallback="helpdesk"), model=model)

    result = await runner.run("s", "invoice")

    assert result.output == "Sorry, a colleague will send it." and result.output_data is None
    assert result.handoffs[-1].extra["error"]["code"] == "invalid_output"

    alone = Runner(Team([billing()]), model=ScriptedModel([reply("no")] * 3))
    failed = await alone.run("s", "invoice")
    assert failed.status is RunStatus.FAILED and failed.error is not None
    assert failed.error.code == "invalid_output"


async def test_after_a_handoff_the_type_of_the_agent_that_answers_applies() -> None:
    triage = Agent("triage", handoffs=["billing"])
    model = ScriptedModel({"triage": [transfer("billing")],
                           "billing": [reply('{"order_id": "B-2", "amount": 7}')]})
    runner = Runner(Team([triage, billing()]), model=model)

    result = await runner.run("s", "invoice B-2")

    assert result.agent == "billing" and result.output_data == Invoice(order_id="B-2", amount=7)
    assert model.requests[0].output is None  # triage answers in text
    # A text agent's answer is not validated.
    plain = Runner(Team([triage, billing()]), model=ScriptedModel([reply("hello")]))
    assert (await plain.run("t", "hi")).output_data is None


async def test_a_delegate_with_an_output_type_returns_its_json_to_the_caller() -> None:
    desk = Agent("desk", handoffs=[Handoff("billing", returns=True)])
    model = ScriptedModel({
        "desk": [transfer("billing", task="invoice A-1"), reply("Your invoice is ready.")],
        "billing": [reply('{"order_id": "A-1", "amount": 9.5}')]})
    runner = Runner(Team([desk, billing()]), model=model)

    result = await runner.run("s", "invoice please")

    assert result.output == "Your invoice is ready." and result.output_data is None
    answered = model.requests[-1].messages[-1]
    assert json.loads(answered.text) == {"order_id": "A-1", "amount": 9.5, "currency": "EUR"}


async def test_a_streamed_turn_ends_with_the_object() -> None:
    runner = Runner(Team([billing()]), model=ScriptedModel([
        reply('{"order_id": "A-1", "amount": 1}')]))
    events = [e async for e in runner.stream("s", "x")]
    assert events[-1].result.output_data == Invoice(order_id="A-1", amount=1)


def test_the_team_refuses_an_output_type_that_is_not_a_pydantic_model() -> None:
    with pytest.raises(TeamError, match="pydantic model"):
        Team([Agent("a", output_type=dict)])

    @tool
    def final_output(x: int) -> int:
        """Clash."""
        return x

    with pytest.raises(TeamError, match="final_output"):
        Team([Agent("a", output_type=Invoice, tools=[final_output])])
