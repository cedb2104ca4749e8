"""Behaviour 7: malformed model output never crashes a run; it becomes feedback."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from handoffs import Agent, Handoff, Runner, RunStatus, Team, tool
from handoffs.testing import Call, Reply, ScriptedModel, call, raw_call, reply, transfer


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class Ticket(BaseModel):
    order_id: str


def team() -> Team:
    triage = Agent("triage", tools=[add],
                   handoffs=["billing", Handoff("refunds", payload=Ticket)])
    return Team([triage, Agent("billing", handoffs=["triage"]),
                 Agent("refunds", handoffs=["triage"])])


async def feedback_for(step: object) -> str:
    model = ScriptedModel([step, reply("recovered")])  # type: ignore[list-item]
    result = await Runner(team(), model=model).run("s", "hi")
    assert result.status is RunStatus.COMPLETED and result.output == "recovered"
    last = model.requests[1].messages[-1]
    return last.text


async def test_unknown_tool_name_becomes_feedback() -> None:
    text = await feedback_for(call("fly_to_moon"))
    assert "no tool named 'fly_to_moon'" in text and "add" in text


async def test_arguments_that_are_not_json_become_feedback() -> None:
    text = await feedback_for(raw_call("add", '{"a": 1, "b": '))
    assert "not valid JSON" in text


async def test_arguments_of_the_wrong_types_become_feedback() -> None:
    text = await feedback_for(call("add", a="one", b=2))
    assert "do not match its schema" in text and "a" in text


async def test_handoff_arguments_that_are_not_json_are_refused() -> None:
    model = ScriptedModel([raw_call("transfer_to_refunds", "{oops"), reply("recovered")])
    result = await Runner(team(), model=model).run("s", "hi")
    assert result.handoffs[0].rejection == "invalid_payload"
    assert result.agent == "triage"


async def test_an_empty_response_gets_a_nudge_and_the_run_goes_on() -> None:
    model = ScriptedModel([reply(""), reply("here I am")])
    result = await Runner(team(), model=model).run("s", "hi")
    assert result.output == "here I am"
    assert "empty" in model.requests[1].messages[-1].text


async def test_a_tool_that_raises_becomes_feedback() -> None:
    @tool
    def boom() -> str:
        """Fail."""
        raise RuntimeError("disk on fire")

    model = ScriptedModel([call("boom"), reply("sorry")])
    result = await Runner(Team([Agent("a", tools=[boom])]), model=model).run("s", "x")
    assert result.output == "sorry"
    assert "disk on fire" in model.requests[1].messages[-1].text


async def test_a_model_exception_fails_the_run_and_keeps_the_message() -> None:
    model = ScriptedModel([RuntimeError("provider down")])
    runner = Runner(team(), model=model)
    result = await runner.run("s", "keep me")
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "model_error"
    state = await runner.get_session("s")
    assert state is not None and [m.text for m in state.messages] == ["keep me"]


async def test_running_out_of_script_fails_with_a_clear_message() -> None:
    result = await Runner(team(), model=ScriptedModel([])).run("s", "hi")
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "script_exhausted"
    assert "no step left" in result.error.message


names = st.sampled_from(["add", "transfer_to_billing", "transfer_to_refunds",
                         "transfer_to_triage", "transfer_to_ghost", "nope", ""])
arg_text = st.one_of(
    st.text(max_size=20),
    st.builds(json.dumps, st.dictionaries(
        st.sampled_from(["a", "b", "reason", "payload", "x"]),
        st.one_of(st.integers(), st.text(max_size=5), st.none(),
                  st.fixed_dictionaries({"order_id": st.text(max_size=5)})),
        max_size=4)),
)
part = st.one_of(
    st.builds(Reply, st.text(max_size=10)),
    st.builds(Call, names, arg_text),
)
response = st.lists(part, max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(response, min_size=1, max_size=12))
def test_random_responses_leave_the_session_consistent(script: list[list[object]]) -> None:
    import asyncio

    async def play() -> None:
        model = ScriptedModel([*script, reply("final")])  # type: ignore[list-item]
        runner = Runner(team(), model=model, max_steps=8)
        result = await runner.run("s", "hello")
        state = await runner.get_session("s")
        assert state is not None
        assert result.status in (RunStatus.COMPLETED, RunStatus.FAILED)
        if result.status is RunStatus.FAILED:
            assert result.error is not None
            assert result.error.code in ("max_steps", "script_exhausted", "no_progress")
        assert state.active_agent in ("triage", "billing", "refunds")
        assert state.messages[0].text == "hello"
        # Every tool call in the transcript has exactly one result, right after its message.
        from handoffs import AssistantMessage, ToolResult

        pending: set[str] = set()
        for m in state.messages:
            if isinstance(m, AssistantMessage):
                assert not pending
                pending = {c.id for c in m.tool_calls}
            elif isinstance(m, ToolResult):
                assert m.call_id in pending
                pending.discard(m.call_id)
        assert not pending
        accepted = [r for r in state.handoffs if r.accepted]
        expected = accepted[-1].target if accepted else "triage"
        assert state.active_agent == expected
        # The session survives a JSON round trip.
        from handoffs import SessionState

        assert SessionState.from_json(state.to_json()).to_dict() == state.to_dict()

    asyncio.run(play())


async def test_ids_repeated_by_a_model_do_not_break_pairing() -> None:
    model = ScriptedModel([[call("add", _id="x", a=1, b=2), transfer("billing")],
                           reply("billing")])
    result = await Runner(team(), model=model).run("s", "hi")
    assert result.agent == "billing"


def test_scripted_model_parts() -> None:
    c = transfer("billing", reason="r")
    assert c.name == "transfer_to_billing" and json.loads(c.arguments) == {"reason": "r"}
