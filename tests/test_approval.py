"""Tool calls that wait for a person: `@tool(needs_approval=...)`, `runner.approve`,
`runner.reject`, end to end through the runner."""

from __future__ import annotations

from typing import Any

import pytest

from handoffs import Agent, Handoff, HandoffsError, Runner, RunStatus, Team, tool
from handoffs.core.messages import ToolCall, ToolResult
from handoffs.models import ModelResponse
from handoffs.testing import ScriptedModel, call, reply, transfer

done: list[str] = []


@tool(needs_approval=True)
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    done.append(f"refund {order_id} {amount}")
    return f"refunded {amount} on {order_id}"


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    done.append(f"lookup {order_id}")
    return f"{order_id}: paid 30"


def big(ctx: Any, args: dict[str, Any]) -> bool:
    return float(args.get("amount", 0)) > 100


@tool(needs_approval=big)
def credit(order_id: str, amount: float) -> str:
    """Give store credit."""
    done.append(f"credit {order_id} {amount}")
    return "credited"


@pytest.fixture(autouse=True)
def _clear() -> None:
    done.clear()


def results(state: Any) -> list[ToolResult]:
    return [m for m in state.messages if isinstance(m, ToolResult)]


async def test_a_call_waits_for_approval_then_runs_and_the_agent_goes_on() -> None:
    model = ScriptedModel([call("refund", order_id="A-1", amount=30),
                           reply("Refunded 30 on A-1.")])
    runner = Runner(Team([Agent("billing", tools=[refund])]), model=model)

    paused = await runner.run("s", "refund A-1")

    assert paused.status is RunStatus.WAITING_FOR_APPROVAL and paused.agent == "billing"
    assert done == []  # nothing ran
    asked = [e for e in paused.events if e.type == "approval_requested"]
    assert [(e["agent"], e["tool"], e["arguments"]) for e in asked] == [
        ("billing", "refund", '{"order_id": "A-1", "amount": 30}')]
    state = await runner.get_session("s")
    assert state is not None and state.status == "waiting_for_approval"
    call_id = asked[0]["call_id"]
    assert state.pending is not None and state.pending["waiting"] == [call_id]

    final = await runner.approve("s", call_id)

    assert final.status is RunStatus.COMPLETED and final.output == "Refunded 30 on A-1."
    assert done == ["refund A-1 30.0"]
    state = await runner.get_session("s")
    assert state is not None and state.status == "idle" and state.pending is None
    assert results(state)[0].text == "refunded 30.0 on A-1"
    assert final.turn == paused.turn  # the same turn went on
    assert [e.type for e in final.events][:2] == ["approval_decided", "run_started"]
    # The model saw its call answered before it spoke again.
    assert model.requests[-1].messages[-1].text == "refunded 30.0 on A-1"


async def test_a_rejected_call_is_the_persons_reason_and_never_runs() -> None:
    model = ScriptedModel([call("refund", order_id="A-1", amount=30),
                           reply("I cannot refund that; a manager will call you.")])
    runner = Runner(Team([Agent("billing", tools=[refund])]), model=model)
    paused = await runner.run("s", "refund A-1")
    call_id = paused.events[-2]["call_id"]

    final = await runner.reject("s", call_id, "over the monthly limit")

    assert final.output == "I cannot refund that; a manager will call you."
    assert done == []
    seen = model.requests[-1].messages[-1]
    assert seen.is_error and "over the monthly limit" in seen.text  # type: ignore[union-attr]


async def test_a_callable_decides_per_call() -> None:
    model = ScriptedModel([call("credit", order_id="A-1", amount=20),
                           call("credit", order_id="A-2", amount=500), reply("ok")])
    runner = Runner(Team([Agent("billing", tools=[credit])]), model=model)

    paused = await runner.run("s", "credits")

    assert done == ["credit A-1 20.0"]  # the small one ran at once
    assert paused.status is RunStatus.WAITING_FOR_APPROVAL
    await runner.approve("s", paused.events[-2]["call_id"])
    assert done == ["credit A-1 20.0", "credit A-2 500.0"]


async def test_every_call_of_the_response_waits_and_each_decision_is_kept() -> None:
    class OneResponse:
        """Three calls in one response, then an answer."""

        calls = 0

        async def complete(self, request: Any) -> ModelResponse:
            self.calls += 1
            if self.calls == 1:
                return ModelResponse("", (
                    ToolCall("c1", "lookup", '{"order_id": "A-1"}'),
                    ToolCall("c2", "refund", '{"order_id": "A-1", "amount": 30}'),
                    ToolCall("c3", "refund", '{"order_id": "A-2", "amount": 5}')))
            return ModelResponse("All done.")

        async def stream(self, request: Any) -> Any:
            yield await self.complete(request)

    runner = Runner(Team([Agent("billing", tools=[lookup, refund])]), model=OneResponse())

    paused = await runner.run("s", "go")
    assert done == []  # not even the lookup: the response waits as a whole
    assert [e["call_id"] for e in paused.events if e.type == "approval_requested"] == [
        "c2", "c3"]

    half = await runner.approve("s", "c3")
    assert half.status is RunStatus.WAITING_FOR_APPROVAL and done == []
    with pytest.raises(HandoffsError) as err:
        await runner.approve("s", "c3")  # already decided
    assert err.value.code == "no_pending_approval"

    final = await runner.reject("s", "c2", "too much")
    assert final.output == "All done."
    assert done == ["lookup A-1", "refund A-2 5.0"]
    state = await runner.get_session("s")
    assert [(r.call_id, r.is_error) for r in results(state)] == [
        ("c1", False), ("c2", True), ("c3", False)]


