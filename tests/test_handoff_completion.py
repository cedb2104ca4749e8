"""A handoff is made whole or not at all: hooks, summaries, and what a failure leaves."""

from __future__ import annotations

import logging

import pytest

from handoffs import Agent, Handoff, Runner, RunStatus, Team
from handoffs.errors import ModelError, RunFailed
from handoffs.models import ModelRequest, ModelResponse
from handoffs.runtime.effects.summary import Summarizer
from handoffs.testing import ScriptedModel, call, reply, transfer


def _hook_raises(ctx: object, payload: object) -> None:
    raise KeyError("crm_id")


async def test_a_hook_that_raises_refuses_the_handoff_and_fails_the_agent() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", on_handoff=_hook_raises)])
    runner = Runner(Team([triage, Agent("billing")]),
                    model=ScriptedModel([transfer("billing", reason="money")]))

    result = await runner.run("s", "charged twice")

    assert result.status is RunStatus.FAILED and result.agent == "triage"
    assert result.error is not None and result.error.code == "handoff_hook_failed"
    assert isinstance(result.error.exception, KeyError)
    state = await runner.get_session("s")
    assert state is not None and state.active_agent == "triage"
    [record] = state.handoffs
    assert not record.accepted and record.rejection == "handoff_hook_failed"
    assert "billing" not in [m.agent for m in state.messages]
    assert not any("Transferred to" in m.text for m in state.messages)


async def test_a_refused_hook_goes_to_the_fallback() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", on_handoff=_hook_raises)])
    team = Team([triage, Agent("billing"), Agent("support")], fallback="support")
    runner = Runner(team, model=ScriptedModel([transfer("billing"), reply("Support here.")]))

    result = await runner.run("s", "charged twice")

    assert (result.status, result.agent, result.output) == (
        RunStatus.COMPLETED, "support", "Support here.")
    assert [(r.target, r.accepted) for r in result.handoffs] == [
        ("billing", False), ("support", True)]


async def test_a_refused_handoff_does_not_count_towards_the_loop_rule() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", on_handoff=_hook_raises)])
    runner = Runner(Team([triage, Agent("billing")]), model=ScriptedModel(
        [transfer("billing")] * 3))

    for _ in range(3):
        await runner.run("s", "again")

    state = await runner.get_session("s")
    assert state is not None
    assert {r.rejection for r in state.handoffs} == {"handoff_hook_failed"}


async def test_a_delegation_whose_hook_raises_returns_an_error_to_its_caller() -> None:
    boss = Agent("boss", handoffs=[Handoff("expert", returns=True, on_handoff=_hook_raises)])
    model = ScriptedModel([transfer("expert", reason="check"), reply("I will answer myself.")])
    runner = Runner(Team([boss, Agent("expert")]), model=model)

    result = await runner.run("s", "question")

    assert result.output == "I will answer myself." and result.agent == "boss"
    [record] = result.handoffs
    assert not record.accepted and record.rejection == "handoff_hook_failed"
    fed_back = model.requests[1].messages[-1]
    assert fed_back.kind == "tool_result" and "handoff_hook_failed" not in fed_back.text
    assert "on_handoff hook" in fed_back.text


class FailingSummarizer:
    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise ModelError("summarizer down", code="model_error")


async def test_a_failed_summary_leaves_nothing_of_the_handoff_and_tries_the_fallback() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", history="summary")])
    team = Team([triage, Agent("billing"), Agent("support")], fallback="support",
                summarizer=Summarizer(model=FailingSummarizer()))
    runner = Runner(team, model=ScriptedModel([transfer("billing"), reply("Support.")]))

    result = await runner.run("s", "charged twice")

    assert result.agent == "support" and result.status is RunStatus.COMPLETED
    first = result.handoffs[0]
    assert (first.target, first.accepted, first.rejection) == (
        "billing", False, "summary_failed")
    state = await runner.get_session("s")
    assert state is not None
    assert not any("Transferred to billing" in m.text for m in state.messages)


