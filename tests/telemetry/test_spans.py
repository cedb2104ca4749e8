"""The span tree of a turn: names, parents, kinds and attributes, as the GenAI
conventions and issue 13 say."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from handoffs import Agent, GuardrailResult, Handoff, HandoffTo, HumanAgent, Runner, Team, tool
from handoffs.testing import ScriptedModel, reply, transfer

from .conftest import BarrierModel, NamedModel, Otel


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    raise ValueError("database down")


def no_refunds(ctx: Any, text: str) -> GuardrailResult | None:
    return GuardrailResult(tripped=True, message="No refunds here.") if "refund" in text \
        else None


def busy_team() -> Team:
    triage = Agent("triage", description="Routes customers.", tools=[lookup],
                   handoffs=["billing", Handoff("research", returns=True),
                             Handoff("facts", returns=True)])
    billing = Agent("billing", output_guardrails=[no_refunds])
    return Team([triage, billing, Agent("research"), Agent("facts"), Agent("support")],
                fallback="support")


def busy_model() -> BarrierModel:
    """A tool error, two delegations at once, a refused handoff, a transfer, and a
    guardrail trip that the fallback recovers from."""
    from handoffs.testing import call

    return BarrierModel({
        "triage": [call("lookup", order_id="A1"),
                   [transfer("research", reason="find facts", task="Find the charge."),
                    transfer("facts", reason="check", task="Check the policy.")],
                   transfer("nobody", reason="guess"),
                   transfer("billing", reason="duplicate charge")],
        "research": [reply("Charged twice on May 1.")],
        "facts": [reply("Policy: refund duplicates.")],
        "billing": [reply("I will refund you.")],
        "support": [reply("A colleague will look at it.")],
    }, together=("research", "facts"))


async def test_the_span_tree_of_a_busy_turn(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)

    result = await runner.run("sess-1", "I was charged twice")

    assert result.output == "A colleague will look at it."
    assert otel.tree() == [("invoke_workflow", [
        ("invoke_agent triage", [
            ("chat scripted-1", []),
            ("execute_tool lookup", []),
            ("chat scripted-1", []),
            ("execute_tool ask_research", [
                ("invoke_agent research", [("chat scripted-1", [])])]),
            ("execute_tool ask_facts", [
                ("invoke_agent facts", [("chat scripted-1", [])])]),
            ("chat scripted-1", []),
            ("execute_tool transfer_to_nobody", []),
            ("chat scripted-1", []),
            ("execute_tool transfer_to_billing", []),
        ]),
        ("invoke_agent billing", [
            ("chat scripted-1", []),
            ("handoff support", []),
        ]),
        ("invoke_agent support", [("chat scripted-1", [])]),
    ])]


async def test_every_span_carries_the_session_as_conversation_id(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    await runner.run("sess-1", "I was charged twice")

    assert {s.attributes["gen_ai.conversation.id"] for s in otel.spans} == {"sess-1"}
    assert len({s.context.trace_id for s in otel.spans}) == 1  # type: ignore[union-attr]


async def test_workflow_agent_and_chat_spans_follow_the_conventions(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    await runner.run("sess-1", "I was charged twice")

    root = otel.one("invoke_workflow")
    assert root.kind is SpanKind.INTERNAL and root.parent is None
    assert root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root.attributes["handoffs.turn"] == 1
    assert root.attributes["handoffs.turn.status"] == "completed"
    triage = otel.one("invoke_agent triage")
    assert triage.kind is SpanKind.INTERNAL
    assert dict(triage.attributes or {}) == {
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage",
        "gen_ai.agent.description": "Routes customers.", "gen_ai.conversation.id": "sess-1",
        "gen_ai.provider.name": "scripted", "gen_ai.request.model": "scripted-1"}
    chat = otel.named("chat scripted-1")[0]
    assert chat.kind is SpanKind.CLIENT
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.provider.name"] == "scripted"
    assert chat.attributes["gen_ai.request.model"] == "scripted-1"
    assert chat.attributes["gen_ai.response.model"] == "scripted"
    assert chat.attributes["gen_ai.agent.name"] == "triage"
    # a scripted model reports no usage (zeros): left out, as unknown
    assert "gen_ai.usage.input_tokens" not in chat.attributes
    assert "gen_ai.usage.output_tokens" not in chat.attributes
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
    last = otel.named("chat scripted-1")[-1]
    assert last.attributes["gen_ai.response.finish_reasons"] == ("stop",)


async def test_the_two_delegates_ran_at_once(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    await runner.run("sess-1", "I was charged twice")

    research, facts = otel.one("invoke_agent research"), otel.one("invoke_agent facts")
    assert research.start_time < facts.end_time and facts.start_time < research.end_time  # type: ignore[operator]
    for name, delegate in (("research", research), ("facts", facts)):
        ask = otel.parent_of(delegate)
        assert ask is not None and ask.name == f"execute_tool ask_{name}"
        assert ask.attributes["handoffs.handoff.returns"] is True
        assert ask.attributes["handoffs.handoff.accepted"] is True
        # the request span lasts until the delegate's answer is back
        assert ask.end_time >= delegate.end_time  # type: ignore[operator]


async def test_handoff_spans_say_source_target_kind_outcome_and_record(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    result = await runner.run("sess-1", "I was charged twice")

    records = {r.target: r for r in result.handoffs}
    refused = otel.one("execute_tool transfer_to_nobody")
    assert refused.status.status_code is StatusCode.ERROR
    assert dict(refused.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "transfer_to_nobody",
        "gen_ai.tool.type": "function", "gen_ai.tool.call.id": records["nobody"].call_id,
        "gen_ai.conversation.id": "sess-1",
        "handoffs.handoff.source": "triage", "handoffs.handoff.target": "nobody",
        "handoffs.handoff.kind": "llm", "handoffs.handoff.accepted": False,
        "handoffs.handoff.rejection": "unknown_target",
        "handoffs.handoff.record_id": records["nobody"].id, "error.type": "unknown_target"}
    accepted = otel.one("execute_tool transfer_to_billing")
    assert accepted.status.status_code is StatusCode.UNSET
    assert accepted.attributes["handoffs.handoff.accepted"] is True
    assert accepted.attributes["handoffs.handoff.kind"] == "llm"
    assert accepted.attributes["handoffs.handoff.returns"] is False
    assert accepted.attributes["handoffs.handoff.record_id"] == records["billing"].id
    assert "handoffs.handoff.rejection" not in (accepted.attributes or {})
    recovery = otel.one("handoff support")
    assert recovery.attributes["handoffs.handoff.kind"] == "error_recovery"
    assert recovery.attributes["handoffs.handoff.source"] == "billing"
    assert recovery.attributes["handoffs.handoff.record_id"] == records["support"].id


async def test_a_tool_error_and_a_guardrail_trip_are_errors_on_their_spans(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    await runner.run("sess-1", "I was charged twice")

    failed_tool = otel.one("execute_tool lookup")
    assert failed_tool.status.status_code is StatusCode.ERROR
    assert failed_tool.attributes["error.type"] == "tool_error"
    assert failed_tool.attributes["gen_ai.tool.name"] == "lookup"
    billing = otel.one("invoke_agent billing")
    assert billing.status.status_code is StatusCode.ERROR
    assert billing.attributes["error.type"] == "guardrail_tripped"
    checked, event = billing.events
    assert checked.name == "guardrail_checked"
    assert checked.attributes["handoffs.guardrail.passed"] is False
    assert event.name == "guardrail_tripped"
    assert dict(event.attributes or {}) == {
        "gen_ai.agent.name": "billing", "handoffs.guardrail.name": "no_refunds",
        "handoffs.guardrail.stage": "output"}
    assert otel.one("invoke_agent support").status.status_code is StatusCode.UNSET


async def test_no_content_is_recorded_unless_asked(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    await runner.run("sess-1", "I was charged twice")

    content = {"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
               "gen_ai.tool.call.arguments", "gen_ai.tool.call.result",
               "handoffs.handoff.reason"}
    for span in otel.spans:
        assert not content & set(span.attributes or {}), span.name
        assert "charged twice" not in repr(dict(span.attributes or {}))


async def test_content_is_recorded_when_the_user_opts_in(otel: Otel) -> None:
    otel.telemetry.capture_content = True
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    await runner.run("sess-1", "I was charged twice")

    root = otel.one("invoke_workflow")
    assert "I was charged twice" in root.attributes["gen_ai.input.messages"]  # type: ignore[operator]
    assert "A colleague will look at it." in root.attributes["gen_ai.output.messages"]  # type: ignore[operator]
    chat = otel.named("chat scripted-1")[0]
    assert '"role": "user"' in chat.attributes["gen_ai.input.messages"]  # type: ignore[operator]
    assert "gen_ai.system_instructions" in (chat.attributes or {})
    assert '"tool_call"' in chat.attributes["gen_ai.output.messages"]  # type: ignore[operator]
    failed_tool = otel.one("execute_tool lookup")
    assert failed_tool.attributes["gen_ai.tool.call.arguments"] == '{"order_id": "A1"}'
    assert "database down" in failed_tool.attributes["gen_ai.tool.call.result"]  # type: ignore[operator]
    ask = otel.one("execute_tool ask_research")
    assert ask.attributes["handoffs.handoff.reason"] == "find facts"
    assert ask.attributes["gen_ai.tool.call.result"] == "Charged twice on May 1."


async def test_events_keep_the_trace_and_span_ids(otel: Otel) -> None:
    runner = Runner(busy_team(), model=busy_model(), telemetry=otel.telemetry)
    result = await runner.run("sess-1", "I was charged twice")

    root = otel.one("invoke_workflow")
    trace_id = format(root.context.trace_id, "032x")  # type: ignore[union-attr]
    span_ids = {format(s.context.span_id, "016x"): s.name for s in otel.spans}  # type: ignore[union-attr]
    by_type: dict[str, list[str]] = {}
    for e in result.events:
        assert e.data["trace_id"] == trace_id, e.type
        by_type.setdefault(e.type, []).append(span_ids[e.data["span_id"]])
    assert by_type["run_started"] == ["invoke_workflow"]
    assert by_type["run_completed"] == ["invoke_workflow"]
    assert by_type["agent_started"] == ["invoke_agent triage", "invoke_agent research",
                                        "invoke_agent facts", "invoke_agent billing",
                                        "invoke_agent support"]
    assert by_type["tool_called"] == ["execute_tool lookup"]
    assert by_type["handoff_rejected"] == ["execute_tool transfer_to_nobody"]
    assert "handoff support" in by_type["agent_handoff"]
    assert result.events[0].to_dict()["trace_id"] == trace_id


async def test_a_programmatic_handoff_nests_under_the_tool_that_asked(otel: Otel) -> None:
    @tool
    def escalate(order_id: str) -> HandoffTo:
        """Send the order to billing."""
        return HandoffTo("billing", reason="order " + order_id)

    from handoffs.testing import call

    team = Team([Agent("triage", tools=[escalate], handoffs=["billing"]), Agent("billing")])
    model = NamedModel({"triage": [call("escalate", order_id="A1")],
                        "billing": [reply("Done.")]})
    runner = Runner(team, model=model, telemetry=otel.telemetry)
    await runner.run("s", "hi")

    assert otel.tree() == [("invoke_workflow", [
        ("invoke_agent triage", [
            ("chat scripted-1", []),
            ("execute_tool escalate", [("execute_tool transfer_to_billing", [])]),
        ]),
        ("invoke_agent billing", [("chat scripted-1", [])]),
    ])]
    ask = otel.one("execute_tool transfer_to_billing")
    assert ask.attributes["handoffs.handoff.kind"] == "programmatic"
    assert ask.attributes["handoffs.handoff.accepted"] is True


async def test_a_plan_nests_each_step_under_its_handoff(otel: Otel) -> None:
    from handoffs import PlanStep

    team = Team([Agent("lead"), Agent("research"), Agent("writer")], supervisor="lead")
    model = BarrierModel({"research": [reply("facts")], "writer": [reply("draft")]},
                         together=("research", "writer"))
    runner = Runner(team, model=model, telemetry=otel.telemetry)
    await runner.run_plan("p", [[PlanStep("research", "find"), PlanStep("writer", "write")]])

    assert otel.tree() == [("invoke_workflow", [
        ("handoff research", [("invoke_agent research", [("chat scripted-1", [])])]),
        ("handoff writer", [("invoke_agent writer", [("chat scripted-1", [])])]),
    ])]
    assert {s.attributes["handoffs.handoff.kind"] for s in otel.spans
            if s.name.startswith("handoff ")} == {"plan_step"}


async def test_a_streamed_turn_has_the_same_spans(otel: Otel) -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = NamedModel({"triage": [transfer("billing")], "billing": [reply("Refunded.")]},
                       stream_chunks=3)
    runner = Runner(team, model=model, telemetry=otel.telemetry)
    events = [e async for e in runner.stream("s", "hi")]

    assert otel.tree() == [("invoke_workflow", [
        ("invoke_agent triage", [("chat scripted-1", []),
                                 ("execute_tool transfer_to_billing", [])]),
        ("invoke_agent billing", [("chat scripted-1", [])]),
    ])]
    billing = format(otel.one("invoke_agent billing").context.span_id, "016x")  # type: ignore[union-attr]
    deltas = [e for e in events if e.type == "text_delta"]
    assert deltas and {e.data["span_id"] for e in deltas} == {billing}


async def test_a_failed_model_call_fails_its_chat_span_and_the_turn(otel: Otel) -> None:
    from handoffs import ModelError

    model = NamedModel([ModelError("provider down", "model_error")])
    runner = Runner(Team([Agent("triage")]), model=model, telemetry=otel.telemetry)
    result = await runner.run("s", "hi")

    assert result.error is not None
    chat = otel.one("chat scripted-1")
    assert chat.status.status_code is StatusCode.ERROR
    assert chat.attributes["error.type"] == "model_error"
    assert [e.name for e in chat.events] == ["exception"]
    agent = otel.one("invoke_agent triage")
    assert agent.attributes["error.type"] == "model_error"
    root = otel.one("invoke_workflow")
    assert root.status.status_code is StatusCode.ERROR
    assert root.attributes["error.type"] == "model_error"
    assert root.attributes["handoffs.turn.status"] == "failed"


async def test_a_handoff_to_a_human_and_the_operators_hand_back(otel: Otel) -> None:
    team = Team([Agent("bot", handoffs=["operator"]), HumanAgent("operator", handoffs=["bot"])])
    runner = Runner(team, model=NamedModel([transfer("operator")]), telemetry=otel.telemetry)
    await runner.run("s", "a person please")
    await runner.reply_as_human("s", "Back to the bot.", handoff_to="bot")

    root = otel.one("invoke_workflow")
    assert root.attributes["handoffs.turn.status"] == "waiting_for_human"
    assert [e.name for e in root.events] == ["human_waiting"]
    assert otel.one("execute_tool transfer_to_operator").attributes[
        "handoffs.handoff.kind"] == "escalation"
    back = otel.one("handoff bot")
    assert back.attributes["handoffs.handoff.kind"] == "programmatic"
    assert back.attributes["handoffs.handoff.source"] == "operator"


async def test_a_cancelled_turn_closes_its_spans(otel: Otel) -> None:
    started = asyncio.Event()

    class Stuck(NamedModel):
        async def complete(self, request: Any) -> Any:
            started.set()
            await asyncio.sleep(3600)

    runner = Runner(Team([Agent("triage")]), model=Stuck([]), telemetry=otel.telemetry)
    task = asyncio.ensure_future(runner.run("s", "hi"))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert [s.name for s in otel.spans] == ["invoke_workflow", "invoke_agent triage",
                                            "chat scripted-1"]
    for span in otel.spans:
        assert span.status.status_code is StatusCode.ERROR
    assert otel.one("invoke_workflow").attributes["handoffs.turn.status"] == "interrupted"


async def test_runner_cancel_ends_the_trace_as_a_failed_turn(otel: Otel) -> None:
    started = asyncio.Event()

    class Stuck(NamedModel):
        async def complete(self, request: Any) -> Any:
            started.set()
            await asyncio.sleep(3600)

    runner = Runner(Team([Agent("triage")]), model=Stuck([]), telemetry=otel.telemetry)
    task = asyncio.ensure_future(runner.run("s", "hi"))
    await started.wait()
    assert runner.cancel("s")
    result = await task

    assert result.error is not None and result.error.code == "cancelled"
    root = otel.one("invoke_workflow")
    assert root.attributes["handoffs.turn.status"] == "failed"
    assert root.attributes["error.type"] == "cancelled"
    assert otel.one("invoke_agent triage").attributes["error.type"] == "cancelled"
    assert otel.points("handoffs.turns") == [
        ({"handoffs.turn.status": "failed", "error.type": "cancelled"}, 1)]


async def test_a_traced_turn_does_not_give_the_event_loop_a_pass_nobody_asked_for(
        otel: Otel) -> None:
    # A caller that relays events (`run(on_event=)`) gets a pass of the loop before the
    # commit; a turn that is only traced relays nothing, and a pass would hand the GIL
    # to the span exporter's thread in the middle of every turn.
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    others_ran = []

    async def other() -> None:
        others_ran.append(True)

    for on_event, passes in ((None, False), (lambda e: None, True)):
        runner = Runner(team, model=ScriptedModel([transfer("billing"), reply("Done.")]),
                        telemetry=otel.telemetry)
        others_ran.clear()
        task = asyncio.get_running_loop().create_task(other())
        result = await runner.run("s", "hi", on_event=on_event)
        assert result.output == "Done."
        assert bool(others_ran) is passes
        await task
    assert otel.named("invoke_workflow")  # the turns were traced
