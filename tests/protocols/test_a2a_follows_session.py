"""A served team's A2A task follows its session, driven with the a2a-sdk's own client: a
person's reply and hand-back, an approval's outcome, a delegate's answer kept inside,
and the data parts a caller sends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from handoffs import Agent, Handoff, HumanAgent, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer
from service.conftest import OPERATOR_KEY, serving

pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")

from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part, new_message, new_text_message
from a2a.types import (
    GetTaskRequest,
    Role,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from google.protobuf.json_format import MessageToDict

from .test_served_a2a import artifacts, state_of

OP = {"Authorization": f"Bearer {OPERATOR_KEY}"}


async def send(url: str, message: Any, token: str | None = None) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        client = await create_client(url, ClientConfig(httpx_client=http))
        out = [MessageToDict(e) async for e in
               client.send_message(SendMessageRequest(message=message))]
        await client.close()
    return out


def text(s: str, context_id: str | None = None, task_id: str | None = None) -> Any:
    return new_text_message(s, context_id=context_id, task_id=task_id, role=Role.ROLE_USER)


async def get_task(url: str, task_id: str, token: str) -> dict[str, Any]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                 timeout=30) as http:
        client = await create_client(url, ClientConfig(httpx_client=http))
        task = MessageToDict(await client.get_task(GetTaskRequest(id=task_id)))
        await client.close()
    return task


async def subscribe(url: str, task_id: str, token: str) -> AsyncIterator[dict[str, Any]]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"},
                                 timeout=30) as http:
        client = await create_client(url, ClientConfig(httpx_client=http))
        async for e in client.subscribe(SubscribeToTaskRequest(id=task_id)):
            yield MessageToDict(e)
        await client.close()


def task_texts(task: dict[str, Any]) -> list[str]:
    return [p["text"] for a in task.get("artifacts", []) for p in a["parts"] if "text" in p]


async def until(check: Any, seconds: float = 10) -> Any:
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        got = await check()
        if got:
            return got
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("not in time")
        await asyncio.sleep(0.05)


def escalating_team() -> Runner:
    desk = Agent("desk", description="The front desk.", handoffs=["person"])
    person = HumanAgent("person", description="A person.", handoffs=["desk"])
    model = ScriptedModel([transfer("person", reason="asks for a person"),
                           reply("Glad it is sorted. Anything else?")])
    return Runner(Team([desk, person]), model=model)


async def test_an_operator_reply_and_hand_back_reach_the_a2a_task() -> None:
    with serving(escalating_team, a2a=True) as s:
        first = await send(s.url, text("Can a person look at my account?"))
        task = first[0]["task"]
        sid, tid = task["contextId"], task["id"]
        token = task["metadata"]["handoffs_session_token"]
        assert state_of(first) == "TASK_STATE_INPUT_REQUIRED"

        seen: list[dict[str, Any]] = []

        async def follow() -> None:
            async for e in subscribe(s.url, tid, token):
                seen.append(e)

        follower = asyncio.create_task(follow())
        await until(lambda: asyncio.sleep(0, bool(seen)))  # the task, first
        r = httpx.post(f"{s.url}/v1/sessions/{sid}/human", headers=OP,
                       json={"text": "Hi, I am Sam from support; your account is fine."})
        assert r.status_code == 200, r.text
        await until(lambda: asyncio.sleep(0, artifacts(seen)))
        assert artifacts(seen) == [("person",
                                    "Hi, I am Sam from support; your account is fine.")]
        got = await get_task(s.url, tid, token)
        assert got["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        assert "Hi, I am Sam from support; your account is fine." in task_texts(got)

        r = httpx.post(f"{s.url}/v1/sessions/{sid}/human", headers=OP,
                       json={"text": "Handing you back to the desk.", "handoff_to": "desk"})
        assert r.status_code == 200, r.text
        await asyncio.wait_for(follower, 10)  # the stream ends: the task completed
        assert state_of(seen) == "TASK_STATE_COMPLETED"
        assert ("person", "Handing you back to the desk.") in artifacts(seen)
        got = await get_task(s.url, tid, token)
        assert got["status"]["state"] == "TASK_STATE_COMPLETED"

        after = await send(s.url, text("Thanks!", sid), token)
        assert artifacts(after) == [("desk", "Glad it is sorted. Anything else?")]


@tool(needs_approval=True)
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    return f"refunded ${amount:,.0f} on {order_id}"


def approving_team(approvals_by: Any = "operator") -> Any:
    def make() -> Runner:
        billing = Agent("billing", description="Billing.", tools=[refund])
        model = ScriptedModel([call("refund", order_id="A-1003", amount=1499),
                               reply("Your refund of $1,499 on A-1003 is on its way.")])
        return Runner(Team([billing], approvals_by=approvals_by), model=model)
    return make


async def test_an_approval_by_the_operator_delivers_the_answer_to_the_a2a_task() -> None:
    with serving(approving_team(), a2a=True) as s:
        first = await send(s.url, text("Refund my laptop, A-1003"))
        task = first[0]["task"]
        sid, tid = task["contextId"], task["id"]
        token = task["metadata"]["handoffs_session_token"]
        assert state_of(first) == "TASK_STATE_INPUT_REQUIRED"

        # The user may not decide here: told who does, and the task stays open.
        again = await send(s.url, text("approve", sid, tid), token)
        assert state_of(again) == "TASK_STATE_INPUT_REQUIRED"
        last = [e for e in again if "statusUpdate" in e][-1]["statusUpdate"]
        said = last["status"]["message"]["parts"][0]["text"]
        assert "waits for a person's approval" in said and "runner." not in said

        pending = httpx.get(f"{s.url}/v1/sessions/{sid}/approvals", headers=OP).json()
        call_id = pending["approvals"][0]["call_id"]
        r = httpx.post(f"{s.url}/v1/sessions/{sid}/approvals/{call_id}", headers=OP,
                       json={"approved": True})
        assert r.status_code == 200, r.text

        async def done() -> dict[str, Any] | None:
            got = await get_task(s.url, tid, token)
            return got if got["status"]["state"] == "TASK_STATE_COMPLETED" else None

        got = await until(done)
        assert "Your refund of $1,499 on A-1003 is on its way." in task_texts(got)


async def test_a_team_that_lets_the_user_decide_takes_the_decision_over_a2a() -> None:
    with serving(approving_team("user"), a2a=True) as s:
        first = await send(s.url, text("Refund my laptop, A-1003"))
        task = first[0]["task"]
        sid, tid = task["contextId"], task["id"]
        token = task["metadata"]["handoffs_session_token"]
        assert state_of(first) == "TASK_STATE_INPUT_REQUIRED"
        decided = await send(s.url, new_message(
            [new_data_part({"approved": True})], role=Role.ROLE_USER, context_id=sid,
            task_id=tid), token)
    assert state_of(decided) == "TASK_STATE_COMPLETED"
    assert artifacts(decided) == [("billing",
                                   "Your refund of $1,499 on A-1003 is on its way.")]


async def test_a_delegates_answer_is_not_an_artifact_of_the_task() -> None:
    def make() -> Runner:
        billing = Agent("billing", description="Billing.",
                        handoffs=[Handoff("policy", returns=True)])
        policy = Agent("policy", description="Policy.", user_selectable=False)
        model = ScriptedModel([transfer("policy", task="duplicate charge refundable?"),
                               reply("Yes: duplicate charges are always refundable."),
                               reply("I have refunded the duplicate charge.")])
        return Runner(Team([billing, policy]), model=model)

    with serving(make, a2a=True) as s:
        events = await send(s.url, text("I was charged twice"))
    assert state_of(events) == "TASK_STATE_COMPLETED"
    assert artifacts(events) == [("billing", "I have refunded the duplicate charge.")]
    answered = [e["statusUpdate"]["metadata"] for e in events if "statusUpdate" in e
                and e["statusUpdate"].get("metadata", {}).get("delegate")]
    assert answered == [{"agent": "policy", "delegate": True, "to": "billing"}]


async def test_data_parts_carry_the_earlier_conversation_and_a_data_only_message() -> None:
    model = ScriptedModel([reply("Hello Ada, which order?"), reply("Noted.")])

    def make() -> Runner:
        return Runner(Team([Agent("billing", description="Billing.")]), model=model)

    with serving(make, a2a=True) as s:
        context = {"handoff": {"source": "desk", "reason": "a billing question",
                               "kind": "transfer"},
                   "history": [{"role": "user", "agent": "desk", "text": "my name is Ada"},
                               {"role": "assistant", "agent": "desk",
                                "text": "Hi Ada, how can I help?"}]}
        first = await send(s.url, new_message(
            [new_data_part(context), *text("I was charged twice").parts],
            role=Role.ROLE_USER))
        task = first[0]["task"]
        sid, token = task["contextId"], task["metadata"]["handoffs_session_token"]
        only_data = await send(s.url, new_message(
            [new_data_part({"order_id": "A-1001"})], role=Role.ROLE_USER, context_id=sid),
            token)
        session = httpx.get(f"{s.url}/v1/sessions/{sid}/transcript",
                            headers={"Authorization": f"Bearer {token}"}).json()
    assert state_of(only_data) == "TASK_STATE_COMPLETED"
    seen = model.requests[0].messages
    assert "my name is Ada" in str(seen)
    assert "I was charged twice" in str(seen)
    assert '{"order_id": "A-1001"}' in str(model.requests[1].messages[-1])
    texts = [m["text"] for m in session["messages"]]
    assert any("my name is Ada" in t for t in texts)
