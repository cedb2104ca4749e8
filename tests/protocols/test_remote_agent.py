"""A remote agent in a team, against an A2A server built with the a2a-sdk's own classes
in a process of its own (remote_billing.py): transfer, input-required across turns,
delegation, a tool-only answer, a cancelled task, a remote that is down, auth-required."""

from __future__ import annotations

import asyncio
import time

from handoffs import Agent, Handoff, HumanAgent, RemoteAgent, Runner, RunStatus, Team
from handoffs.testing import ScriptedModel, call, reply, transfer
from service.conftest import free_port
from telemetry.conftest import Otel

from .conftest import Remote


def team(url: str, **kw: object) -> Team:
    triage = Agent("triage", instructions="Route the customer.",
                   handoffs=["billing", Handoff("billing_desk", returns=True)])
    billing = RemoteAgent("billing", url)
    desk = RemoteAgent("billing_desk", url, description="Billing, for a quick answer.")
    helper = Agent("helper", description="Answers when others fail.")
    return Team([triage, billing, desk, helper], fallback="helper", **kw)  # type: ignore[arg-type]


def test_the_description_and_capabilities_come_from_the_card(remote: Remote) -> None:
    billing = RemoteAgent("billing", remote.url)
    assert billing.description == "Refunds, invoices and balances."
    assert set(billing.capabilities) == {"refunds", "billing"}
    plan = team(remote.url).plan("triage")
    assert plan.routes["transfer_to_billing"].spec.description.count("Refunds") == 1


async def test_a_transfer_to_a_remote_agent_that_asks_for_input_then_completes(
        remote: Remote) -> None:
    model = ScriptedModel([transfer("billing", reason="refund wanted", order="A1")])
    runner = Runner(team(remote.url), model=model)
    events = [e async for e in runner.stream("s1", "I want a refund please")]
    first = events[-1].result
    assert first.status is RunStatus.COMPLETED and first.agent == "billing"
    assert first.output == "What is your order number?"
    said = [e for e in events if e.type == "message"]
    assert said[-1]["agent"] == "billing"
    assert [e["agent"] for e in events if e.type == "text_delta"] == ["billing"]
    status = [e for e in events if e.type == "remote_status"][-1]
    assert status["state"] == "input-required"
    state = await runner.get_session("s1")
    assert state is not None and state.active_agent == "billing"
    task = state.metadata["a2a_tasks"]["billing"]

    second = await runner.run("s1", "A-1234")
    assert second.status is RunStatus.COMPLETED and second.agent == "billing"
    assert second.output == "Refund for order A-1234 approved."
    sent = remote.received()
    assert [m["context_id"] for m in sent] == ["s1", "s1"]  # the session is the context
    assert sent[1]["task_id"] == task and sent[1]["continues"]
    handoff = sent[0]["data"][0]["handoff"]
    assert handoff["source"] == "triage" and handoff["kind"] == "transfer"
    assert handoff["note"].startswith("# Handoff") and "refund wanted" in handoff["note"]
    assert handoff["payload"] is None or isinstance(handoff["payload"], dict)
    assert sent[1]["data"] == []  # a continued task: the remote side has its history
    state = await runner.get_session("s1")
    assert state is not None and "a2a_tasks" not in state.metadata
    assert len(model.requests) == 1  # the remote agent answered both turns itself

    third = await runner.run("s1", "What is my balance?")  # sticky: a new task, same context
    assert third.agent == "billing" and third.output == "Your balance is 0 EUR."
    third_sent = remote.received()[2]
    assert third_sent["task_id"] != task
    assert third_sent["data"][0]["history"] == []  # it saw the context up to its answer


async def test_a_streamed_answer_arrives_as_deltas_with_the_remote_agent_as_author(
        remote: Remote) -> None:
    runner = Runner(team(remote.url), model=ScriptedModel([transfer("billing")]))
    events = [e async for e in runner.stream("s2", "my balance?")]
    deltas = [e["text"] for e in events if e.type == "text_delta"]
    assert "".join(deltas) == "Your balance is 0 EUR." and len(deltas) == 2
    assert {e["agent"] for e in events if e.type == "text_delta"} == {"billing"}


