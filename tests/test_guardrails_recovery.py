"""Guardrails (per agent, never inherited), error recovery, timeouts."""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from handoffs import (
    Agent,
    GuardrailResult,
    Handoff,
    ModelError,
    RunContext,
    Runner,
    RunStatus,
    Team,
    tool,
)
from handoffs.core.guardrails import deny_patterns, json_output, max_length
from handoffs.models import ModelRequest, ModelResponse
from handoffs.testing import ScriptedModel, call, reply, transfer


def no_secrets(ctx: RunContext, text: str) -> GuardrailResult:
    if "password" in text.lower():
        return GuardrailResult.trip("Never share passwords.")
    return GuardrailResult.ok()


async def test_input_guardrail_of_the_active_agent_stops_the_turn() -> None:
    model = ScriptedModel([])
    runner = Runner(Team([Agent("triage", input_guardrails=[no_secrets])]), model=model)
    events = [e async for e in runner.stream("s", "my password is hunter2")]
    result = events[-1].result
    assert result.status is RunStatus.FAILED and result.error.code == "guardrail_tripped"
    assert result.error.message == "Never share passwords."
    assert "guardrail_tripped" in [e.type for e in events]
    assert len(model.requests) == 1  # the first model call ran beside the check: dropped
    state = await runner.get_session("s")
    assert state is not None and state.messages[0].text == "my password is hunter2"


async def test_a_handoff_target_checks_the_message_again_when_its_route_asks() -> None:
    triage = Agent("triage", handoffs=[Handoff("billing", check_input=True)])
    billing = Agent("billing", input_guardrails=[max_length(10)])
    model = ScriptedModel([transfer("billing")])
    result = await Runner(Team([triage, billing]), model=model).run("s", "a long message")
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "guardrail_tripped" and result.error.agent == "billing"


async def test_guardrails_are_not_inherited_through_a_handoff() -> None:
    triage = Agent("triage", handoffs=["billing"], output_guardrails=[deny_patterns(["refund"])])
    billing = Agent("billing")
    model = ScriptedModel([transfer("billing"), reply("Your refund is on its way.")])
    result = await Runner(Team([triage, billing]), model=model).run("s", "x")
    assert result.status is RunStatus.COMPLETED


async def test_output_guardrail_checks_the_final_answer() -> None:
    class Answer(BaseModel):
        ok: bool

    agent = Agent("api", output_guardrails=[json_output(Answer)])
    result = await Runner(Team([agent]), model=ScriptedModel([reply("not json")])).run("s", "x")
    assert result.status is RunStatus.FAILED and result.error is not None
    assert "not valid Answer JSON" in result.error.message

    good = await Runner(Team([agent]), model=ScriptedModel([reply('{"ok": true}')])).run("s", "x")
    assert good.status is RunStatus.COMPLETED


async def test_async_guardrails_work() -> None:
    async def slow_check(ctx: RunContext, text: str) -> GuardrailResult:
        await asyncio.sleep(0)
        return GuardrailResult.trip("nope") if text == "bad" else GuardrailResult.ok()

    runner = Runner(Team([Agent("a", input_guardrails=[slow_check])]),
                    model=ScriptedModel([reply("thrown away"), reply("fine")]))
    assert (await runner.run("s", "bad")).status is RunStatus.FAILED
    assert (await runner.run("t", "good")).output == "fine"


def recovery_team(**kw: object) -> Team:
    return Team([Agent("billing", **kw), Agent("supervisor")],  # type: ignore[arg-type]
                fallback="supervisor")


async def test_a_model_error_hands_off_to_the_fallback_with_the_error() -> None:
    model = ScriptedModel([ModelError("upstream 503", "model_error"),
                           reply("Supervisor here; billing is down, I can help.")])
    runner = Runner(recovery_team(), model=model)
    result = await runner.run("s", "invoice?")
    assert result.status is RunStatus.COMPLETED and result.agent == "supervisor"
    record = result.handoffs[0]
    assert record.reason.value == "error_recovery"
    assert record.extra["error"] == {"code": "model_error", "message": "upstream 503",
                                     "agent": "billing"}
    assert "upstream 503" in model.requests[1].messages[-1].text  # the handoff's note


async def test_a_tool_with_on_error_escalate_triggers_recovery() -> None:
    @tool(on_error="escalate")
    def charge() -> str:
        """Charge the card."""
        raise RuntimeError("gateway down")

    model = ScriptedModel([call("charge"), reply("I'll take it from here.")])
    result = await Runner(recovery_team(tools=[charge]), model=model).run("s", "pay")
    assert result.agent == "supervisor"
    assert result.handoffs[0].extra["error"]["code"] == "tool_error"


async def test_a_guardrail_trip_with_a_fallback_recovers() -> None:
    model = ScriptedModel([reply("here is the password: x")])
    model.add(reply("Sorry, I can't share that."))
    team = recovery_team(output_guardrails=[no_secrets])
    result = await Runner(team, model=model).run("s", "x")
    assert result.agent == "supervisor" and result.output == "Sorry, I can't share that."
    assert result.handoffs[0].extra["error"]["code"] == "guardrail_tripped"


async def test_without_a_fallback_the_error_fails_the_run() -> None:
    model = ScriptedModel([ModelError("too many requests", "rate_limited")])
    result = await Runner(Team([Agent("billing")]), model=model).run("s", "x")
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "rate_limited"


async def test_a_fallback_that_fails_ends_the_run_without_loops() -> None:
    model = ScriptedModel([ModelError("down", "model_error"), ModelError("also down")])
    result = await Runner(recovery_team(), model=model).run("s", "x")
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.agent == "supervisor"
    assert len(model.requests) == 2


class Sleepy:
    """A model that sleeps for one agent: to exercise timeouts without a real provider."""

    def __init__(self, slow_agent: str, seconds: float) -> None:
        self.slow_agent = slow_agent
        self.seconds = seconds

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.agent == self.slow_agent:
            await asyncio.sleep(self.seconds)
        if request.agent == "billing" and request.messages[-1].role == "user":
            from handoffs.core.messages import ToolCall

            return ModelResponse("", (ToolCall("c", "transfer_to_policy", "{}"),))
        return ModelResponse(f"{request.agent} answered")

    async def stream(self, request):  # type: ignore[no-untyped-def]
        yield await self.complete(request)


async def test_agent_timeout_is_an_error_with_code_timeout() -> None:
    team = Team([Agent("billing", timeout=0.05)])
    result = await Runner(team, model=Sleepy("billing", 5)).run("s", "x")
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "timeout"


async def test_agent_timeout_recovers_through_the_fallback() -> None:
    team = Team([Agent("billing", timeout=0.05), Agent("supervisor")], fallback="supervisor")
    result = await Runner(team, model=Sleepy("billing", 5)).run("s", "x")
    assert result.agent == "supervisor" and result.output == "supervisor answered"


async def test_delegation_timeout_comes_back_to_the_caller_as_an_error() -> None:
    billing = Agent("billing", handoffs=[Handoff("policy", returns=True, timeout=0.05)])
    team = Team([billing, Agent("policy")])
    result = await Runner(team, model=Sleepy("policy", 5)).run("s", "x")
    assert result.output == "billing answered"
    record = result.handoffs[0]
    assert record.extra["error"]["code"] == "timeout"
