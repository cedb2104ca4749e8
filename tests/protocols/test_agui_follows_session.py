"""An AG-UI thread follows its session, read with the protocol's own types (ag_ui.core):
a call that the operator decides keeps the user's run open until the decision (no
interrupt the user cannot answer), a person's reply reaches the waiting run, a client
that kept its messages gets a MESSAGES_SNAPSHOT of what it missed, and a client that
aborts stops the server's turn."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest

from handoffs import Agent, HumanAgent, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer
from service.conftest import OPERATOR_KEY, serving

pytest.importorskip("ag_ui", reason="ag-ui-protocol is not installed (the `agui` extra)")

from ag_ui.core import Event
from pydantic import TypeAdapter

EVENTS: TypeAdapter[Any] = TypeAdapter(Event)
OP = {"Authorization": f"Bearer {OPERATOR_KEY}"}


def body(thread: str, *texts: tuple[str, str]) -> dict[str, Any]:
    """A RunAgentInput with these (role, text) messages."""
    return {"threadId": thread, "runId": f"r-{time.monotonic_ns()}", "state": {},
            "tools": [], "context": [], "forwardedProps": {},
            "messages": [{"id": f"m{i}", "role": role, "content": text}
                         for i, (role, text) in enumerate(texts)]}


async def stream(url: str, data: dict[str, Any], token: str | None = None,
                 until: str | None = None) -> list[Any]:
    """One run's events; with `until`, the stream is dropped once that event came."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    out: list[Any] = []
    async with httpx.AsyncClient(timeout=30) as http, \
            http.stream("POST", url + "/v1/agui", json=data, headers=headers) as r:
        assert r.status_code == 200, await r.aread()
        async for line in r.aiter_lines():
            if line.startswith("data: "):
                event = EVENTS.validate_json(line.removeprefix("data: "))
                out.append(event)
                if until is not None and kind(event) == until:
                    break
    return out


def kind(e: Any) -> str:
    return str(e.type.value if hasattr(e.type, "value") else e.type)


def said(events: list[Any]) -> str:
    return "".join(e.delta for e in events if kind(e) == "TEXT_MESSAGE_CONTENT")


def token_of(events: list[Any]) -> str:
    return str(next(e for e in events if getattr(e, "name", None) == "handoffs_session"
                    ).value["token"])


async def until(check: Any, seconds: float = 10) -> Any:
    deadline = time.monotonic() + seconds
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, "not in time"
        await asyncio.sleep(0.05)


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


async def test_an_operators_approval_reaches_the_users_open_run() -> None:
    def make() -> Runner:
        model = ScriptedModel([call("refund", order_id="A-3"), reply("A-3 is refunded.")])
        return Runner(Team([Agent("billing", tools=[refund])]), model=model)

    with serving(make, agui=True) as s:
        user = asyncio.create_task(stream(s.url, body("t-op", ("user", "refund A-3"))))
        sid = "t-op"

        def waiting() -> Any:
            r = httpx.get(f"{s.url}/v1/sessions/{sid}/approvals", headers=OP)
            return r.status_code == 200 and r.json()["approvals"]

        call_id = (await until(waiting))[0]["call_id"]
        await asyncio.sleep(0.2)
        assert not user.done()  # the user's run stays open: no interrupt it cannot answer
        r = httpx.post(f"{s.url}/v1/sessions/{sid}/approvals/{call_id}", headers=OP,
                       json={"approved": True})
        assert r.status_code == 200, r.text
        events = await asyncio.wait_for(user, 10)
    notice = next(e for e in events if getattr(e, "name", None) == "handoffs_waiting")
    assert notice.value["waiting_for"] == "approval" and notice.value["decides"] == "operator"
    assert any(kind(e) == "TOOL_CALL_RESULT" and e.content == "refunded A-3" for e in events)
    assert said(events) == "A-3 is refunded."
    assert kind(events[-1]) == "RUN_FINISHED" and events[-1].outcome.type == "success"


def escalating() -> Runner:
    desk = Agent("desk", description="The desk.", handoffs=["person"])
    person = HumanAgent("person", description="A person.", handoffs=["desk"])
    model = ScriptedModel([transfer("person", reason="asks for a person"),
                           reply("Glad it is sorted.")])
    return Runner(Team([desk, person]), model=model)


async def test_a_persons_reply_reaches_the_waiting_run_and_a_later_snapshot() -> None:
    with serving(escalating, agui=True) as s:
        first = asyncio.create_task(stream(s.url, body("t-esc", ("user", "a person please"))))
        await until(lambda: httpx.get(f"{s.url}/v1/sessions/t-esc", headers=OP).json()
                    .get("status") == "waiting_for_human")
        await asyncio.sleep(0.2)
        assert not first.done()
        r = httpx.post(f"{s.url}/v1/sessions/t-esc/human", headers=OP,
                       json={"text": "Hi, Sam here. How can I help?"})
        assert r.status_code == 200, r.text
        events = await asyncio.wait_for(first, 10)
        token = token_of(events)
        start = next(e for e in events if kind(e) == "TEXT_MESSAGE_START")
        assert start.name == "person"
        assert said(events) == "Hi, Sam here. How can I help?"
        assert events[-1].result["output"] == "Hi, Sam here. How can I help?"

        # The person answers again while the client has no run open; the client's next
        # run (its conversation without that answer) starts with a MESSAGES_SNAPSHOT.
        r = httpx.post(f"{s.url}/v1/sessions/t-esc/human", headers=OP,
                       json={"text": "Your account is fine now.", "handoff_to": "desk"})
        assert r.status_code == 200, r.text
        later = await stream(s.url, body("t-esc", ("user", "a person please"),
                                         ("assistant", "Hi, Sam here. How can I help?"),
                                         ("user", "thanks")), token)
    snapshot = next(e for e in later if kind(e) == "MESSAGES_SNAPSHOT")
    assert [kind(e) for e in later].index("MESSAGES_SNAPSHOT") < \
        [kind(e) for e in later].index("TEXT_MESSAGE_START")
    texts = [(m.role, m.content) for m in snapshot.messages]
    assert ("assistant", "Your account is fine now.") in texts
    assert said(later) == "Glad it is sorted."