async def test_a_delegation_to_a_remote_agent_returns_its_answer_to_the_caller(
        remote: Remote) -> None:
    model = ScriptedModel([call("ask_billing_desk", reason="balance", task="balance of A1?"),
                           reply("Billing says: 0 EUR.")])
    runner = Runner(team(remote.url), model=model)
    result = await runner.run("s3", "How much do I owe?")
    assert result.status is RunStatus.COMPLETED and result.agent == "triage"
    assert result.output == "Billing says: 0 EUR."
    sent = remote.received()[0]
    assert sent["text"] == "balance of A1?"
    assert sent["data"][0]["handoff"]["kind"] == "delegation"
    seen = model.requests[1].messages[-1]
    assert "Your balance is 0 EUR." in seen.text


async def test_a_tool_only_answer_is_delivered_as_its_data(remote: Remote) -> None:
    runner = Runner(team(remote.url), model=ScriptedModel([transfer("billing")]))
    result = await runner.run("s4", "send the tool only invoice")
    assert result.status is RunStatus.COMPLETED and result.agent == "billing"
    assert '"invoice": "INV-7"' in result.output


async def test_a_cancelled_task_fails_the_agent_and_the_fallback_answers(
        remote: Remote) -> None:
    model = ScriptedModel({"triage": [transfer("billing")],
                           "helper": [reply("Sorry, billing stopped; I can help.")]})
    runner = Runner(team(remote.url), model=model)
    result = await runner.run("s5", "cancel my subscription")
    assert result.status is RunStatus.COMPLETED and result.agent == "helper"
    recovery = result.handoffs[-1]
    assert recovery.reason.value == "error_recovery"
    assert recovery.extra["error"]["code"] == "remote_failed"
    assert "cancelled" in recovery.extra["error"]["message"]


async def test_a_failed_task_without_fallback_fails_the_turn_with_its_code(
        remote: Remote) -> None:
    triage = Agent("triage", handoffs=["billing"])
    runner = Runner(Team([triage, RemoteAgent("billing", remote.url)]),
                    model=ScriptedModel([transfer("billing")]))
    result = await runner.run("s6", "explode please")
    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "remote_failed"
    assert "ledger is down" in result.error.message


async def test_a_remote_agent_that_is_down_fails_with_its_code_and_the_fallback_answers(
        ) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    triage = Agent("triage", handoffs=["billing"])
    billing = RemoteAgent("billing", url, description="Billing (remote).", timeout=5)
    helper = Agent("helper")
    model = ScriptedModel({"triage": [transfer("billing")],
                           "helper": [reply("Billing is unreachable; I will help.")]})
    runner = Runner(Team([triage, billing, helper], fallback="helper"), model=model)
    events = [e async for e in runner.stream("s7", "refund please")]
    result = events[-1].result
    assert result.status is RunStatus.COMPLETED and result.agent == "helper"
    error = result.handoffs[-1].extra["error"]
    assert error["code"] == "remote_unreachable" and error["agent"] == "billing"
    moved = [e for e in events if e.type == "agent_handoff"][-1]
    assert moved["reason"] == "error_recovery" and moved["target"] == "helper"


def test_a_remote_agent_whose_card_cannot_be_read_is_refused_with_its_code() -> None:
    import pytest

    from handoffs import HandoffsError

    with pytest.raises(HandoffsError) as caught:
        RemoteAgent("billing", f"http://127.0.0.1:{free_port()}", timeout=2)
    assert caught.value.code == "remote_unreachable"
    assert "description=" in str(caught.value)


async def test_auth_required_escalates_to_the_teams_person(remote: Remote) -> None:
    triage = Agent("triage", handoffs=["billing"])
    person = HumanAgent("operator", handoffs=["billing"])
    runner = Runner(Team([triage, RemoteAgent("billing", remote.url), person]),
                    model=ScriptedModel([transfer("billing")]))
    result = await runner.run("s8", "login to billing")
    assert result.status is RunStatus.WAITING_FOR_HUMAN and result.agent == "operator"
    record = result.handoffs[-1]
    assert record.reason.value == "escalation" and record.source == "billing"
    state = await runner.get_session("s8")
    assert state is not None and "billing" in state.metadata["a2a_tasks"]


async def test_a_traced_turn_shows_the_remote_agent_as_an_agent_of_its_own(
        remote: Remote, otel: Otel) -> None:
    runner = Runner(team(remote.url), model=ScriptedModel([transfer("billing")]),
                    telemetry=otel.telemetry)
    await runner.run("s9", "my balance?")
    agent = otel.one("invoke_agent billing")
    parent = otel.parent_of(agent)
    assert parent is not None and parent.name.startswith("invoke_workflow")
    assert not [s for s in otel.spans if s.name.startswith("chat")
                and otel.parent_of(s) is agent]  # no model of ours answered


