"""Return control: delegations (returns=True), parallel and nested, and next-turn transfers."""

from __future__ import annotations

import asyncio

from handoffs import Agent, Handoff, HandoffPolicy, Runner, RunStatus, Team
from handoffs.models import ModelRequest, ModelResponse
from handoffs.testing import ScriptedModel, call, reply, transfer


def billing_team(**policy: int) -> Team:
    billing = Agent("billing", handoffs=[Handoff("policy", returns=True),
                                         Handoff("fraud", returns=True)])
    return Team([billing, Agent("policy", handoffs=[Handoff("legal", returns=True)]),
                 Agent("fraud"), Agent("legal", handoffs=[Handoff("archive", returns=True)]),
                 Agent("archive")],
                policy=HandoffPolicy(**policy))


async def test_the_delegate_answers_the_caller_and_the_caller_continues() -> None:
    model = ScriptedModel([
        call("transfer_to_policy", reason="Is a refund allowed?"),
        reply("Yes, within 30 days."),
        reply("Good news: you can get a refund."),
    ])
    runner = Runner(billing_team(), model=model)

    result = await runner.run("s", "refund?")

    assert result.status is RunStatus.COMPLETED
    assert result.agent == "billing" and result.output == "Good news: you can get a refund."
    assert [r.agent for r in model.requests] == ["billing", "policy", "billing"]
    back = model.requests[2].messages[-1]
    assert (back.role, back.text) == ("tool", "Yes, within 30 days.")
    record = result.handoffs[0]
    assert record.returns and record.accepted and record.extra["answer"] == "Yes, within 30 days."
    state = await runner.get_session("s")
    assert state is not None and state.active_agent == "billing"
    # The delegate's own work stays out of the shared transcript.
    assert [m.agent for m in state.messages] == ["billing", "billing", "billing", "billing"]


async def test_delegation_events_show_both_legs() -> None:
    model = ScriptedModel([call("transfer_to_policy"), reply("yes"), reply("done")])
    events = [e async for e in Runner(billing_team(), model=model).stream("s", "x")]
    kinds = [e.type for e in events]
    out = kinds.index("agent_handoff")
    assert kinds[out:out + 4] == ["agent_handoff", "agent_started", "message", "agent_returned"]
    assert events[out]["returns"] is True
    back = events[kinds.index("agent_returned")]
    assert (back["source"], back["target"], back["text"]) == ("policy", "billing", "yes")


async def test_parallel_delegations_run_concurrently_and_answer_in_call_order() -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    class Parallel:
        async def complete(self, request: ModelRequest) -> ModelResponse:
            from handoffs.core.messages import ToolCall

            if request.agent == "billing" and request.messages[-1].role == "user":
                return ModelResponse("", (ToolCall("c1", "transfer_to_policy", "{}"),
                                          ToolCall("c2", "transfer_to_fraud", "{}")))
            if request.agent in ("policy", "fraud"):
                started.append(request.agent)
                if len(started) == 2:
                    both_started.set()
                await asyncio.wait_for(both_started.wait(), 1)  # fails unless concurrent
                if request.agent == "policy":
                    await asyncio.sleep(0.02)  # policy finishes last
                return ModelResponse(f"{request.agent} says ok")
            return ModelResponse("all checked")

        async def stream(self, request):  # type: ignore[no-untyped-def]
            yield await self.complete(request)

    model = Parallel()
    result = await Runner(billing_team(), model=model).run("s", "check everything")
    assert result.output == "all checked"
    records = result.handoffs
    assert [r.target for r in records] == ["policy", "fraud"]
    assert [r.extra["answer"] for r in records] == ["policy says ok", "fraud says ok"]


async def test_tool_results_of_parallel_delegations_keep_call_order() -> None:
    model = ScriptedModel([
        [call("transfer_to_policy", _id="a"), call("transfer_to_fraud", _id="b")],
        reply("policy ok"), reply("fraud ok"), reply("done"),
    ])
    await Runner(billing_team(), model=model).run("s", "x")
    tools = [(m.call_id, m.text) for m in model.requests[-1].messages if m.role == "tool"]
    assert tools == [("a", "policy ok"), ("b", "fraud ok")]