@tool
async def slow_lookup(order_id: str) -> str:
    """Look an order up, slowly."""
    await asyncio.sleep(5)
    return f"{order_id}: found"


async def test_a_client_abort_stops_the_servers_turn() -> None:
    def make() -> Runner:
        model = ScriptedModel([call("slow_lookup", order_id="A-9"), reply("Found it.")])
        return Runner(Team([Agent("billing", tools=[slow_lookup])]), model=model)

    with serving(make, agui=True) as s:
        events = await stream(s.url, body("t-abort", ("user", "find A-9")),
                              until="TOOL_CALL_START")
        token = token_of(events)

        def ended() -> Any:
            r = httpx.get(f"{s.url}/v1/sessions/t-abort",
                          headers={"Authorization": f"Bearer {token}"}).json()
            return r if r["status"] == "idle" else None

        started_at = time.monotonic()
        await until(ended, 4)
        assert time.monotonic() - started_at < 4  # not the tool's 5 s
        transcript = httpx.get(f"{s.url}/v1/sessions/t-abort/transcript",
                               headers={"Authorization": f"Bearer {token}"}).json()
    texts = [m.get("text") for m in transcript["messages"]]
    assert "find A-9" in texts  # the user's message is kept
    assert "Found it." not in texts and "A-9: found" not in texts


@tool
def set_plan(ctx: RunContext, plan: str) -> str:
    """Change the customer's plan (in shared state)."""
    was = ctx.shared.get("plan")
    ctx.shared["plan"] = plan
    return f"plan {was} -> {plan}"


@tool
async def take_a_while() -> str:
    """Something slow, after the change."""
    await asyncio.sleep(0.5)
    return "done"


async def test_shared_state_goes_both_ways_and_a_tools_change_arrives_at_once() -> None:
    def make() -> Runner:
        model = ScriptedModel([call("set_plan", plan="gold"), call("take_a_while"),
                               reply("You are on gold now.")])
        return Runner(Team([Agent("desk", tools=[set_plan, take_a_while])]), model=model)

    with serving(make, agui=True) as s:
        data = body("t-state", ("user", "upgrade me"))
        data["state"] = {"shared": {"plan": "silver", "theme": "dark"}}  # the client's
        events = await stream(s.url, data)
        shared = httpx.get(f"{s.url}/v1/sessions/t-state/export", headers=OP).json()
        shared = shared.get("state", shared)["shared"]
    k = [kind(e) for e in events]
    assert events[1].snapshot["shared"] == {"plan": "silver", "theme": "dark"}
    result = next(e for e in events if kind(e) == "TOOL_CALL_RESULT")
    assert result.content == "plan silver -> gold"  # the tool read the client's state
    delta = next(i for i, e in enumerate(events) if kind(e) == "STATE_DELTA" and any(
        op.path == "/shared/plan" for op in e.delta))
    # At once: before the next (slow) call even starts, not after the answer.
    assert k.index("TOOL_CALL_RESULT") < delta < k.index("TOOL_CALL_START", delta - 1)
    assert shared["plan"] == "gold" and shared["theme"] == "dark"


async def test_a_frontend_tool_and_an_operators_approval_each_wait_for_their_own() -> None:
    from handoffs.core.messages import ToolCall
    from handoffs.models import ModelResponse

    def make() -> Runner:
        both = ModelResponse("", (ToolCall("c1", "confirm", '{"question": "Refund?"}'),
                                  ToolCall("r1", "refund", '{"order_id": "A-4"}')))
        model = ScriptedModel([both, reply("Confirmed and refunded.")])
        return Runner(Team([Agent("billing", tools=[refund])]), model=model)

    confirm = {"name": "confirm", "description": "Ask the user.",
               "parameters": {"type": "object", "properties": {}}}
    with serving(make, agui=True) as s:
        first = body("t-mixed", ("user", "refund A-4"))
        first["tools"] = [confirm]
        events = await stream(s.url, first)
        # The client's call ends the run for the client to run it; the operator's
        # approval is no interrupt of this user's.
        assert [e.tool_call_name for e in events if kind(e) == "TOOL_CALL_START"] == \
            ["confirm"]
        assert events[-1].outcome.type == "success"
        assert events[-1].result["awaiting_tool_results"] == ["c1"]
        token = token_of(events)
        second = body("t-mixed", ("user", "refund A-4"))
        second["messages"] += [
            {"id": "a1", "role": "assistant", "toolCalls": [
                {"id": "c1", "type": "function",
                 "function": {"name": "confirm", "arguments": "{}"}}]},
            {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "yes"}]
        user = asyncio.create_task(stream(s.url, second, token))
        await asyncio.sleep(0.3)
        assert not user.done()  # the result is in; the run follows until the operator
        r = httpx.post(f"{s.url}/v1/sessions/t-mixed/approvals/r1", headers=OP,
                       json={"approved": True})
        assert r.status_code == 200, r.text
        events = await asyncio.wait_for(user, 10)
    assert said(events) == "Confirmed and refunded."
    assert [e.content for e in events if kind(e) == "TOOL_CALL_RESULT"] == ["refunded A-4"]
    assert kind(events[-1]) == "RUN_FINISHED" and events[-1].outcome.type == "success"
