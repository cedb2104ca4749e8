"""POST /v1/agui: a turn streamed as AG-UI events, read back with the protocol's own
types (ag_ui.core), against a real server on a real port."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from handoffs import Agent, Handoff, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer
from service.conftest import OPERATOR_KEY, Served, serving

pytest.importorskip("ag_ui", reason="ag-ui-protocol is not installed (the `agui` extra)")

from ag_ui.core import Event, RunAgentInput, UserMessage
from pydantic import TypeAdapter

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)


@tool
def lookup(ctx: RunContext, order_id: str) -> str:
    """Look an order up."""
    ctx.shared["last_order"] = order_id
    return f"{order_id}: charged twice"


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


def runner() -> Runner:
    triage = Agent("triage", description="Routes.", handoffs=[Handoff("billing")])
    billing = Agent("billing", description="Billing.", tools=[lookup, refund])
    model = ScriptedModel({
        "triage": [transfer("billing", reason="a double charge")],
        "billing": [call("lookup", order_id="A-1"), reply("A-1 was charged twice."),
                    call("refund", order_id="A-1"), reply("A-1 is refunded."),
                    reply("Anything else?")],
    })
    return Runner(Team([triage, billing]), model=model)


@pytest.fixture
def served() -> Iterator[Served]:
    with serving(runner, agui=True) as s:
        yield s


def run(served: Served, thread: str, text: str | None, token: str | None = None,
        resume: list[dict[str, Any]] | None = None) -> list[Any]:
    """One AG-UI run; its events parsed by the protocol's own types."""
    body = RunAgentInput(thread_id=thread, run_id=f"run-{text}", state={}, tools=[],
                         context=[], forwarded_props={},
                         messages=[UserMessage(id="u1", content=text)] if text else [])
    data = body.model_dump(by_alias=True, exclude_none=True)
    if resume is not None:
        data["resume"] = resume
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with served.client.stream("POST", "/v1/agui", json=data, headers=headers) as r:
        assert r.status_code == 200, r.read()
        assert r.headers["content-type"].startswith("text/event-stream")
        return [EVENTS.validate_json(line.removeprefix("data: "))
                for line in r.iter_lines() if line.startswith("data: ")]


def kinds(events: list[Any]) -> list[str]:
    return [e.type.value if hasattr(e.type, "value") else e.type for e in events]


def test_a_turn_streams_as_agui_events_with_the_handoff_and_shared_memory(
        served: Served) -> None:
    events = run(served, "t-1", "I was charged twice")
    k = kinds(events)
    assert k[0] == "RUN_STARTED" and k[-1] == "RUN_FINISHED"
    assert events[1].snapshot == {"active_agent": "triage", "shared": {}}
    session = next(e for e in events if k[events.index(e)] == "CUSTOM"
                   and e.name == "handoffs_session")
    token = session.value["token"]
    handoff = next(e for e in events if getattr(e, "name", None) == "handoff")
    assert handoff.value["source"] == "triage" and handoff.value["target"] == "billing"
    assert handoff.value["kind"] == "transfer" and handoff.value["reason"] == \
        "a double charge"
    assert handoff.value["trigger"] == "llm"
    deltas = [op.model_dump() for e in events if k[events.index(e)] == "STATE_DELTA"
              for op in e.delta]
    assert {"op": "replace", "path": "/active_agent", "value": "billing"} in deltas
    assert {"op": "add", "path": "/shared/last_order", "value": "A-1"} in deltas
    assert deltas.index({"op": "replace", "path": "/active_agent", "value": "billing"}) == 0
    start = next(e for e in events if k[events.index(e)] == "TOOL_CALL_START")
    assert start.tool_call_name == "lookup"
    args = next(e for e in events if k[events.index(e)] == "TOOL_CALL_ARGS")
    assert json.loads(args.delta) == {"order_id": "A-1"}
    result = next(e for e in events if k[events.index(e)] == "TOOL_CALL_RESULT")
    assert result.content == "A-1: charged twice"
    text_start = next(e for e in events if k[events.index(e)] == "TEXT_MESSAGE_START")
    assert text_start.name == "billing" and text_start.role == "assistant"
    content = "".join(e.delta for e in events if k[events.index(e)] == "TEXT_MESSAGE_CONTENT")
    assert content == "A-1 was charged twice."
    assert k.index("TEXT_MESSAGE_END") > k.index("TEXT_MESSAGE_START")
    assert events[-1].result["agent"] == "billing"

    # The thread is the session: the next run needs its token, and billing stays.
    refused = served.client.post("/v1/agui", json={
        "threadId": "t-1", "runId": "r", "messages": [
            {"id": "u2", "role": "user", "content": "hi"}]})
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
    # (The operator's run: it may decide, so the wait is an interrupt for it to answer.)
    again = run(served, "t-1", "refund it please", OPERATOR_KEY)
    assert again[1].snapshot["active_agent"] == "billing"
    assert not any(getattr(e, "name", None) == "handoff" for e in again)

    # The refund waits for a person: the run ends with an interrupt asking for a form.
    finished = again[-1]
    assert kinds(again)[-1] == "RUN_FINISHED" and finished.outcome.type == "interrupt"
    interrupt = finished.outcome.interrupts[0]
    assert interrupt.reason == "tool_approval"
    assert interrupt.metadata["tool"] == "refund"
    assert interrupt.response_schema["required"] == ["approved"]

    with served.client.stream("POST", "/v1/agui", headers={"Authorization": f"Bearer {token}"},
                              json={"threadId": "t-1", "runId": "r2", "messages": [],
                                    "resume": [{"interruptId": interrupt.id,
                                                "status": "resolved",
                                                "payload": {"approved": True}}]}) as r:
        assert r.status_code == 403  # deciding is the operator's in this team
    resumed = run(served, "t-1", None, OPERATOR_KEY, resume=[
        {"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": True}}])
    rk = kinds(resumed)
    assert rk[-1] == "RUN_FINISHED" and resumed[-1].outcome.type == "success"
    assert next(e for e in resumed if kinds([e])[0] == "TOOL_CALL_RESULT").content == \
        "refunded A-1"
    said = "".join(e.delta for e in resumed if kinds([e])[0] == "TEXT_MESSAGE_CONTENT")
    assert said == "A-1 is refunded."


