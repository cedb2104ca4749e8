"""A repeated identical tool call is answered from its first result, then refused with
`repeated_tool_call`, and the turn goes on (HandoffPolicy.repeated_tool_calls)."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffPolicy, HandoffsError, Runner, RunStatus, Team, tool
from handoffs.core.messages import ToolResult
from handoffs.testing import ScriptedModel, call, raw_call, reply

RUNS: list[str] = []


@tool
def lookup_order(order_id: str, verbose: bool = False) -> str:
    """Look an order up."""
    RUNS.append(order_id)
    return f"{order_id}: refunded on May 2"


def team(policy: HandoffPolicy | None = None) -> Team:
    return Team([Agent("refunds", tools=[lookup_order])], policy=policy)


def tool_results(model: ScriptedModel) -> list[ToolResult]:
    return [m for m in model.requests[-1].messages if isinstance(m, ToolResult)]


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RUNS.clear()


async def test_the_same_call_again_is_answered_from_the_first_result_then_refused() -> None:
    model = ScriptedModel([call("lookup_order", order_id="A-1")] * 4
                          + [reply("A-1 was refunded on May 2.")])

    result = await Runner(team(), model=model).run("s1", "status of my refund for A-1?")

    assert result.status is RunStatus.COMPLETED
    assert result.output == "A-1 was refunded on May 2."
    assert RUNS == ["A-1"]  # the tool itself ran once
    first, second, third, fourth = tool_results(model)
    assert (first.text, first.is_error) == ("A-1: refunded on May 2", False)
    assert not second.is_error and "already called lookup_order" in second.text
    assert "A-1: refunded on May 2" in second.text
    assert third.is_error and third.text.startswith("repeated_tool_call:")
    assert fourth.is_error and fourth.text.startswith("repeated_tool_call:")
    codes = [e.get("code") for e in result.events if e.type == "tool_result"]
    assert codes == [None, None, "repeated_tool_call", "repeated_tool_call"]


async def test_arguments_are_compared_as_canonical_json() -> None:
    model = ScriptedModel([raw_call("lookup_order", '{"order_id": "A-1", "verbose": false}'),
                           raw_call("lookup_order", '{"verbose":false,"order_id":"A-1"}'),
                           reply("done")])

    await Runner(team(), model=model).run("s1", "A-1?")

    assert RUNS == ["A-1"]
    assert "already called" in tool_results(model)[1].text


async def test_other_arguments_and_a_new_turn_run_the_tool_again() -> None:
    model = ScriptedModel([call("lookup_order", order_id="A-1"),
                           call("lookup_order", order_id="A-2"), reply("both"),
                           call("lookup_order", order_id="A-1"), reply("again")])
    runner = Runner(team(), model=model)

    await runner.run("s1", "A-1 and A-2?")
    await runner.run("s1", "A-1 once more?")

    assert RUNS == ["A-1", "A-2", "A-1"]


async def test_the_check_can_be_turned_off_or_widened() -> None:
    model = ScriptedModel([call("lookup_order", order_id="A-1")] * 3 + [reply("done")])
    await Runner(team(HandoffPolicy(repeated_tool_calls=None)), model=model).run("s", "A-1")
    assert RUNS == ["A-1"] * 3

    RUNS.clear()
    model = ScriptedModel([call("lookup_order", order_id="A-1")] * 4 + [reply("done")])
    await Runner(team(HandoffPolicy(repeated_tool_calls=3)), model=model).run("s", "A-1")
    results = tool_results(model)
    assert RUNS == ["A-1"]
    assert [r.is_error for r in results] == [False, False, False, True]


async def test_a_small_model_stuck_on_one_call_still_ends_its_turn() -> None:
    # The report: refunds called lookup_order with the same arguments 18 times. The
    # third call is refused; after three refusals in a row it gets a last word with no
    # tools, and its answer in words ends the turn: 6 model calls instead of 19.
    stuck = [call("lookup_order", order_id="A-1")] * 5
    model = ScriptedModel([*stuck, reply("Your refund for A-1 went out on May 2."),
                           *stuck])

    result = await Runner(team(), model=model, max_steps=20).run("s1", "refund A-1?")

    assert result.status is RunStatus.COMPLETED
    assert result.output == "Your refund for A-1 went out on May 2."
    assert RUNS == ["A-1"]
    assert len(model.requests) == 6 and model.requests[-1].tools == ()
    nudges = [e["code"] for e in result.events if e.type == "agent_nudged"]
    assert nudges == ["no_progress"]


async def test_a_model_that_calls_even_without_tools_fails_with_no_progress() -> None:
    model = ScriptedModel([call("lookup_order", order_id="A-1")] * 20)

    result = await Runner(team(), model=model, max_steps=20).run("s1", "refund A-1?")

    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "no_progress"
    assert len(model.requests) == 6 and RUNS == ["A-1"]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_repeated_tool_calls_must_be_a_positive_count_or_none(bad: object) -> None:
    with pytest.raises(HandoffsError) as caught:
        HandoffPolicy(repeated_tool_calls=bad)  # type: ignore[arg-type]
    assert caught.value.code == "invalid_policy"
