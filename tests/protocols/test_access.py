"""Who may read, follow, cancel and continue a conversation (issue 45): a real server on a
real port serving A2A (driven by the a2a-sdk's own client), AG-UI and the
OpenAI-compatible endpoint (the `openai` client). A customer's conversations are left in
every state an A2A task can be in; then an anonymous client and another customer (with a
token of their own) try every operation on them. Over A2A each is answered exactly as for
a task that does not exist and ListTasks lists a caller's own tasks only; an AG-UI run
or a completion on the conversation is refused; nothing reaches the conversation. The
token of a new conversation goes to the client that started it, once, and is stored
nowhere a client can read it."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from protocols.word_team import runner
from service.conftest import OPERATOR_KEY, serving

pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")

from a2a.client import Client, ClientConfig, create_client
from a2a.helpers.proto_helpers import new_text_message
from a2a.types import (
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    GetTaskRequest,
    ListTaskPushNotificationConfigsRequest,
    ListTasksRequest,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import A2AError
from google.protobuf.json_format import MessageToJson

TOKEN_FIELD = "handoffs_session_token"


@dataclass
class Conversation:
    """A customer's A2A conversation: its last task, its context (the session) and the
    token its first answer gave."""

    task_id: str
    context_id: str
    token: str
    state: int


@dataclass
class World:
    url: str
    victims: dict[str, Conversation]
    """A customer's conversations, one in each state, by state."""
    other: Conversation
    """Another customer's own conversation (completed)."""


STATES = ("working", "input-required (a person)", "input-required (an approval)",
          "completed", "failed", "cancelled")
ATTACKERS = ("anonymous", "another customer")


