"""The GenAI conventions where issue 28 found gaps: what offline models do not know is
left out, a tool's result is the message part's `response`, handoffs without a tool call
have an operation; delegations' task and payload and refusals' sentences are captured
when asked; the metrics added: handoff latency per route, tool calls and their
durations; and 30 turns at once keep their spans (and their children's) apart."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pydantic
from opentelemetry import trace

from handoffs import Agent, Handoff, Runner, Team, tool
from handoffs.models import ModelRequest, ModelResponse
from handoffs.testing import ScriptedModel, call, reply, transfer

from .conftest import Otel


async def test_an_offline_model_says_neither_provider_nor_usage(otel: Otel) -> None:
    runner = Runner(Team([Agent("triage")]), model=ScriptedModel([reply("Hi.")]),
                    telemetry=otel.telemetry)
    await runner.run("s", "hi")

    chat = otel.one("chat")
    assert "gen_ai.provider.name" not in chat.attributes  # not its class name
    assert "gen_ai.usage.input_tokens" not in chat.attributes  # zeros: unknown
    agent = otel.one("invoke_agent triage")
    assert "gen_ai.provider.name" not in agent.attributes
    assert "gen_ai.usage.input_tokens" not in agent.attributes
    [(attrs, _)] = otel.points("gen_ai.client.operation.duration")
    assert "gen_ai.provider.name" not in attrs
    assert otel.points("gen_ai.client.token.usage") == []


async def test_a_tool_result_in_the_input_messages_is_the_parts_response(otel: Otel) -> None:
    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return "paid 30"

    otel.telemetry.capture_content = True
    model = ScriptedModel([call("lookup", order_id="A1"), reply("It is paid.")])
    runner = Runner(Team([Agent("triage", tools=[lookup])]), model=model,
                    telemetry=otel.telemetry)
    await runner.run("s", "is A1 paid?")

    second = otel.named("chat")[1]
    messages = json.loads(str(second.attributes["gen_ai.input.messages"]))
    [part] = messages[-1]["parts"]
    assert messages[-1]["role"] == "tool"
    assert part == {"type": "tool_call_response", "id": part["id"], "response": "paid 30"}


class Refund(pydantic.BaseModel):
    order_id: str
    amount: float


def delegating_team() -> Team:
    return Team([Agent("triage", handoffs=[Handoff("ledger", returns=True),
                                          Handoff("billing", payload=Refund)]),
                 Agent("ledger"), Agent("billing")])


def delegating_model() -> ScriptedModel:
    return ScriptedModel({
        "triage": [transfer("ledger", reason="sum", task="Sum the May charges."),
                   transfer("billing", reason="refund", payload={"order_id": "A1"}),
                   transfer("billing", reason="refund",
                            payload={"order_id": "A1", "amount": 30})],
        "ledger": [reply("Two charges of 30.")],
        "billing": [reply("Refunded.")]})


async def test_a_delegations_task_payload_and_a_refusals_sentence_when_captured(
        otel: Otel) -> None:
    otel.telemetry.capture_content = True
    runner = Runner(delegating_team(), model=delegating_model(), telemetry=otel.telemetry)
    await runner.run("s", "refund my double charge")

    delegation = otel.one("execute_tool ask_ledger")
    assert delegation.attributes["handoffs.handoff.task"] == "Sum the May charges."
    refused, accepted = otel.named("execute_tool transfer_to_billing")
    assert refused.attributes["handoffs.handoff.rejection"] == "invalid_payload"
    sentence = str(refused.attributes["gen_ai.tool.call.result"])
    assert "amount" in sentence  # what the model read, to correct its payload
    assert json.loads(str(accepted.attributes["handoffs.handoff.payload"])) == {
        "order_id": "A1", "amount": 30.0}


async def test_none_of_that_content_without_the_switch(otel: Otel) -> None:
    runner = Runner(delegating_team(), model=delegating_model(), telemetry=otel.telemetry)
    await runner.run("s", "refund my double charge")

    for span in otel.spans:
        keys = set(span.attributes or {})
        assert not keys & {"handoffs.handoff.task", "handoffs.handoff.payload",
                           "gen_ai.tool.call.result"}, span.name


async def test_an_error_recovery_is_a_handoff_operation(otel: Otel) -> None:
    team = Team([Agent("triage"), Agent("support")], fallback="support")
    model = ScriptedModel({"triage": [RuntimeError("down")], "support": [reply("Here.")]})
    await Runner(team, model=model, telemetry=otel.telemetry).run("s", "hi")

    span = otel.one("handoff support")
    assert span.attributes["gen_ai.operation.name"] == "handoff"
    assert span.attributes["handoffs.handoff.kind"] == "error_recovery"


class SlowTarget(ScriptedModel):
    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.agent in ("billing", "ledger"):
            await asyncio.sleep(0.03)
        return await super().complete(request)


async def test_handoff_latency_is_measured_to_the_targets_first_output(otel: Otel) -> None:
    team = Team([Agent("triage", handoffs=["billing", Handoff("ledger", returns=True)]),
                 Agent("billing"), Agent("ledger")])
    model = SlowTarget({"triage": [transfer("ledger", task="Sum."), transfer("billing")],
                        "ledger": [reply("30")], "billing": [reply("Refunded.")]})
    await Runner(team, model=model, telemetry=otel.telemetry).run("s", "hi")

    reader = otel.reader.get_metrics_data()
    assert reader is not None
    found = {}
    for rm in reader.resource_metrics:
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == "handoffs.handoff.latency":
                    for p in m.data.data_points:
                        a = dict(p.attributes or {})
                        found[(a["handoffs.handoff.source"], a["handoffs.handoff.target"],
                               a["handoffs.handoff.kind"])] = (p.count, p.min)
    assert set(found) == {("triage", "ledger", "llm"), ("triage", "billing", "llm")}
    for count, least in found.values():
        assert count == 1 and least >= 0.03  # at least the target's model call


async def test_tool_calls_are_counted_and_timed(otel: Otel) -> None:
    @tool
    async def slow(n: int) -> str:
        """Wait a little."""
        await asyncio.sleep(0.02)
        return "ok"

    @tool
    def broken(n: int) -> str:
        """Fail."""
        raise ValueError("no")

    team = Team([Agent("triage", tools=[slow, broken])])
    model = ScriptedModel([[call("slow", n=1), call("slow", n=2), call("broken", n=1)],
                           reply("Done.")])
    await Runner(team, model=model, telemetry=otel.telemetry).run("s", "hi")

    points = {(a["gen_ai.tool.name"], a.get("error.type")): n
              for a, n in otel.points("handoffs.tool.duration")}
    assert points == {("slow", None): 2, ("broken", "tool_error"): 1}


async def test_thirty_turns_at_once_keep_their_spans_apart(otel: Otel) -> None:
    """Each turn runs in its own task; the span current in each (and a span a tool makes
    under it) belongs to that turn's trace, never to another's."""
    tracer = otel.telemetry.tracer_provider.get_tracer("app")

    @tool
    async def query(session: str) -> str:
        """Query something."""
        await asyncio.sleep(0.01)  # let the other turns interleave
        with tracer.start_as_current_span(f"query {session}"):
            await asyncio.sleep(0.01)
        return session

    class Echo(ScriptedModel):
        async def complete(self, request: ModelRequest) -> ModelResponse:
            with tracer.start_as_current_span(f"http {request.agent}"):
                await asyncio.sleep(0.005)
            return await super().complete(request)

    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing", tools=[query])])

    async def one(i: int) -> Any:
        model = Echo({"triage": [transfer("billing")],
                      "billing": [call("query", session=f"s{i}"), reply("Done.")]})
        return await Runner(team, model=model, telemetry=otel.telemetry).run(f"s{i}", "hi")

    results = await asyncio.gather(*(one(i) for i in range(30)))

    assert all(r.output == "Done." for r in results)
    assert trace.get_current_span() is trace.INVALID_SPAN
    roots = otel.named("invoke_workflow")
    assert len(roots) == 30 and len({r.context.trace_id for r in roots}) == 30  # type: ignore[union-attr]
    for i in range(30):
        [q] = otel.named(f"query s{i}")
        tool_span = otel.parent_of(q)
        assert tool_span is not None and tool_span.name == "execute_tool query"
        assert tool_span.attributes["gen_ai.conversation.id"] == f"s{i}"
    for http in otel.named("http billing") + otel.named("http triage"):
        chat = otel.parent_of(http)
        assert chat is not None and chat.name == "chat"
        assert chat.context.trace_id == http.context.trace_id  # type: ignore[union-attr]
