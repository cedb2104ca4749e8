"""AG-UI frontend tools over POST /v1/agui: the client's `tools` are offered to the agent;
a call of one ends the run with its TOOL_CALL_* events and RUN_FINISHED; the client's
next run, whose messages end with the `tool` message of its result, continues the turn.
Read back with the protocol's own types (ag_ui.core), against a real server on a real
port."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from handoffs import Agent, Runner, Team, tool
from handoffs.core.messages import ToolResult
from handoffs.testing import ScriptedModel, call, reply
from service.conftest import OPERATOR_KEY, Served, bearer, serving

pytest.importorskip("ag_ui", reason="ag-ui-protocol is not installed (the `agui` extra)")

from ag_ui.core import (
    AssistantMessage as AguiAssistant,
)
from ag_ui.core import (
    Event,
    FunctionCall,
    RunAgentInput,
    ToolMessage,
    UserMessage,
)
from ag_ui.core import Tool as AguiTool
from ag_ui.core import ToolCall as AguiToolCall
from pydantic import TypeAdapter

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)

ran: list[str] = []


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    ran.append(order_id)
    return f"{order_id}: charged twice"


CONFIRM = AguiTool(name="confirm_refund", description="Ask the user to confirm a refund.",
                   parameters={"type": "object",
                               "properties": {"order_id": {"type": "string"}},
                               "required": ["order_id"]})

MODEL = ScriptedModel()


def runner() -> Runner:
    global MODEL
    MODEL = ScriptedModel([call("confirm_refund", order_id="A-1"),
                           reply("You confirmed: the refund of A-1 is on its way.")])
    return Runner(Team([Agent("billing", tools=[lookup])]), model=MODEL)


@pytest.fixture
def served() -> Iterator[Served]:
    ran.clear()
    with serving(runner, agui=True) as s:
        yield s


def post(served: Served, thread: str, run_id: str, messages: list[Any],
         tools: list[AguiTool], token: str | None = None) -> tuple[int, Any]:
    body = RunAgentInput(thread_id=thread, run_id=run_id, state={}, tools=tools,
                         context=[], forwarded_props={}, messages=messages)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with served.client.stream("POST", "/v1/agui", json=body.model_dump(
            by_alias=True, exclude_none=True), headers=headers) as r:
        if r.status_code != 200:
            return r.status_code, r.read()
        return 200, [EVENTS.validate_json(line.removeprefix("data: "))
                     for line in r.iter_lines() if line.startswith("data: ")]


def transcript(served: Served, thread: str) -> list[dict[str, Any]]:
    r = served.client.get(f"/v1/sessions/{thread}/transcript", headers=bearer(OPERATOR_KEY))
    assert r.status_code == 200, r.text
    out: list[dict[str, Any]] = r.json()["messages"]
    return out


def approvals(served: Served, thread: str) -> dict[str, Any]:
    r = served.client.get(f"/v1/sessions/{thread}/approvals", headers=bearer(OPERATOR_KEY))
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


def kinds(events: list[Any]) -> list[str]:
    return [e.type.value if hasattr(e.type, "value") else e.type for e in events]


def test_a_call_of_the_clients_tool_ends_the_run_and_its_result_continues_the_turn(
        served: Served) -> None:
    ask = UserMessage(id="u1", content="refund A-1 please")
    status, events = post(served, "t-fe", "run-1", [ask], [CONFIRM])
    assert status == 200, events
    k = kinds(events)
    assert k[-1] == "RUN_FINISHED" and "RUN_ERROR" not in k
    assert k.index("TOOL_CALL_START") < k.index("TOOL_CALL_ARGS") < k.index("TOOL_CALL_END")
    start = next(e for e in events if kinds([e]) == ["TOOL_CALL_START"])
    args = next(e for e in events if kinds([e]) == ["TOOL_CALL_ARGS"])
    assert start.tool_call_name == "confirm_refund" and '"A-1"' in args.delta
    assert "TOOL_CALL_RESULT" not in k  # nothing ran here
    finished = events[-1]
    assert finished.outcome.type == "success"  # not an interrupt for a person
    assert finished.result["awaiting_tool_results"] == [start.tool_call_id]
    # The model was offered the client's tool, with its schema.
    offered = {s.name: s for s in MODEL.requests[0].tools}
    assert offered["confirm_refund"].parameters["required"] == ["order_id"]
    token = next(e.value["token"] for e in events if kinds([e]) == ["CUSTOM"]
                 and e.name == "handoffs_session")
    assert [m["kind"] for m in transcript(served, "t-fe")] == ["user"]  # not shown as run
    waiting = approvals(served, "t-fe")
    assert waiting["status"] == "waiting_for_approval"
    assert [(a["tool"], a["client"]) for a in waiting["approvals"]] == \
        [("confirm_refund", True)]

    # The client ran its tool: its next run ends with the result.
    cid = start.tool_call_id
    history = [ask,
               AguiAssistant(id="a1", tool_calls=[AguiToolCall(
                   id=cid, function=FunctionCall(name="confirm_refund",
                                                 arguments=args.delta))]),
               ToolMessage(id="r1", tool_call_id=cid, content="confirmed by the user")]
    status, events = post(served, "t-fe", "run-2", history, [CONFIRM], token)
    assert status == 200, events
    k = kinds(events)
    assert k[-1] == "RUN_FINISHED" and "RUN_ERROR" not in k
    assert "TOOL_CALL_RESULT" not in k  # the client has its own result
    said = "".join(e.delta for e in events if kinds([e]) == ["TEXT_MESSAGE_CONTENT"])
    assert said == "You confirmed: the refund of A-1 is on its way."
    assert "awaiting_tool_results" not in events[-1].result
    # The model read the client's result as the call's.
    seen = MODEL.requests[1].messages
    result = next(m for m in seen if isinstance(m, ToolResult))
    assert (result.call_id, result.text, result.is_error) == \
        (cid, "confirmed by the user", False)
    # The transcript holds the call and its result once.
    messages = transcript(served, "t-fe")
    assert [m["kind"] for m in messages] == ["user", "assistant", "tool_result", "assistant"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == [cid]
    assert (messages[2]["call_id"], messages[2]["text"]) == (cid, "confirmed by the user")
    assert approvals(served, "t-fe")["status"] == "idle" and ran == []

    # The same run sent again (a retry) decides nothing twice.
    status, again = post(served, "t-fe", "run-2", history, [CONFIRM], token)
    assert status == 200 and "RUN_ERROR" not in kinds(again)
    assert [m["kind"] for m in transcript(served, "t-fe")] == \
        ["user", "assistant", "tool_result", "assistant"]
    assert MODEL.remaining == 0


def test_a_result_for_a_call_that_does_not_wait_is_refused(served: Served) -> None:
    status, events = post(served, "t-fe2", "run-1",
                          [UserMessage(id="u1", content="refund A-1")], [CONFIRM])
    assert status == 200
    token = next(e.value["token"] for e in events if kinds([e]) == ["CUSTOM"]
                 and e.name == "handoffs_session")
    status, body = post(served, "t-fe2", "run-x",
                        [ToolMessage(id="r1", tool_call_id="call_nobody_made",
                                     content="yes")], [CONFIRM], token)
    assert status == 409, body
    assert b"no_pending_tool_call" in body and b"call_nobody_made" in body
    # The call that does wait still waits: nothing was decided.
    waiting = approvals(served, "t-fe2")
    assert waiting["status"] == "waiting_for_approval"
    assert [a["decision"] for a in waiting["approvals"]] == [None]
    # A new message while the client's result is awaited is refused, saying why.
    status, events = post(served, "t-fe2", "run-y",
                          [UserMessage(id="u2", content="hello?")], [CONFIRM], token)
    assert status == 200
    error = next(e for e in events if kinds([e]) == ["RUN_ERROR"])
    assert error.code == "waiting_for_approval"


def test_a_client_tool_named_like_a_team_tool_is_refused(served: Served) -> None:
    clash = AguiTool(name="lookup", description="The client's lookup.",
                     parameters={"type": "object", "properties": {}})
    status, body = post(served, "t-fe3", "run-1",
                        [UserMessage(id="u1", content="hi")], [clash])
    assert status == 409
    assert b"tool_name_taken" in body and b"lookup" in body
    r = served.client.get("/v1/sessions/t-fe3", headers=bearer(OPERATOR_KEY))
    assert r.status_code == 404  # nothing stored