async def test_delegations_run_before_a_one_way_transfer_in_the_same_response() -> None:
    billing = Agent("billing", handoffs=[Handoff("policy", returns=True), "refunds"])
    team = Team([billing, Agent("policy"), Agent("refunds")])
    model = ScriptedModel([
        [transfer("refunds", reason="go"), call("transfer_to_policy")],
        reply("policy says yes"),
        reply("refunds here"),
    ])
    result = await Runner(team, model=model).run("s", "x")
    assert [r.agent for r in model.requests] == ["billing", "policy", "refunds"]
    assert result.agent == "refunds"


async def test_delegations_nest() -> None:
    model = ScriptedModel([
        call("transfer_to_policy"), call("transfer_to_legal"), reply("legal: fine"),
        reply("policy: fine per legal"), reply("billing: all fine"),
    ])
    result = await Runner(billing_team(), model=model).run("s", "x")
    assert result.output == "billing: all fine"
    assert [r.agent for r in model.requests] == ["billing", "policy", "legal", "policy",
                                                 "billing"]
    assert model.requests[3].messages[-1].text == "legal: fine"


async def test_nesting_deeper_than_max_depth_is_refused() -> None:
    model = ScriptedModel([
        call("transfer_to_policy"), call("transfer_to_legal"), call("transfer_to_archive"),
        reply("legal alone"), reply("policy ok"), reply("billing ok"),
    ])
    result = await Runner(billing_team(max_depth=2), model=model).run("s", "x")
    codes = [(r.target, r.rejection) for r in result.handoffs]
    assert ("archive", "too_deep") in codes
    assert result.output == "billing ok"


async def test_next_turn_transfer_ends_the_turn_and_the_target_answers_next() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", respond="next_turn")])
    team = Team([triage, Agent("billing", display_name="Billing desk")])
    model = ScriptedModel([transfer("billing"), reply("Billing here, what's up?")])
    runner = Runner(team, model=model)

    first = await runner.run("s", "money question")
    assert first.status is RunStatus.HANDED_OFF
    assert first.output == "Transferring you to Billing desk."
    assert first.agent == "billing"
    assert len(model.requests) == 1

    second = await runner.run("s", "I was charged twice")
    assert second.agent == "billing" and second.output == "Billing here, what's up?"


async def test_next_turn_transfer_keeps_the_source_text_as_output() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", respond="next_turn")])
    model = ScriptedModel([[reply("Let me connect you."), transfer("billing")]])
    result = await Runner(Team([triage, Agent("billing")]), model=model).run("s", "x")
    assert (result.status, result.output) == (RunStatus.HANDED_OFF, "Let me connect you.")


async def test_a_delegation_tool_asks_for_the_task_and_the_delegate_sees_it_last() -> None:
    from handoffs.core.messages import UserMessage

    boss = Agent("boss", handoffs=[Handoff("expert", returns=True, history="full")])
    team = Team([boss, Agent("expert", description="Knows policies.")])
    spec = next(s for s in team.plan("boss").specs if s.name == "ask_expert")
    assert spec.parameters["required"] == ["task"]
    assert "comes to you, not to the user" in spec.parameters["properties"]["task"]["description"]
    assert spec.description == "Ask expert and get the answer back: Knows policies."

    model = ScriptedModel([
        call("ask_expert", task="Is order A-7 refundable after 40 days?",
             reason="policy question"),
        reply("No: 30-day window."),
        reply("Sorry, not refundable."),
    ])
    await Runner(team, model=model).run("s", "Can I get a refund for A-7?")

    delegate_request = model.requests[1]
    assert isinstance(delegate_request.messages[-1], UserMessage)
    assert delegate_request.messages[-1].text == "Is order A-7 refundable after 40 days?"
    note = delegate_request.messages[-2]  # the delegation's note, just before the task
    assert "answer with the result; it goes to boss, not to the user" in note.text
    assert "# Handoff" not in note.text and "# Delegation" not in delegate_request.system
