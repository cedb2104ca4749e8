"""A turn that waits for a person's approval is one trace, however long the wait and
whichever process decides: the decision is an `approval {tool}` span from the request to
the decision, the continued part is a child of the first part's `invoke_workflow`, every
event of both has the trace id; approvals are logged; the handoff records of the turn get
its final outcome, so `handoffs stats` counts a route whose turn failed after an approval
as failed. Also: a user's pick and an operator's hand-back are spans in the session's
last trace, not traces of their own."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.trace import StatusCode

from handoffs import Agent, Handoff, HumanAgent, Runner, RunStatus, Team, tool
from handoffs.telemetry import Telemetry
from handoffs.testing import ScriptedModel, call, reply, transfer
from stores.conftest import Backend, backend_for

from .conftest import Otel


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


@tool(needs_approval=True)
def credit(order_id: str) -> str:
    """Give store credit."""
    return f"credited {order_id}"


def team() -> Team:
    return Team([Agent("triage", handoffs=["billing"]),
                 Agent("billing", tools=[refund, credit])])


def script(*then: Any) -> ScriptedModel:
    return ScriptedModel({"triage": [transfer("billing", reason="refund")],
                          "billing": [[call("refund", order_id="A1"),
                                       call("credit", order_id="A1")], *then]})


def ids(events: Any) -> set[str]:
    return {e.data.get("trace_id", "none") for e in events}


async def test_an_approved_turn_is_one_trace_with_the_wait_as_a_span(
        otel: Otel, tmp_path: Path) -> None:
    """Decided through another runner on the same SQLite file (another process, after a
    restart): the link to the trace is stored with the session."""
    db = f"sqlite:///{tmp_path / 's.db'}"
    paused = await Runner(team(), model=script(), store=db,
                          telemetry=otel.telemetry).run("s1", "refund A1")
    assert paused.status is RunStatus.WAITING_FOR_APPROVAL
    calls = [e.data["call_id"] for e in paused.events if e.type == "approval_requested"]

    other = Runner(team(), model=ScriptedModel({"billing": [reply("Done.")]}), store=db,
                   telemetry=otel.telemetry)
    first = await other.approve("s1", calls[0])
    done = await other.reject("s1", calls[1], "no credit")

    assert first.status is RunStatus.WAITING_FOR_APPROVAL and done.output == "Done."
    assert otel.tree() == [("invoke_workflow", [
        ("invoke_agent triage", [("chat", []), ("execute_tool transfer_to_billing", [])]),
        ("invoke_agent billing", [("chat", [])]),
        ("approval refund", []),
        ("approval credit", []),
        ("invoke_workflow", [
            # the rejected call is answered first (it never runs), then the approved runs
            ("invoke_agent billing", [("execute_tool credit", []),
                                      ("execute_tool refund", []), ("chat", [])])]),
    ])]
    roots = otel.named("invoke_workflow")
    assert [r.attributes["handoffs.turn.status"] for r in roots] == [
        "waiting_for_approval", "completed"]
    assert roots[1].attributes["handoffs.turn.continued"] is True
    assert [r.attributes["handoffs.turn"] for r in roots] == [1, 1]
    # the request as a span event of the agent that waits
    billing = otel.named("invoke_agent billing")[0]
    assert [(ev.name, ev.attributes["gen_ai.tool.name"]) for ev in billing.events] == [
        ("approval_requested", "refund"), ("approval_requested", "credit")]
    # each decision: from the request to the decision, what was decided
    refunded, credited = otel.one("approval refund"), otel.one("approval credit")
    assert refunded.attributes["handoffs.approval.approved"] is True
    assert credited.attributes["handoffs.approval.approved"] is False
    assert "handoffs.approval.reason" not in credited.attributes  # content: not captured
    assert refunded.start_time <= billing.end_time + 10_000_000  # type: ignore[operator]
    assert credited.end_time >= refunded.end_time  # type: ignore[operator]
    rejected = otel.one("execute_tool credit")
    assert rejected.status.status_code is StatusCode.ERROR
    assert rejected.attributes["error.type"] == "not_approved"
    # every event of every part carries the one trace id
    trace_id = format(roots[0].context.trace_id, "032x")  # type: ignore[union-attr]
    assert ids(paused.events) == ids(first.events) == ids(done.events) == {trace_id}


async def test_approval_waits_are_measured(otel: Otel) -> None:
    runner = Runner(team(), model=script(reply("Done.")), telemetry=otel.telemetry)
    paused = await runner.run("s1", "refund A1")
    calls = [e.data["call_id"] for e in paused.events if e.type == "approval_requested"]
    await runner.approve("s1", calls[0])
    await runner.reject("s1", calls[1])

    waits = otel.points("handoffs.approval.wait")
    assert sorted((a["gen_ai.tool.name"], a["handoffs.approval.decision"], n)
                  for a, n in waits) == [("credit", "rejected", 1), ("refund", "approved", 1)]


async def test_approvals_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    runner = Runner(team(), model=script(reply("Done.")))
    with caplog.at_level(logging.INFO, logger="handoffs.runtime.approval"):
        paused = await runner.run("s1", "refund A1")
        calls = [e.data["call_id"] for e in paused.events if e.type == "approval_requested"]
        await runner.approve("s1", calls[0])
        await runner.reject("s1", calls[1], "not today")

    lines = [(r.getMessage(), r.session_id, r.agent)  # type: ignore[attr-defined]
             for r in caplog.records if r.name == "handoffs.runtime.approval"]
    assert lines == [
        (f"billing waits for a person's approval of refund ({calls[0]}), credit ({calls[1]})",
         "s1", "billing"),
        (f"call refund ({calls[0]}) of billing approved", "s1", "billing"),
        (f"call credit ({calls[1]}) of billing rejected", "s1", "billing"),  # no reason:
    ]  # a person's words are content, logged only when captured


async def test_a_delegate_that_waited_goes_on_under_its_caller(otel: Otel) -> None:
    """The delegate's continued activation nests under its caller's, and the caller is
    current again once the delegate answers."""
    team = Team([Agent("triage", handoffs=[Handoff("billing", returns=True)]),
                 Agent("billing", tools=[refund])])
    model = ScriptedModel({"triage": [transfer("billing", task="Refund A1."),
                                      reply("Refund made.")],
                           "billing": [call("refund", order_id="A1"), reply("Refunded.")]})
    runner = Runner(team, model=model, telemetry=otel.telemetry)
    paused = await runner.run("s1", "refund A1")
    [cid] = [e.data["call_id"] for e in paused.events if e.type == "approval_requested"]
    done = await runner.approve("s1", cid)

    assert done.output == "Refund made."
    [_, rest] = otel.tree()[0][1][-2:]
    assert rest == ("invoke_workflow", [
        ("invoke_agent triage", [
            ("invoke_agent billing", [("execute_tool refund", []), ("chat", [])]),
            ("chat", [])])])


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    async with backend_for(request.param, tmp_path) as b:
        yield b


async def test_a_route_whose_turn_failed_after_an_approval_counts_as_failed(
        backend: Backend) -> None:
    """The transfer was stored with the first part (`waiting_for_approval`); the turn then
    failed: the record's outcome is `failed`, on every store."""
    store = backend.open()
    runner = Runner(team(), model=script(RuntimeError("billing is down")), store=store,
                    telemetry=False)
    paused = await runner.run("s1", "refund A1")
    calls = [e.data["call_id"] for e in paused.events if e.type == "approval_requested"]
    await runner.approve("s1", calls[0])
    stats = await store.handoff_stats()
    [route] = stats.routes
    assert route.failed == 0  # still waiting: not failed (yet)

    failed = await runner.approve("s1", calls[1])

    assert failed.error is not None
    [route] = (await store.handoff_stats()).routes
    assert (route.source, route.target, route.failed, route.failed_share) == (
        "triage", "billing", 1, 1.0)


