"""A team served as an A2A agent (`create_app(..., a2a=True)`, `handoffs serve --a2a`),
with the a2a-sdk's own request handler and JSON-RPC route (the `a2a` extra).

- `GET /.well-known/agent-card.json`: the card, built from the team: the entry agent's
  name and description, each user-selectable agent a skill, JSON-RPC at `/a2a` with
  streaming, for clients of A2A 1.0 and 0.3 alike (the card's `url` is 0.3's), and how
  a caller authenticates (its security schemes: a conversation's session token, the
  operator key, or nothing to start a new conversation).
- `POST /a2a`: JSON-RPC (`SendMessage`, `SendStreamingMessage`, `GetTask`, ...). The A2A
  `context_id` is the session's id, so the sticky agent holds across messages. Who may
  call what is `server.a2a_guard`'s: a new conversation needs no credential and its
  token is answered once, to its caller, in the first task of the answer
  (`handoffs_session_token` in its metadata, never stored in the task); everything else
  needs that token (`Authorization: Bearer ...`) or the operator key.
- A message is one user turn, run like `POST /v1/sessions/{id}/messages` (its events
  reach the page and every follower): each agent's message becomes an artifact named
  after the agent (`metadata.agent`), a handoff a `working` status naming who answers
  now, and the turn's end the task's state: `completed`; `input-required` while a person
  holds the conversation or a call waits for a person's approval; `failed` with the
  turn's code.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from ..a2a.cards import CARD_PATH, sdk
from ..core.idempotency import IdempotencyKey
from ..core.remote import TOKEN_FIELD
from ..core.team import Team
from .errors import ApiError, from_exception
from .service import Service

if TYPE_CHECKING:
    from a2a.server.events import EventQueue
    from a2a.types import AgentCard

log = logging.getLogger("handoffs.server.a2a")

RPC_PATH = "/a2a"
"""Where the team answers A2A JSON-RPC requests."""


def agent_card(team: Team, url: str) -> AgentCard:
    """The team's agent card: its entry agent's name and description, its user-selectable
    agents as skills, JSON-RPC at `url`, streaming, and who may call what: a
    conversation's session token, the operator key, or (to start a new conversation)
    nothing."""
    from a2a.types import (
        AgentCapabilities,
        AgentCard,
        AgentInterface,
        AgentSkill,
        HTTPAuthSecurityScheme,
        SecurityRequirement,
        SecurityScheme,
        StringList,
    )

    from .. import __version__

    entry = team[team.entry]
    skills = [AgentSkill(id=a.name, name=a.label, description=a.description or a.label,
                         tags=list(a.capabilities) or [a.name])
              for a in team.agents if a.user_selectable and a.enabled]
    session = SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(
        scheme="bearer", description=SESSION_SCHEME))
    operator = SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(
        scheme="bearer", description=OPERATOR_SCHEME))
    return AgentCard(
        name=entry.label, description=entry.description or f"{entry.label} and its team.",
        version=__version__,
        # One endpoint, both versions of the protocol (as Google's ADK serves them): a
        # 1.0 client says so in its `A2A-Version` header; a 0.3 client reads the card's
        # `url` (from the 0.3 interface) and sends 0.3's method names, which the
        # a2a-sdk's own compatibility layer translates.
        supported_interfaces=[AgentInterface(url=url, protocol_binding="JSONRPC",
                                             protocol_version="1.0"),
                              AgentInterface(url=url, protocol_binding="JSONRPC",
                                             protocol_version="0.3")],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
        skills=skills,
        security_schemes={"session_token": session, "operator_key": operator},
        # Either credential, or none at all: a message that starts a new conversation.
        security_requirements=[
            SecurityRequirement(schemes={"session_token": StringList()}),
            SecurityRequirement(schemes={"operator_key": StringList()}),
            SecurityRequirement()])


SESSION_SCHEME = (
    "A conversation's session token. A message with no contextId (or one naming a "
    "conversation no one holds yet) starts a new conversation and needs no credential: "
    f"its token is answered once, to that caller only, in the metadata ({TOKEN_FIELD}) of "
    "the first Task of the answer, and is stored nowhere a client can read it (POST "
    "/v1/sessions makes one too). Every other call on that conversation (SendMessage "
    "into it, GetTask, SubscribeToTask, CancelTask, push notification configs) needs it; "
    "a task of another conversation is answered as one that does not exist "
    "(TaskNotFound), and ListTasks lists the caller's own tasks.")
"""The card's words for the session token scheme."""
OPERATOR_SCHEME = ("The server's operator key: opens every conversation, and ListTasks with "
                   "it lists every task.")
"""The card's words for the operator key scheme."""
OPEN_WARNING = (
    "A2A at %s: anyone who can reach this server may start a conversation without a "
    "credential (each is opened after by its own session token, given once in its first "
    "answer); put an authenticating proxy in front of it to restrict who may start one.")
"""What a server serving A2A says when it starts: new conversations are open to anyone."""