async def test_a_failed_summary_without_fallback_fails_with_a_stable_code() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", history="summary")])
    team = Team([triage, Agent("billing")], summarizer=Summarizer(model=FailingSummarizer()))
    runner = Runner(team, model=ScriptedModel([transfer("billing")]))

    result = await runner.run("s", "charged twice")

    assert result.error is not None and result.error.code == "summary_failed"
    assert isinstance(result.error.exception, ModelError)
    state = await runner.get_session("s")
    assert state is not None and state.active_agent == "triage"


async def test_summaries_accumulate_over_chained_handoffs() -> None:
    triage = Agent("triage", handoffs=[Handoff("researcher", history="summary")])
    researcher = Agent("researcher", handoffs=[Handoff("closer", history="summary")])
    summaries = ScriptedModel([
        reply("S1: the user asks about the refund for order A-77."),
        lambda request: reply("S2: " + request.messages[0].text[-60:]),
    ])
    team = Team([triage, researcher, Agent("closer")],
                summarizer=Summarizer(model=summaries))
    model = ScriptedModel([transfer("researcher"), call("transfer_to_closer", reason="done"),
                           reply("Closing.")])

    await Runner(team, model=model).run("s", "Where is the refund for order A-77?")

    second = summaries.requests[1].messages[0].text
    assert "refund for order A-77" in second  # the researcher's incoming summary
    closer_request = model.requests[2]
    assert "A-77" in closer_request.messages[0].text  # the note carries the summary


async def test_an_exception_keeps_its_traceback_and_is_chained() -> None:
    def instructions(ctx: object) -> str:
        return {"a": 1}["missing"]  # type: ignore[return-value]

    runner = Runner(Team([Agent("solo", instructions=instructions)]),
                    model=ScriptedModel([reply("never")]))

    result = await runner.run("s", "hi")

    assert result.error is not None and result.error.code == "internal_error"
    exc = result.error.exception
    assert isinstance(exc, KeyError) and exc.__traceback__ is not None
    assert "missing" in result.error.to_dict()["message"]
    assert "exception" not in result.error.to_dict()
    with pytest.raises(RunFailed) as raised:
        result.raise_for_status()
    assert raised.value.__cause__ is exc


async def test_failed_turns_tool_errors_and_refusals_are_logged_with_their_session(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from handoffs import tool

    @tool
    def lookup(order_id: str) -> str:
        """Look an order up."""
        raise ValueError("database down")

    triage = Agent("triage", tools=[lookup], handoffs=["billing"])
    model = ScriptedModel([call("lookup", order_id="A1"), transfer("nobody"),
                           RuntimeError("provider exploded")])
    runner = Runner(Team([triage, Agent("billing")]), model=model)

    with caplog.at_level(logging.INFO, logger="handoffs"):
        await runner.run("sess-9", "hello")

    by_message = {r.getMessage(): r for r in caplog.records}
    tool_error = next(r for m, r in by_message.items() if "lookup" in m)
    assert tool_error.levelno == logging.WARNING and tool_error.exc_info is not None
    refusal = next(r for m, r in by_message.items() if "refused" in m)
    assert refusal.levelno == logging.INFO
    failed = next(r for m, r in by_message.items() if "failed (model_error)" in m)
    assert failed.levelno == logging.WARNING and failed.exc_info is not None
    for r in (tool_error, refusal, failed):
        assert (r.session_id, r.turn, r.agent) == ("sess-9", 1, "triage")  # type: ignore[attr-defined]


def test_without_logging_configured_only_the_first_failure_is_one_line() -> None:
    # Nothing else is printed unless the application configures logging (no traceback,
    # no INFO records); tests/test_first_failure.py has the rest of this behaviour.
    import subprocess
    import sys

    code = ("import asyncio\nfrom handoffs import Agent, Runner, Team\n"
            "from handoffs.testing import ScriptedModel\n"
            "r = Runner(Team([Agent('a')]), model=ScriptedModel([RuntimeError('x')]))\n"
            "print(asyncio.run(r.run('s', 'hi')).error.code)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "model_error"
    assert done.stderr.startswith("handoffs: turn 1 of s failed (model_error): RuntimeError: x")
    assert done.stderr.count("\n") == 1