@asynccontextmanager
async def a2a(url: str, token: str | None = None, *, streaming: bool = False,
              polling: bool = False) -> AsyncIterator[Client]:
    """The a2a-sdk's client for the served team, presenting `token` (None: nothing)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        client = await create_client(url, ClientConfig(httpx_client=http, streaming=streaming,
                                                       polling=polling))
        try:
            yield client
        finally:
            await client.close()


async def send(client: Client, text: str, *, context_id: str | None = None,
               task_id: str | None = None) -> list[StreamResponse]:
    message = new_text_message(text, context_id=context_id, task_id=task_id,
                               role=Role.ROLE_USER)
    return [e async for e in client.send_message(SendMessageRequest(message=message))]


async def start(url: str, text: str, *, polling: bool = False) -> Conversation:
    """A new conversation (no context id, no credential): its first task and token."""
    async with a2a(url, polling=polling) as client:
        task = (await send(client, text))[0].task
    return Conversation(task.id, task.context_id, task.metadata[TOKEN_FIELD],
                        task.status.state)


async def task_as(url: str, token: str, task_id: str) -> Task:
    async with a2a(url, token) as client:
        return await client.get_task(GetTaskRequest(id=task_id))


async def until_state(url: str, c: Conversation, state: int) -> None:
    for _ in range(500):
        if (await task_as(url, c.token, c.task_id)).status.state == state:
            c.state = state
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"task {c.task_id} never reached {TaskState.Name(state)}")


async def conversations(url: str, gate: Path) -> tuple[dict[str, Conversation],
                                                       Conversation]:
    victims = {
        "input-required (a person)": await start(url, "person"),
        "input-required (an approval)": await start(url, "refund"),
        "completed": await start(url, "hello"),
        "failed": await start(url, "fail"),
        "working": await start(url, f"hold {gate}", polling=True),
        "cancelled": await start(url, f"hold {gate}.never", polling=True),
    }
    await until_state(url, victims["working"], TaskState.TASK_STATE_WORKING)
    cancelled = victims["cancelled"]
    await until_state(url, cancelled, TaskState.TASK_STATE_WORKING)
    async with a2a(url, cancelled.token) as owner:  # its owner may cancel it
        await owner.cancel_task(CancelTaskRequest(id=cancelled.task_id))
    await until_state(url, cancelled, TaskState.TASK_STATE_CANCELED)
    expected = {"input-required (a person)": TaskState.TASK_STATE_INPUT_REQUIRED,
                "input-required (an approval)": TaskState.TASK_STATE_INPUT_REQUIRED,
                "completed": TaskState.TASK_STATE_COMPLETED,
                "failed": TaskState.TASK_STATE_FAILED}
    for name, state in expected.items():
        assert victims[name].state == state, (name, TaskState.Name(victims[name].state))
    return victims, await start(url, "my own question")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    gate = tmp_path_factory.mktemp("a2a-access") / "release"
    with serving(runner, a2a=True, agui=True) as s:
        victims, other = asyncio.run(conversations(s.url, gate))
        try:
            yield World(s.url, victims, other)
        finally:
            gate.touch()  # the held turn ends, so the server stops at once


def attacker_token(world: World, who: str) -> str | None:
    return None if who == "anonymous" else world.other.token


async def first(events: AsyncIterator[Any]) -> Any:
    async for event in events:
        return event
    return None


def operations(client: Client, task_id: str) -> dict[str, Callable[[], Awaitable[Any]]]:
    """Every A2A operation that names a task."""
    return {
        "GetTask": lambda: client.get_task(GetTaskRequest(id=task_id)),
        "SubscribeToTask": lambda: first(client.subscribe(SubscribeToTaskRequest(id=task_id))),
        "CancelTask": lambda: client.cancel_task(CancelTaskRequest(id=task_id)),
        "SendMessage to the task": lambda: send(client, "let me in", task_id=task_id),
        "CreateTaskPushNotificationConfig": lambda: client.create_task_push_notification_config(
            TaskPushNotificationConfig(task_id=task_id, url="https://attacker.example/hook")),
        "GetTaskPushNotificationConfig": lambda: client.get_task_push_notification_config(
            GetTaskPushNotificationConfigRequest(task_id=task_id, id="c1")),
        "ListTaskPushNotificationConfigs": lambda: client.list_task_push_notification_configs(
            ListTaskPushNotificationConfigsRequest(task_id=task_id)),
        "DeleteTaskPushNotificationConfig": lambda: client.delete_task_push_notification_config(
            DeleteTaskPushNotificationConfigRequest(task_id=task_id, id="c1")),
    }


async def answer(call: Callable[[], Awaitable[Any]], task_id: str) -> str:
    """What a call answered, with the task id it names written `<id>`: the error's type and
    message, or what it returned."""
    try:
        result = await call()
    except A2AError as exc:
        return f"{type(exc).__name__}: {exc.message}".replace(task_id, "<id>")
    if isinstance(result, list):
        return "answered: " + ", ".join(MessageToJson(r) for r in result)
    return "answered: " + (MessageToJson(result) if result is not None else "nothing")


async def transcript_length(url: str, c: Conversation) -> int:
    async with httpx.AsyncClient() as http:
        r = await http.get(f"{url}/v1/sessions/{c.context_id}/transcript",
                           headers={"Authorization": f"Bearer {c.token}"})
    assert r.status_code == 200, r.text
    return len(r.json()["messages"])


async def own_task_ids(url: str, token: str) -> set[str]:
    async with a2a(url, token) as client:
        listed = await client.list_tasks(ListTasksRequest(page_size=100))
    return {t.id for t in listed.tasks}


@pytest.mark.parametrize("who", ATTACKERS)
@pytest.mark.parametrize("state", STATES)
async def test_a_task_of_someone_else_answers_as_one_that_does_not_exist(
        world: World, state: str, who: str) -> None:
    victim = world.victims[state]
    before = await transcript_length(world.url, victim)
    nowhere = f"task-{uuid.uuid4()}"
    async with a2a(world.url, attacker_token(world, who), streaming=True) as client:
        for name, call in operations(client, victim.task_id).items():
            theirs = await answer(call, victim.task_id)
            none = await answer(operations(client, nowhere)[name], nowhere)
            assert theirs == none, f"{name} tells a {state} task of someone else from none"
            assert theirs.startswith("TaskNotFoundError"), (name, theirs)
    after = await task_as(world.url, victim.token, victim.task_id)
    assert after.status.state == victim.state  # not cancelled, not continued
    assert await transcript_length(world.url, victim) == before


@pytest.mark.parametrize("who", ATTACKERS)
@pytest.mark.parametrize("state", STATES)
async def test_a_message_into_someone_elses_conversation_is_refused_and_kept_nowhere(
        world: World, state: str, who: str) -> None:
    victim = world.victims[state]
    before = await transcript_length(world.url, victim)
    tasks_before = await own_task_ids(world.url, victim.token)
    async with a2a(world.url, attacker_token(world, who), streaming=True) as client:
        with pytest.raises(A2AError) as refused:
            await send(client, "show me everything", context_id=victim.context_id)
    assert "not open" in refused.value.message
    assert victim.token not in refused.value.message
    assert await transcript_length(world.url, victim) == before
    assert await own_task_ids(world.url, victim.token) == tasks_before


@pytest.mark.parametrize("who", ATTACKERS)
async def test_listing_tasks_shows_a_caller_its_own_tasks_only(world: World, who: str) -> None:
    async with a2a(world.url, attacker_token(world, who)) as client:
        listed = await client.list_tasks(ListTasksRequest(page_size=100))
        by_context = await client.list_tasks(ListTasksRequest(
            context_id=world.victims["completed"].context_id))
    ids = {t.id for t in listed.tasks}
    assert not ids & {v.task_id for v in world.victims.values()}
    assert not by_context.tasks
    if who == "anonymous":
        assert ids == set() and listed.total_size == 0
    else:
        assert ids == {world.other.task_id} and listed.total_size == 1


async def test_the_owner_reads_its_tasks_and_the_operator_every_task(world: World) -> None:
    victim = world.victims["completed"]
    assert await own_task_ids(world.url, victim.token) == {victim.task_id}
    every = await own_task_ids(world.url, OPERATOR_KEY)
    assert {v.task_id for v in world.victims.values()} | {world.other.task_id} <= every
    task = await task_as(world.url, OPERATOR_KEY, world.victims["failed"].task_id)
    assert task.status.state == TaskState.TASK_STATE_FAILED


async def test_listing_pages_through_a_callers_tasks(world: World) -> None:
    every = await own_task_ids(world.url, OPERATOR_KEY)
    seen: list[str] = []
    token = ""
    async with a2a(world.url, OPERATOR_KEY) as client:
        while True:
            page = await client.list_tasks(ListTasksRequest(page_size=2, page_token=token))
            assert len(page.tasks) <= 2 and page.total_size == len(every)
            seen += [t.id for t in page.tasks]
            token = page.next_page_token
            if not token:
                break
        with pytest.raises(A2AError):
            await client.list_tasks(ListTasksRequest(page_token="not a page token"))
    assert sorted(seen) == sorted(every)


async def test_no_listed_or_read_task_carries_a_token(world: World) -> None:
    """The takeover of issue 45: an anonymous ListTasks gave every session's token."""
    tokens = [v.token for v in world.victims.values()] + [world.other.token]
    said: list[str] = []
    for who in (None, world.other.token, OPERATOR_KEY):
        async with a2a(world.url, who) as client:
            listed = await client.list_tasks(ListTasksRequest(page_size=100,
                                                              include_artifacts=True))
            said.append(MessageToJson(listed))
    for v in world.victims.values():
        said.append(MessageToJson(await task_as(world.url, v.token, v.task_id)))
    working = world.victims["working"]
    async with a2a(world.url, working.token, streaming=True) as client:
        said.append(MessageToJson(await first(client.subscribe(
            SubscribeToTaskRequest(id=working.task_id)))))
    text = "\n".join(said)
    assert TOKEN_FIELD not in text
    for token in tokens:
        assert token not in text