async def test_a_delegation_left_waiting_does_not_make_the_next_one_an_answer(
        remote: Remote) -> None:
    model = ScriptedModel({"triage": [transfer("billing_desk", task="refund please"),
                                      reply("Billing needs your order number."),
                                      transfer("billing_desk", task="what is my balance?"),
                                      reply("Your balance is 0 EUR.")]})
    runner = Runner(team(remote.url), model=model)
    await runner.run("s10", "I want a refund")
    second = await runner.run("s10", "and my balance?")
    assert second.output == "Your balance is 0 EUR."
    sent = remote.received()
    assert [m["text"] for m in sent] == ["refund please", "what is my balance?"]
    assert sent[1]["task_id"] != sent[0]["task_id"] and not sent[1]["continues"]
    state = await runner.get_session("s10")
    assert state is not None and "a2a_tasks" not in state.metadata


async def test_a_failed_remote_agent_without_fallback_gives_the_conversation_back(
        remote: Remote) -> None:
    triage = Agent("triage", handoffs=["billing"])
    model = ScriptedModel({"triage": [transfer("billing"), reply("Back with triage.")]})
    runner = Runner(Team([triage, RemoteAgent("billing", remote.url)]), model=model)
    first = await runner.run("s11", "explode please")
    assert first.status is RunStatus.FAILED and first.error is not None
    assert first.error.code == "remote_failed"
    second = await runner.run("s11", "hello?")
    assert second.status is RunStatus.COMPLETED
    assert (second.agent, second.output) == ("triage", "Back with triage.")
    assert len(remote.received()) == 1  # the failed agent was not called again


async def test_after_a_fallback_took_over_the_failed_remote_agent_is_not_called_again(
        remote: Remote) -> None:
    model = ScriptedModel({"triage": [transfer("billing")],
                           "helper": [reply("Billing is down; I can help."),
                                      reply("Still here to help.")]})
    runner = Runner(team(remote.url), model=model)
    first = await runner.run("s12", "explode please")
    assert first.agent == "helper"
    second = await runner.run("s12", "so what now?")
    assert (second.agent, second.output) == ("helper", "Still here to help.")
    assert len(remote.received()) == 1


async def test_a_slow_remote_agent_times_out_and_its_task_is_cancelled(
        remote: Remote) -> None:
    triage = Agent("triage", handoffs=["billing"])
    billing = RemoteAgent("billing", remote.url, timeout=1)
    model = ScriptedModel({"triage": [transfer("billing"), reply("Triage again.")]})
    runner = Runner(Team([triage, billing]), model=model)
    first = await runner.run("s13", "slow please")
    assert first.status is RunStatus.FAILED and first.error is not None
    assert first.error.code == "remote_timeout"
    assert "did not answer within 1 s" in first.error.message
    assert "was cancelled" in first.error.message
    task = remote.received()[0]["task_id"]
    for _ in range(100):
        if remote.cancelled():
            break
        await asyncio.sleep(0.05)
    assert remote.cancelled() == [task]
    started = time.monotonic()
    second = await runner.run("s13", "hello?")
    assert time.monotonic() - started < 1
    assert (second.agent, second.output) == ("triage", "Triage again.")


async def test_the_handoff_note_is_sent_only_with_the_task_after_the_handoff(
        remote: Remote) -> None:
    model = ScriptedModel({"triage": [transfer("billing", reason="a balance question")]})
    runner = Runner(team(remote.url), model=model)
    await runner.run("s14", "what is my balance?")
    await runner.run("s14", "and again?")
    sent = remote.received()
    assert "handoff" in sent[0]["data"][0]
    assert not sent[1]["continues"]
    assert all("handoff" not in d for d in sent[1]["data"])


async def test_a_remote_agent_that_fails_on_a_later_message_is_not_called_again(
        remote: Remote) -> None:
    model = ScriptedModel({"triage": [transfer("billing")],
                           "helper": [reply("Billing is down; I can help."),
                                      reply("Still here to help.")]})
    runner = Runner(team(remote.url), model=model)
    first = await runner.run("s15", "what is my balance?")
    assert first.agent == "billing"
    second = await runner.run("s15", "explode please")
    assert second.agent == "helper"
    third = await runner.run("s15", "so what now?")
    assert (third.agent, third.output) == ("helper", "Still here to help.")
    assert len(remote.received()) == 2