async def test_a_users_pick_and_an_operators_hand_back_join_the_sessions_trace(
        otel: Otel) -> None:
    team = Team([Agent("triage", handoffs=["operator"]), Agent("billing"),
                 HumanAgent("operator", handoffs=["triage"])])
    runner = Runner(team, model=ScriptedModel({"triage": [transfer("operator")]}),
                    telemetry=otel.telemetry)
    waiting = await runner.run("s1", "a person please")
    handed = await runner.reply_as_human("s1", "Sorted; back to triage.", handoff_to="triage")
    await runner.select_agent("s1", "billing")

    assert waiting.status is RunStatus.WAITING_FOR_HUMAN
    assert len({s.context.trace_id for s in otel.spans}) == 1  # type: ignore[union-attr]
    root = otel.one("invoke_workflow")
    back, pick = otel.one("handoff triage"), otel.one("handoff billing")
    assert otel.parent_of(back) == root and otel.parent_of(pick) == root
    assert back.attributes["gen_ai.operation.name"] == "handoff"
    assert back.attributes["handoffs.handoff.kind"] == "programmatic"
    assert pick.attributes["handoffs.handoff.kind"] == "user_request"
    assert pick.attributes["handoffs.handoff.accepted"] is True
    trace_id = format(root.context.trace_id, "032x")  # type: ignore[union-attr]
    assert ids(handed.events) == {trace_id}


async def test_a_refused_pick_is_an_error_span(otel: Otel) -> None:
    from handoffs import HandoffsError

    team = Team([Agent("triage"), Agent("billing", user_selectable=False)])
    runner = Runner(team, telemetry=otel.telemetry)
    with pytest.raises(HandoffsError):
        await runner.select_agent("s1", "billing")

    span = otel.one("handoff billing")
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["error.type"] == "not_user_selectable"
    assert span.parent is None  # the session has no trace yet: a trace of its own


async def test_content_of_a_decision_and_a_delegation_is_captured_when_asked(
        otel: Otel) -> None:
    telemetry = Telemetry(tracer_provider=otel.telemetry.tracer_provider,
                          capture_content=True)
    runner = Runner(team(), model=script(reply("Done.")), telemetry=telemetry)
    paused = await runner.run("s1", "refund A1")
    calls = [e.data["call_id"] for e in paused.events if e.type == "approval_requested"]
    await runner.approve("s1", calls[0])
    await runner.reject("s1", calls[1], "not today")

    assert otel.one("approval credit").attributes["handoffs.approval.reason"] == "not today"