async def test_the_token_comes_once_in_the_first_task_of_the_answer(world: World) -> None:
    async with a2a(world.url, streaming=True) as client:
        events = await send(client, "hello there")
    first_task = events[0].task
    token = first_task.metadata[TOKEN_FIELD]
    rest = "\n".join(MessageToJson(e) for e in events[1:])
    assert token not in rest and TOKEN_FIELD not in rest
    again = await task_as(world.url, token, first_task.id)  # the token opens it...
    assert TOKEN_FIELD not in again.metadata  # ...and is not kept in the task
    async with a2a(world.url, token, streaming=True) as client:
        second = await send(client, "and more", context_id=first_task.context_id)
    assert TOKEN_FIELD not in second[0].task.metadata
    assert second[-1].status_update.status.state == TaskState.TASK_STATE_COMPLETED


async def test_a_new_conversation_may_name_its_context(world: World) -> None:
    context = f"ctx-{uuid.uuid4()}"
    async with a2a(world.url, streaming=True) as client:
        events = await send(client, "hello", context_id=context)
    task = events[0].task
    assert task.context_id == context and task.metadata[TOKEN_FIELD]
    async with a2a(world.url, world.other.token, streaming=True) as client:
        with pytest.raises(A2AError):  # taken now: someone else's
            await send(client, "hello", context_id=context)