def test_a_failed_turn_is_a_run_error_with_its_code() -> None:
    broken = Team([Agent("solo")])
    with serving(lambda: Runner(broken, model=ScriptedModel([])), agui=True) as s:
        events = run(s, "t-2", "hello")
    assert kinds(events)[-1] == "RUN_ERROR"
    assert events[-1].code == "script_exhausted"


def test_a_body_that_is_not_a_run_input_is_refused(served: Served) -> None:
    r = httpx.post(served.url + "/v1/agui", json={"hello": 1})
    assert r.status_code == 422 and r.json()["error"]["code"] == "validation_error"


def test_a_cancelled_interrupt_rejects_the_call_and_the_agent_goes_on() -> None:
    billing = Agent("billing", tools=[refund])
    model = ScriptedModel([call("refund", order_id="A-2"), reply("Not refunded, then.")])
    team = Team([billing], approvals_by="user")  # the user decides, with its own token
    with serving(lambda: Runner(team, model=model), agui=True) as s:
        waiting = run(s, "t-3", "refund A-2")
        token = next(e for e in waiting if getattr(e, "name", None) == "handoffs_session"
                     ).value["token"]
        interrupt = waiting[-1].outcome.interrupts[0]
        resumed = run(s, "t-3", None, token, resume=[
            {"interruptId": interrupt.id, "status": "cancelled",
             "payload": {"reason": "over the limit"}}])
    result = next(e for e in resumed if kinds([e])[0] == "TOOL_CALL_RESULT")
    assert "over the limit" in result.content
    said = "".join(e.delta for e in resumed if kinds([e])[0] == "TEXT_MESSAGE_CONTENT")
    assert said == "Not refunded, then."
    assert resumed[-1].outcome.type == "success"


def test_a_run_sent_again_with_its_run_id_is_answered_once_with_the_same_events(
        served: Served) -> None:
    first = run(served, "t-retry", "I was charged twice")
    token = next(e for e in first if getattr(e, "name", None) == "handoffs_session").value[
        "token"]
    again = run(served, "t-retry", "I was charged twice", token)  # the same runId

    def said(events: list[Any]) -> str:
        return "".join(e.delta for e in events if kinds([e])[0] == "TEXT_MESSAGE_CONTENT")

    assert said(again) == said(first) == "A-1 was charged twice."
    assert kinds(again)[-1] == "RUN_FINISHED"
    transcript = served.client.get("/v1/sessions/t-retry/transcript",
                                   headers={"Authorization": f"Bearer {token}"}).json()
    users = [m["text"] for m in transcript["messages"] if m["kind"] == "user"]
    assert users == ["I was charged twice"]


def test_a_resume_sent_again_decides_once_and_streams_the_continued_turn_again(
        served: Served) -> None:
    run(served, "t-resume", "I was charged twice")
    # The operator decides (the team's default): its run gets the interrupt to answer.
    paused = run(served, "t-resume", "refund it please", OPERATOR_KEY)
    interrupt = paused[-1].outcome.interrupts[0]
    decision = [{"interruptId": interrupt.id, "status": "resolved",
                 "payload": {"approved": True}}]

    resumed = run(served, "t-resume", None, OPERATOR_KEY, resume=decision)
    again = run(served, "t-resume", None, OPERATOR_KEY, resume=decision)

    assert kinds(again) == kinds(resumed)
    assert again[-1].outcome.type == "success"