async def test_after_a_handoff_the_approval_belongs_to_the_agent_that_asked() -> None:
    model = ScriptedModel({"triage": [transfer("billing")],
                           "billing": [call("refund", order_id="A-1", amount=30),
                                       reply("Billing refunded it.")]})
    team = Team([Agent("triage", handoffs=["billing"]),
                 Agent("billing", tools=[refund], handoffs=["triage"])])
    runner = Runner(team, model=model)

    paused = await runner.run("s", "refund please")
    assert paused.agent == "billing"
    final = await runner.approve("s", paused.events[-2]["call_id"])

    assert final.agent == "billing" and final.output == "Billing refunded it."
    assert model.requests[-1].agent == "billing"


async def test_while_waiting_a_new_message_is_refused_and_nothing_is_lost() -> None:
    model = ScriptedModel([call("refund", order_id="A-1", amount=30), reply("ok")])
    runner = Runner(Team([Agent("billing", tools=[refund])]), model=model)
    paused = await runner.run("s", "refund A-1")

    with pytest.raises(HandoffsError) as err:
        await runner.run("s", "hello?")
    assert err.value.code == "waiting_for_approval"
    with pytest.raises(HandoffsError) as missing:
        await runner.approve("nope", "x")
    assert missing.value.code == "not_found"
    with pytest.raises(HandoffsError) as unknown:
        await runner.approve("s", "not-a-call")
    assert unknown.value.code == "no_pending_approval"
    state = await runner.get_session("s")
    assert state is not None and [m.text for m in state.messages] == ["refund A-1"]
    assert (await runner.approve("s", paused.events[-2]["call_id"])).output == "ok"


async def test_inside_a_delegation_the_delegate_waits_and_goes_on_then_its_caller() -> None:
    model = ScriptedModel({
        "desk": [transfer("billing", task="refund A-1"),
                 reply("Billing has refunded A-1.")],
        "billing": [call("lookup", order_id="A-1"), call("refund", order_id="A-1", amount=30),
                    reply("Refunded 30 on A-1.")]})
    team = Team([Agent("desk", handoffs=[Handoff("billing", returns=True)]),
                 Agent("billing", tools=[lookup, refund])])
    runner = Runner(team, model=model)

    paused = await runner.run("s", "refund A-1")

    assert paused.status is RunStatus.WAITING_FOR_APPROVAL and paused.agent == "desk"
    asked = [e for e in paused.events if e.type == "approval_requested"]
    assert [(e["agent"], e["tool"]) for e in asked] == [("billing", "refund")]
    assert done == ["lookup A-1"]  # the delegate's earlier step ran; the refund waits
    state = await runner.get_session("s")
    assert state is not None and state.pending is not None
    assert [m.text for m in state.messages] == ["refund A-1"]  # nothing of desk's response yet
    assert state.pending["agent"] == "billing" and state.pending["caller"]["agent"] == "desk"

    final = await runner.approve("s", asked[0]["call_id"])

    assert final.status is RunStatus.COMPLETED and final.agent == "desk"
    assert final.output == "Billing has refunded A-1."
    assert done == ["lookup A-1", "refund A-1 30.0"]
    # The delegate saw its own earlier work and the approved result; its caller got the
    # delegate's answer as the call's result.
    billing_last = [r for r in model.requests if r.agent == "billing"][-1]
    assert billing_last.messages[-1].text == "refunded 30.0 on A-1"
    assert any(m.text == "refund A-1" for m in billing_last.messages)
    desk_last = model.requests[-1]
    assert desk_last.agent == "desk" and desk_last.messages[-1].text == "Refunded 30 on A-1."
    state = await runner.get_session("s")
    assert state is not None and state.status == "idle"
    assert state.handoffs[-1].extra["answer"] == "Refunded 30 on A-1."


async def test_a_plan_steps_delegate_is_told_it_cannot_wait() -> None:
    from handoffs import PlanStep

    model = ScriptedModel({"billing": [call("refund", order_id="A-1", amount=30),
                                       reply("I could not refund.")]})
    team = Team([Agent("desk"), Agent("billing", tools=[refund])])
    result = await Runner(team, model=model).run_plan("s", [PlanStep("billing", "refund A-1")])

    assert result.status is RunStatus.COMPLETED and done == []
    said = [e for e in result.events if e.type == "tool_result" and e["tool"] == "refund"]
    assert said and said[0]["is_error"] and "approval" in said[0]["text"]


async def test_a_continued_turn_is_bounded_by_the_runners_turn_timeout() -> None:
    import asyncio

    @tool(needs_approval=True)
    async def slow(order_id: str) -> str:
        """Takes too long."""
        await asyncio.sleep(30)
        return "late"

    model = ScriptedModel([call("slow", order_id="A-1")])
    runner = Runner(Team([Agent("billing", tools=[slow])]), model=model, turn_timeout=0.3)
    paused = await runner.run("s", "go")
    final = await asyncio.wait_for(runner.approve("s", paused.events[-2]["call_id"]), 5)
    assert final.status is RunStatus.FAILED and final.error is not None
    assert final.error.code == "timeout"
    state = await runner.get_session("s")
    assert state is not None and state.status == "idle"