async def test_a_continued_task_without_its_context_stays_in_its_conversation(
        world: World) -> None:
    c = await start(world.url, "person")
    async with a2a(world.url, c.token) as client:
        events = await send(client, "still there?", task_id=c.task_id)
    assert events[0].task.context_id == c.context_id
    assert await transcript_length(world.url, c) >= 3


def test_the_card_says_how_a_conversation_starts_and_what_opens_it(world: World) -> None:
    card = httpx.get(world.url + "/.well-known/agent-card.json").json()
    schemes = card["securitySchemes"]
    session = schemes["session_token"]["httpAuthSecurityScheme"]
    operator = schemes["operator_key"]["httpAuthSecurityScheme"]
    assert session["scheme"] == operator["scheme"] == "bearer"
    assert TOKEN_FIELD in session["description"]
    assert "new conversation" in session["description"]
    assert "every" in operator["description"]
    requirements = card["securityRequirements"]
    assert {"schemes": {"session_token": {}}} in requirements
    assert {"schemes": {"operator_key": {}}} in requirements
    assert {} in requirements  # a new conversation needs no credential
    assert json.dumps(card).count(OPERATOR_KEY) == 0


def agui_run(world: World, thread: str, token: str | None,
             resume: list[dict[str, Any]] | None = None) -> httpx.Response:
    """One AG-UI run on `thread` (the protocol's own `RunAgentInput`), read whole."""
    from ag_ui.core import RunAgentInput, UserMessage

    body = RunAgentInput(thread_id=thread, run_id="r-intruder", state={}, tools=[],
                         context=[], forwarded_props={},
                         messages=[] if resume else [UserMessage(id="u1",
                                                                 content="show me")])
    data = body.model_dump(by_alias=True, exclude_none=True)
    if resume:
        data["resume"] = resume
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.post(world.url + "/v1/agui", json=data, headers=headers, timeout=30)


@pytest.mark.parametrize("who", ATTACKERS)
@pytest.mark.parametrize("state", STATES)
async def test_an_agui_run_on_someone_elses_thread_is_refused(
        world: World, state: str, who: str) -> None:
    pytest.importorskip("ag_ui", reason="ag-ui-protocol is not installed (the `agui` extra)")
    victim = world.victims[state]
    before = await transcript_length(world.url, victim)
    token = attacker_token(world, who)
    run = agui_run(world, victim.context_id, token)
    expected = (401, "unauthorized") if who == "anonymous" else (403, "forbidden")
    assert (run.status_code, run.json()["error"]["code"]) == expected
    resume = agui_run(world, victim.context_id, token, resume=[
        {"interruptId": "c1", "status": "resolved", "payload": {"approved": True}}])
    assert (resume.status_code, resume.json()["error"]["code"]) == (403, "forbidden")
    assert await transcript_length(world.url, victim) == before
    after = await task_as(world.url, victim.token, victim.task_id)
    assert after.status.state == victim.state


@pytest.mark.parametrize("who", ATTACKERS)
@pytest.mark.parametrize("state", STATES)
async def test_a_session_id_alone_never_opens_a_session_on_the_openai_endpoint(
        world: World, state: str, who: str) -> None:
    victim = world.victims[state]
    before = await transcript_length(world.url, victim)
    ask = [{"role": "user", "content": "show me everything"}]
    if who == "anonymous":  # no API key at all: the session id is all it has
        for how in ({"headers": {"X-Handoffs-Session": victim.context_id}},
                    {"extra": {"metadata": {"session_id": victim.context_id}}}):
            r = httpx.post(world.url + "/v1/chat/completions", timeout=30,
                           headers=how.get("headers", {}),
                           json={"model": "team", "messages": ask, **how.get("extra", {})})
            assert (r.status_code, r.json()["error"]["code"]) == (401, "unauthorized")
    else:
        client = openai.OpenAI(base_url=world.url + "/v1", api_key=world.other.token)
        for how in ({"extra_headers": {"X-Handoffs-Session": victim.context_id}},
                    {"extra_body": {"metadata": {"session_id": victim.context_id}}}):
            with pytest.raises(openai.PermissionDeniedError) as refused:
                client.chat.completions.create(model="team", messages=ask,  # type: ignore[arg-type]
                                               **how)  # type: ignore[arg-type]
            assert refused.value.body["code"] == "forbidden"  # type: ignore[index]
    assert await transcript_length(world.url, victim) == before
