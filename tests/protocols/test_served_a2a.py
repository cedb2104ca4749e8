"""A team served as an A2A agent (`handoffs serve --a2a`) in a process of its own,
driven by the a2a-sdk's own client: the card, the task lifecycle from the turn, the
session as the A2A context, the session's token as the bearer secret."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from handoffs import Agent, Runner, Team, tool
from handoffs.testing import ScriptedModel, call
from service.conftest import OPERATOR_KEY, ServeProcess, handoffs_serve, serving

pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")

from a2a.client import ClientConfig, create_client
from a2a.helpers.proto_helpers import new_text_message
from a2a.types import Role, SendMessageRequest, StreamResponse
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    cwd: Path = tmp_path_factory.mktemp("a2a")
    with handoffs_serve(["--demo", "--store", "memory://", "--a2a"], cwd) as s:
        yield s


async def exchange(url: str, text: str, context_id: str | None = None,
                   token: str | None = None, task_id: str | None = None
                   ) -> list[dict[str, Any]]:
    """One message with the a2a-sdk's client (streamed); every event as JSON data."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        client = await create_client(url, ClientConfig(httpx_client=http))
        message = new_text_message(text, context_id=context_id, task_id=task_id,
                                   role=Role.ROLE_USER)
        out: list[StreamResponse] = [
            e async for e in client.send_message(SendMessageRequest(message=message))]
        await client.close()
    return [MessageToDict(e) for e in out]


def state_of(events: list[dict[str, Any]]) -> str:
    for e in reversed(events):
        if "statusUpdate" in e:
            return str(e["statusUpdate"]["status"]["state"])
        if "task" in e:
            return str(e["task"]["status"]["state"])
    raise AssertionError(events)


def artifacts(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(e["artifactUpdate"]["artifact"]["name"],
             e["artifactUpdate"]["artifact"]["parts"][0]["text"])
            for e in events if "artifactUpdate" in e]


def test_the_card_describes_the_team(served: ServeProcess) -> None:
    card = httpx.get(served.url + "/.well-known/agent-card.json").json()
    assert card["name"] == "Triage"
    assert card["description"] == "Routes customers to the right specialist."
    skills = {s["id"] for s in card["skills"]}
    assert {"triage", "billing", "refunds", "technical"} <= skills
    assert "operator" not in skills  # a person is not user-selectable
    assert card["supportedInterfaces"][0]["url"] == served.url + "/a2a"
    assert card["capabilities"]["streaming"] is True
    scheme = card["securitySchemes"]["session_token"]["httpAuthSecurityScheme"]
    assert scheme["scheme"] == "bearer"
    assert card["securitySchemes"]["operator_key"]["httpAuthSecurityScheme"]["scheme"] == \
        "bearer"


def test_the_server_says_at_start_up_that_anyone_may_start_a_conversation(
        served: ServeProcess) -> None:
    assert "A2A at /a2a: anyone who can reach this server may start a conversation" in \
        served.output()


async def test_a_conversation_over_a2a_keeps_its_session_and_sticky_agent(
        served: ServeProcess) -> None:
    first = await exchange(served.url, "I was charged twice for my order")
    task = first[0]["task"]
    context, token = task["contextId"], task["metadata"]["handoffs_session_token"]
    assert state_of(first) == "TASK_STATE_COMPLETED"
    said = artifacts(first)
    assert said and said[-1][0] == "billing"
    working = [e["statusUpdate"] for e in first if "statusUpdate" in e
               and e["statusUpdate"].get("metadata", {}).get("agent")]
    assert working[0]["metadata"]["agent"] == "billing"  # the handoff, as a status

    # The context is the session: the page's API sees the same conversation.
    session = httpx.get(f"{served.url}/v1/sessions/{context}",
                        headers={"Authorization": f"Bearer {token}"}).json()
    assert session["active_agent"]["name"] == "billing"

    second = await exchange(served.url, "It is order A-1001", context, token)
    assert second[0]["task"]["contextId"] == context
    assert "handoffs_session_token" not in second[0]["task"].get("metadata", {})
    assert artifacts(second)[0][0] == "billing"  # sticky: no new triage
    assert state_of(second) == "TASK_STATE_COMPLETED"


