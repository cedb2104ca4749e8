"""Runner-wide defaults: the history view of routes that set none, and the output a
turn that reached max_steps gets from Runner(on_max_steps=...)."""

from __future__ import annotations

from typing import Any

import pytest

from handoffs import Agent, Handoff, HandoffsError, RunContext, Runner, RunStatus, Team, tool
from handoffs.core.messages import AssistantMessage, ToolResult, UserMessage
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up."""
    return f"{order_id}: charged twice"


def support(history: Any = None) -> Team:
    route = Handoff("refunds", history=history) if history is not None else "refunds"
    billing = Agent("billing", tools=[lookup_order], handoffs=[route])
    return Team([billing, Agent("refunds")], entry="billing")


def billing_then_refunds() -> ScriptedModel:
    return ScriptedModel({"billing": [call("lookup_order", order_id="A-1"),
                                      transfer("refunds", reason="refund A-1")],
                          "refunds": [reply("Refunded.")]})


def seen_by_refunds(model: ScriptedModel) -> list[object]:
    return list(next(r for r in model.requests if r.agent == "refunds").messages)


async def test_routes_without_history_take_the_runners_default() -> None:
    model = billing_then_refunds()
    runner = Runner(support(), model=model, history="conversation")

    result = await runner.run("s1", "refund A-1 please")

    assert result.output == "Refunded."
    seen = seen_by_refunds(model)
    assert not any(isinstance(m, ToolResult) for m in seen)  # no tool traffic
    assert any(isinstance(m, UserMessage) and m.text == "refund A-1 please" for m in seen)


async def test_a_route_that_sets_its_history_keeps_it_over_the_runner_default() -> None:
    model = billing_then_refunds()
    runner = Runner(support(history="full"), model=model, history="none")

    await runner.run("s1", "refund A-1 please")

    assert any(isinstance(m, ToolResult) for m in seen_by_refunds(model))


async def test_without_a_runner_default_routes_hide_the_sources_tool_traffic() -> None:
    model = billing_then_refunds()

    await Runner(support(), model=model).run("s1", "refund A-1 please")

    seen = seen_by_refunds(model)
    assert not any(isinstance(m, ToolResult) for m in seen)  # billing's lookup stays with it
    assert any(isinstance(m, UserMessage) and m.text == "refund A-1 please" for m in seen)


async def test_the_earlier_default_full_is_one_word_on_the_runner() -> None:
    model = billing_then_refunds()

    await Runner(support(), model=model, history="full").run("s1", "refund A-1 please")

    assert any(isinstance(m, ToolResult) and m.text == "A-1: charged twice"
               for m in seen_by_refunds(model))


def test_the_runner_history_default_must_be_a_known_view() -> None:
    with pytest.raises(HandoffsError) as caught:
        Runner(support(), model=ScriptedModel(), history="everything")  # type: ignore[arg-type]
    assert caught.value.code == "invalid_argument"


def looping_model(n: int) -> ScriptedModel:
    return ScriptedModel([call("lookup_order", order_id=f"A-{i}") for i in range(n)])


def loops() -> Team:
    return Team([Agent("billing", tools=[lookup_order])])


async def test_on_max_steps_makes_the_output_of_a_turn_that_ran_out_of_steps() -> None:
    seen: list[RunContext[Any]] = []

    def give_up(ctx: RunContext[Any]) -> str:
        seen.append(ctx)
        return "I could not finish; a person will follow up."

    runner = Runner(loops(), model=looping_model(3), max_steps=3, on_max_steps=give_up)

    result = await runner.run("s1", "check my orders")

    assert result.status is RunStatus.COMPLETED
    assert result.output == "I could not finish; a person will follow up."
    assert seen[0].agent == "billing" and seen[0].session_id == "s1"
    reached = [e for e in result.events if e.type == "max_steps_reached"]
    assert [(e["agent"], e["steps"]) for e in reached] == [("billing", 3)]
    assert result.events[-1].type == "run_completed"
    state = await runner.get_session("s1")
    assert state is not None and state.status == "idle"
    last = state.messages[-1]
    assert isinstance(last, AssistantMessage) and last.text == result.output


async def test_an_async_on_max_steps_handler_is_awaited() -> None:
    async def give_up(ctx: RunContext[Any]) -> str:
        return f"stopped after {ctx.turn} turn"

    runner = Runner(loops(), model=looping_model(2), max_steps=2, on_max_steps=give_up)

    result = await runner.run("s1", "check")

    assert (result.status, result.output) == (RunStatus.COMPLETED, "stopped after 1 turn")


async def test_an_on_max_steps_handler_that_raises_fails_the_turn_with_max_steps() -> None:
    def broken(ctx: RunContext[Any]) -> str:
        raise LookupError("no template")

    runner = Runner(loops(), model=looping_model(2), max_steps=2, on_max_steps=broken)

    result = await runner.run("s1", "check")

    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "max_steps"
    assert isinstance(result.error.exception, LookupError)
    assert "no template" in result.error.message
    assert not any(e.type == "max_steps_reached" for e in result.events)


async def test_without_a_handler_max_steps_still_fails_the_turn() -> None:
    result = await Runner(loops(), model=looping_model(2), max_steps=2).run("s1", "check")

    assert result.error is not None and result.error.code == "max_steps"
