"""Tools the client runs (AG-UI's frontend tools): `runner.run(client_tools=...)` offers
them, a call pauses the turn until `runner.submit_tool_result`, and nothing of it runs
on the server or reaches the model as run before the client's result."""

from __future__ import annotations

from typing import Any

import pytest

from handoffs import Agent, Handoff, HandoffsError, Runner, RunStatus, Team, tool
from handoffs.core.messages import ToolResult
from handoffs.core.tools import ToolSpec
from handoffs.testing import ScriptedModel, call, reply, transfer

done: list[str] = []

CONFIRM = ToolSpec("confirm", "Ask the user to confirm.",
                   {"type": "object", "properties": {"question": {"type": "string"}}})


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    done.append(order_id)
    return f"refunded {order_id}"


@pytest.fixture(autouse=True)
def _clear() -> None:
    done.clear()


def results(state: Any) -> list[ToolResult]:
    return [m for m in state.messages if isinstance(m, ToolResult)]


async def test_a_call_waits_for_the_clients_result_which_the_model_reads() -> None:
    model = ScriptedModel([call("confirm", question="Refund?"), reply("You said yes.")])
    runner = Runner(Team([Agent("billing")]), model=model)

    paused = await runner.run("s", "refund A-1", client_tools=[CONFIRM])

    assert paused.status is RunStatus.WAITING_FOR_APPROVAL
    types = [e.type for e in paused.events]
    assert "tool_called" in types and "tool_result" not in types
    asked = next(e for e in paused.events if e.type == "approval_requested")
    assert asked.data["client"] is True and asked.data["tool"] == "confirm"
    assert model.requests[0].tools == (CONFIRM,)
    state = await runner.get_session("s")
    assert state is not None and results(state) == []
    with pytest.raises(HandoffsError) as refused:  # a new message waits its turn
        await runner.run("s", "hello?")
    assert refused.value.code == "waiting_for_approval"
    assert "client's result" in str(refused.value)

    result = await runner.submit_tool_result("s", "call_1", "yes")

    assert result.status is RunStatus.COMPLETED and result.output == "You said yes."
    state = await runner.get_session("s")
    assert state is not None
    assert [(r.call_id, r.text, r.is_error) for r in results(state)] == \
        [("call_1", "yes", False)]


async def test_an_approval_never_runs_a_client_call_and_a_rejection_answers_it() -> None:
    model = ScriptedModel([call("confirm", question="Refund?"), reply("Not confirmed.")])
    runner = Runner(Team([Agent("billing")]), model=model)
    await runner.run("s", "refund A-1", client_tools=[CONFIRM])

    with pytest.raises(HandoffsError) as caught:
        await runner.approve("s", "call_1")
    assert caught.value.code == "no_pending_approval" and "client" in str(caught.value)

    result = await runner.reject("s", "call_1", "the client went away")  # an operator
    assert result.status is RunStatus.COMPLETED
    state = await runner.get_session("s")
    assert state is not None and results(state)[0].is_error
    assert "the client went away" in results(state)[0].text


async def test_a_client_call_and_a_call_for_approval_each_wait_for_their_own() -> None:
    model = ScriptedModel([_both(), reply("Refunded.")])
    runner = Runner(Team([Agent("billing", tools=[refund])]), model=model)
    await runner.run("s", "refund A-1", client_tools=[CONFIRM])

    with pytest.raises(HandoffsError) as wrong:  # the person's call is not the client's
        await runner.submit_tool_result("s", "r1", "yes")
    assert wrong.value.code == "no_pending_tool_call"
    waiting = await runner.submit_tool_result("s", "c1", "yes")
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL and done == []
    result = await runner.approve("s", "r1")

    assert result.status is RunStatus.COMPLETED and done == ["A-1"]
    state = await runner.get_session("s")
    assert state is not None
    assert [(r.call_id, r.text) for r in results(state)] == \
        [("c1", "yes"), ("r1", "refunded A-1")]


def _both() -> Any:
    from handoffs.core.messages import ToolCall
    from handoffs.models import ModelResponse

    return ModelResponse("", (ToolCall("c1", "confirm", '{"question": "Refund?"}'),
                              ToolCall("r1", "refund", '{"order_id": "A-1"}')))


async def test_the_client_tools_follow_a_handoff_but_not_into_a_delegation() -> None:
    model = ScriptedModel({"triage": [call("ask_policy", task="May we refund?"),
                                      transfer("billing")],
                           "policy": [reply("Yes.")],
                           "billing": [reply("Billing here.")]})
    team = Team([Agent("triage", handoffs=["billing", Handoff("policy", returns=True)]),
                 Agent("billing"), Agent("policy")])
    runner = Runner(team, model=model)
    result = await runner.run("s", "hi", client_tools=[CONFIRM])
    assert result.output == "Billing here."
    offered = {r.agent: [s.name for s in r.tools] for r in model.requests}
    assert "confirm" in offered["triage"] and "confirm" in offered["billing"]
    assert "confirm" not in offered["policy"]  # a delegate answers its caller, not the client


@pytest.mark.parametrize(("spec", "code"), [
    ({"name": "refund", "description": "", "parameters": {}}, "tool_name_taken"),
    ({"name": "transfer_to_x", "description": "", "parameters": {}}, "tool_name_taken"),
    ({"name": "no spaces", "description": "", "parameters": {}}, "invalid_argument"),
    ({"name": "ok", "description": "", "parameters": {"type": "string"}}, "invalid_argument"),
])
async def test_a_client_tool_that_cannot_be_offered_is_refused(spec: dict[str, Any],
                                                                code: str) -> None:
    runner = Runner(Team([Agent("billing", tools=[refund])]), model=ScriptedModel())
    with pytest.raises(HandoffsError) as caught:
        await runner.run("s", "hi", client_tools=[spec])
    assert caught.value.code == code
    assert await runner.get_session("s") is None  # nothing stored


async def test_a_continuation_that_died_answers_the_call_with_the_clients_result() -> None:
    model = ScriptedModel([call("confirm", question="Refund?"), reply("As you said: yes.")])
    runner = Runner(Team([Agent("billing")]), model=model)
    await runner.run("s", "refund A-1", client_tools=[CONFIRM])
    # The result was stored, then the process died while the turn went on with it.
    store = runner.store
    async with store.lock("s"):
        state = await store.load("s")
        assert state is not None and state.pending is not None
        since = state.checkpoint()
        state.pending = {**state.pending, "decisions": {"call_1": {
            "approved": True, "reason": "", "result": "yes", "is_error": False}}}
        state.status = "interrupted"
        await store.commit(state, since)

    result = await runner.resume("s")

    assert result is not None and result.output == "As you said: yes."
    state = await runner.get_session("s")
    assert state is not None
    assert [(r.call_id, r.text, r.is_error) for r in results(state)] == \
        [("call_1", "yes", False)]  # the client's own result, not "outcome unknown"


async def test_a_streamed_turn_offers_the_client_tools_too() -> None:
    model = ScriptedModel([call("confirm", question="Refund?"), reply("Yes it is.")])
    runner = Runner(Team([Agent("billing")]), model=model)
    events = [e async for e in runner.stream("s", "refund A-1", client_tools=[CONFIRM])]
    assert [e.type for e in events if e.type in ("tool_called", "approval_requested")] == \
        ["tool_called", "approval_requested"]
    assert events[-1].result.status is RunStatus.WAITING_FOR_APPROVAL
    assert (await runner.submit_tool_result("s", "call_1", "ok")).output == "Yes it is."
