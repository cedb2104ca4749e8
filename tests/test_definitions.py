"""Definitions that cannot work are refused when the `Team` is built, with a sentence
that says what to change: an unknown `tool_choice`, a tool that asks for the run context
in a way that is never injected."""

from __future__ import annotations

from typing import Any

import pytest

from handoffs import Agent, Handoff, RunContext, Runner, Team, TeamError, tool
from handoffs.testing import ScriptedModel, call, reply


@tool
def lookup_order(order_id: str) -> str:
    """Find an order."""
    return order_id


def team_with_choice(choice: str, **handoff: Any) -> Team:
    triage = Agent("triage", tools=[lookup_order],
                   handoffs=[Handoff("billing", **handoff)], tool_choice=choice)
    return Team([triage, Agent("billing")])


@pytest.mark.parametrize("choice", ["auto", "required", "none", "lookup_order", "billing",
                                    "transfer_to_billing"])
def test_tool_choices_that_name_something_offered_are_accepted(choice: str) -> None:
    team_with_choice(choice)


def test_an_unknown_tool_choice_fails_at_team_with_the_valid_values() -> None:
    with pytest.raises(TeamError) as info:
        team_with_choice("biling")
    assert str(info.value) == (
        "Agent 'triage' has tool_choice='biling', which names no tool or handoff of that "
        "agent; tool_choice must be one of: auto, required, none, lookup_order, "
        "transfer_to_billing, billing.")


def test_a_tool_choice_naming_a_target_whose_route_has_its_own_tool_name() -> None:
    # On the wire only the route's tool name can be forced; say so at build time.
    with pytest.raises(TeamError, match="the route to 'billing' is named 'to_billing'"):
        team_with_choice("billing", tool_name="to_billing")
    team_with_choice("to_billing", tool_name="to_billing")


def test_tool_choice_required_without_anything_to_call_fails_at_team() -> None:
    with pytest.raises(TeamError, match="tool_choice='required' but no tools"):
        Team([Agent("solo", tool_choice="required")])


def test_tool_choice_naming_a_disabled_route_fails_at_team() -> None:
    with pytest.raises(TeamError, match="disabled, so that tool is never offered"):
        team_with_choice("billing", enabled=False)
    team_with_choice("billing", enabled=lambda ctx: True)  # decided per run: allowed


def test_a_ctx_parameter_without_the_annotation_fails_at_team() -> None:
    @tool
    def refund(ctx, order_id: str) -> str:  # type: ignore[no-untyped-def]
        """Refund an order."""
        return order_id

    # Without the annotation the model is asked for a "ctx" argument.
    assert "ctx" in refund.parameters["properties"]
    with pytest.raises(TeamError) as info:
        Team([Agent("refunds", tools=[refund])])
    assert str(info.value).startswith(
        "Agent 'refunds': tool 'refund' cannot work: its parameter 'ctx' is named like the "
        "run context but not annotated `RunContext`")


def test_a_context_parameter_typed_any_fails_at_team() -> None:
    @tool
    def refund(context: Any, order_id: str) -> str:
        """Refund an order."""
        return order_id

    with pytest.raises(TeamError, match="'context' is named like the run context"):
        Team([Agent("refunds", tools=[refund])])


def test_run_context_not_first_fails_at_team() -> None:
    @tool
    def refund(order_id: str, ctx: RunContext) -> str:
        """Refund an order."""
        return order_id

    with pytest.raises(TeamError, match="only passed to a first parameter"):
        Team([Agent("refunds", tools=[refund])])


async def test_context_parameters_that_work_are_accepted() -> None:
    @tool
    def refund(ctx: RunContext, order_id: str) -> str:
        """Refund an order."""
        return f"{ctx.agent} refunded {order_id}"

    @tool
    def search(query: str, context: str = "") -> str:
        """Search; `context` is an ordinary, typed argument here."""
        return f"{query} in {context}"

    team = Team([Agent("refunds", tools=[refund, search])])
    model = ScriptedModel([call("refund", order_id="A1"), reply("done")])
    await Runner(team, model=model).run("s", "refund A1")
    assert model.requests[1].messages[-1].text == "refunds refunded A1"  # type: ignore[union-attr]