async def test_a_message_to_a_session_without_its_token_is_refused(
        served: ServeProcess) -> None:
    first = await exchange(served.url, "hello")
    context = first[0]["task"]["contextId"]
    for token in (None, "not-the-token"):
        with pytest.raises(InvalidParamsError, match="is not open to this caller"):
            await exchange(served.url, "show me this conversation", context, token)
    operator = await exchange(served.url, "thanks", context, token=OPERATOR_KEY)
    assert state_of(operator) == "TASK_STATE_COMPLETED"


async def test_a_person_taking_over_is_input_required(served: ServeProcess) -> None:
    first = await exchange(served.url, "The app crashes when I open it")
    task = first[0]["task"]
    context, token = task["contextId"], task["metadata"]["handoffs_session_token"]
    second = await exchange(served.url, "Still broken. Can a person look at my account?",
                            context, token)
    assert state_of(second) == "TASK_STATE_INPUT_REQUIRED"
    last = [e for e in second if "statusUpdate" in e][-1]["statusUpdate"]
    assert last["metadata"]["agent"] == "operator"


async def test_a_failed_turn_is_a_failed_task_with_its_code() -> None:
    broken = Team([Agent("solo", description="Fails.")])
    with serving(lambda: Runner(broken, model=ScriptedModel([])), a2a=True) as s:
        events = await exchange(s.url, "hello")
    assert state_of(events) == "TASK_STATE_FAILED"
    last = [e for e in events if "statusUpdate" in e][-1]["statusUpdate"]
    assert last["metadata"]["code"] == "script_exhausted"


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


async def test_a_call_waiting_for_approval_is_input_required() -> None:
    team = Team([Agent("billing", description="Billing.", tools=[refund])])
    model = ScriptedModel([call("refund", order_id="A-1")])
    with serving(lambda: Runner(team, model=model), a2a=True) as s:
        first = await exchange(s.url, "refund A-1")
        assert state_of(first) == "TASK_STATE_INPUT_REQUIRED"
        task = first[0]["task"]
        context, token = task["contextId"], task["metadata"]["handoffs_session_token"]
        again = await exchange(s.url, "hello?", context, token)
    # Not a dead end: the task stays open, saying who decides (the operator here).
    assert state_of(again) == "TASK_STATE_INPUT_REQUIRED"
    last = [e for e in again if "statusUpdate" in e][-1]["statusUpdate"]
    assert last["metadata"]["status"] == "waiting_for_approval"


async def test_a_message_sent_again_with_its_message_id_is_stored_and_answered_once(
        served: ServeProcess) -> None:
    async def send(context_id: str | None, token: str | None) -> list[dict[str, Any]]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(headers=headers, timeout=30) as http:
            client = await create_client(served.url, ClientConfig(httpx_client=http))
            message = new_text_message("I was charged twice for my order",
                                       context_id=context_id, role=Role.ROLE_USER)
            message.message_id = "m-retried-1"  # a client's retry sends the same message
            out = [MessageToDict(e) async for e in
                   client.send_message(SendMessageRequest(message=message))]
            await client.close()
        return out

    first = await send(None, None)
    task = first[0]["task"]
    context, token = task["contextId"], task["metadata"]["handoffs_session_token"]
    again = await send(context, token)

    assert artifacts(again) == artifacts(first)
    assert state_of(again) == "TASK_STATE_COMPLETED"
    transcript = httpx.get(f"{served.url}/v1/sessions/{context}/transcript",
                           headers={"Authorization": f"Bearer {token}"}).json()
    users = [m["text"] for m in transcript["messages"] if m["kind"] == "user"]
    assert users == ["I was charged twice for my order"]