def install(app: FastAPI, service: Service) -> None:
    """Add the card and the JSON-RPC route to `app`."""
    sdk()
    from a2a.server.request_handlers import DefaultRequestHandler
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from a2a.server.routes import create_jsonrpc_routes

    from .a2a_callers import CallerContexts
    from .a2a_guard import Guard
    from .a2a_tasks import OwnedTasks

    team = service.team
    tasks = OwnedTasks(service.store)
    handler = Guard(DefaultRequestHandler(
        agent_executor=_executor(service), task_store=tasks,
        agent_card=agent_card(team, "http://localhost" + RPC_PATH)), tasks, service)

    async def card(request: Request) -> JSONResponse:
        base = str(request.base_url).rstrip("/")
        return JSONResponse(agent_card_to_dict(agent_card(team, base + RPC_PATH)))

    app.add_api_route(CARD_PATH, card, methods=["GET"], tags=["a2a"],
                      summary="The team's A2A agent card")
    app.router.routes.extend(create_jsonrpc_routes(
        handler, rpc_url=RPC_PATH, enable_v0_3_compat=True,
        context_builder=CallerContexts(service.settings.operator_key)))
    log.warning(OPEN_WARNING, RPC_PATH)


def _executor(service: Service) -> Any:
    from a2a.server.agent_execution import AgentExecutor, RequestContext

    from .a2a_follow import Followers

    followers = Followers(service)
    service.on_close.append(followers.close)

    class TeamExecutor(AgentExecutor):
        """Runs one user turn of the team per A2A message."""

        async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
            await _execute(service, followers, context, event_queue)

        async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
            from a2a.server.tasks import TaskUpdater

            followers.stop(context.context_id or "")
            service.runner.cancel(context.context_id or "")  # the turn ends `cancelled`
            await TaskUpdater(event_queue, context.task_id or "",
                              context.context_id or "").cancel()

    return TeamExecutor()


async def _execute(svc: Service, followers: Any, context: Any, queue: EventQueue) -> None:
    from a2a.helpers.proto_helpers import new_task
    from a2a.types import TaskState

    from .a2a_callers import caller_of
    from .a2a_follow import TaskFeed
    from .a2a_inputs import read, seed

    sid: str = context.context_id or ""
    task = context.current_task
    fresh = task is None
    if task is None:
        task = new_task(context.task_id or "", sid, TaskState.TASK_STATE_SUBMITTED)
    # A message on the session speaks for itself now: no older task follows it.
    followers.stop(sid)
    feed = TaskFeed(queue, task.id, sid)

    # The session is open to this caller: `server.a2a_guard` opened (or made) it before
    # the a2a-sdk ran this.
    if fresh:
        await queue.enqueue_event(task)
    said = read(context.message)
    state = await svc.store.load(sid)
    if state is not None and state.status == "waiting_for_approval":
        await _approval_reply(svc, followers, feed, state, said,
                              caller_of(context.call_context).operator)
        return
    text = said.message
    try:
        if not text.strip():
            raise ApiError("invalid_argument",
                           "The message has no text part and no data part to answer.")
        svc.check_text(text)
    except ApiError as exc:
        await feed.up.reject(feed.say(f"{exc.code}: {exc.message}"))
        return
    await feed.up.start_work()
    await seed(svc, sid, said)
    run = svc.turns.queue(sid)
    # The message's own id is its idempotency key: a client that sends it again (a
    # timeout, a dropped connection) gets the first turn's answer, stored once.
    mid = getattr(context.message, "message_id", "")
    run.go(text, key=IdempotencyKey(f"a2a:{mid}") if mid else None)
    async for event in run.follow():
        await feed.event(event)
    try:
        result = await run.finished()
    except Exception as exc:  # refused before it ran
        _, code, message = from_exception(exc)
        log.warning("a2a turn on session %s did not run: %s", sid, code)
        await feed.status(TaskState.TASK_STATE_FAILED, f"{code}: {message}", code=code)
        return
    error = result.error
    if await feed.ended(str(result.status), result.agent,
                        error.code if error is not None else None,
                        error.message if error is not None else None):
        followers.start(feed)


async def _approval_reply(svc: Service, followers: Any, feed: Any, state: Any, said: Any,
                          operator: bool) -> None:
    """A message on a session whose call waits for approval: it decides the waiting calls
    when the caller may (the operator key, or anyone the team lets decide:
    `Team(approvals_by="user")`) and says so; otherwise the task stays
    `input-required`, saying who decides, and follows the session until they do."""
    from a2a.types import TaskState

    from .a2a_follow import follow
    from .views import approvals_view

    waiting = [a for a in approvals_view(state) if a["decision"] is None]
    tools = ", ".join(sorted({str(a["tool"]) for a in waiting})) or "a tool"
    allowed = operator or svc.team.approvals_by == "user"
    decision = said.decision() if allowed else None
    agent = state.active_agent
    if decision is None:
        text = (f"The call to {tools} waits for your decision: answer approve or reject "
                '(or a data part {"approved": true} / {"approved": false, "reason": ...}).'
                if allowed else
                f"The call to {tools} waits for a person's approval; the answer comes on "
                "this task once they decide.")
        await feed.status(TaskState.TASK_STATE_INPUT_REQUIRED, text, agent,
                          status="waiting_for_approval",
                          calls=[str(a["call_id"]) for a in waiting])
        followers.start(feed)
        return
    approved, reason = decision
    await feed.up.start_work()
    feed.last = state.event_seq - 1
    runner = svc.runner
    try:
        async with svc.turns.exclusive(feed.session_id):
            for a in waiting:
                cid = str(a["call_id"])
                if approved:
                    await runner.approve(feed.session_id, cid)
                else:
                    await runner.reject(feed.session_id, cid, reason)
    except Exception as exc:
        _, code, message = from_exception(exc)
        await feed.status(TaskState.TASK_STATE_FAILED, f"{code}: {message}", code=code)
        return
    finally:
        svc.hub.wake(feed.session_id)
    if await follow(svc, feed, stay=False):
        followers.start(feed)
