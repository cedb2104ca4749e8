"""The team as one OpenAI-compatible model: `GET /v1/models`, `POST /v1/chat/completions`.

`team` is the team as it routes itself; `team/<agent>` first makes `<agent>` the active
agent (the user's pick, so the policy applies): a client's model picker becomes the agent
picker. Any other model name is refused (`unknown_model`). The session comes from the
`X-Handoffs-Session` header or `metadata.session_id`, with its token (or the operator
key) as the API key. Without one, the request's `messages` are the transcript of a
throw-away session, deleted once the turn ends (also when the client goes away or the
request is refused), unless the turn waits for a person: then it is kept, and the
answer gives its id and token so the conversation can go on where the person answers.

With a session, a retry is answered once: a request with the `Idempotency-Key` of an
earlier one, or an official SDK's retry (`x-stainless-retry-count` above 0) of the same
messages, stores and runs nothing and gets the first request's answer (or its error).

The reply is the final agent's text. A turn that waits for a person answers a sentence
saying so (the text is never empty); a person's replies since the client's last message
come first in the next answer of that session. Which agent answered, the session and
the turn's handoffs go in an extra `handoffs` field that SDK clients ignore. Internal
tool calls (transfers, delegations, tools) are never sent as `tool_calls`. A streamed
reply sends its text once the turn's answer is final, so words of an agent that then
handed off, or of a delegate, never reach the user as the answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from ..core.messages import AssistantMessage, Message, UserMessage
from ..core.session import SessionState, SessionStatus
from ..runtime.effects.ids import new_id
from ..runtime.state.result import RunResult, RunStatus
from ..stores.edits import create_session
from ..stores.text import valid
from . import auth, customer, sse
from .errors import ApiError, from_exception, responses
from .idempotency import request_key, sdk_retry_key
from .routes_sessions import service
from .service import Service, new_session_id
from .turns import TurnRun
from .views import Answer, agent_view, approvals_view, persons_replies, selectable

router = APIRouter(prefix="/v1", tags=["openai"])

TEAM = "team"
WAITING = (RunStatus.WAITING_FOR_HUMAN, RunStatus.WAITING_FOR_APPROVAL)


class ChatRequest(BaseModel):
    """The fields of an OpenAI chat completion request that the team uses; the rest
    (temperature, tools, ...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(TEAM, max_length=300,
                       description="`team`, or `team/<agent>` to pick that agent first.")
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=10_000)
    stream: bool = False
    metadata: dict[str, Any] | None = None


@dataclass(slots=True)
class Conversation:
    """The session a completion runs on, and what its answer must carry."""

    id: str
    throwaway: bool
    token: str | None = None
    """A throw-away session's token, given to the client only if the session is kept."""
    unseen: list[str] = field(default_factory=list)
    """A person's replies the client has not been given yet."""

    def kept(self, result: RunResult) -> bool:
        return not self.throwaway or result.status in WAITING


@router.get("/models")
async def models(request: Request) -> dict[str, Any]:
    """`team`, and `team/<agent>` for every agent a user may pick."""
    svc = service(request)
    ids = [TEAM] + [f"{TEAM}/{a.name}" for a in svc.team.agents if selectable(a)]
    return {"object": "list",
            "data": [{"id": i, "object": "model", "created": 0, "owned_by": "handoffs"}
                     for i in ids]}


@router.post("/chat/completions", responses={**responses(
    "invalid_request", "invalid_argument", "unauthorized", "forbidden",
    "not_user_selectable", "system_only", "unknown_model", "session_not_found",
    "target_disabled", "channel_unsupported", "held_by_person", "waiting_for_approval",
    "message_too_large",
    "idempotency_key_reused", "idempotency_unsupported",
    "body_too_large", "validation_error", "too_many_requests", "store_unavailable"),
    502: {"description": "The turn failed: the error carries the run's own code and a "
                        "sentence for the customer (`customer.error`)."}})
async def chat_completions(request: Request, body: ChatRequest) -> Response:
    """Run one turn of the team on the last user message (see the module's doc)."""
    svc = service(request)
    agent = _agent(svc, body.model)
    text = _last_user_text(body.messages)
    svc.check_text(text)
    sid = request.headers.get("x-handoffs-session") or \
        (body.metadata or {}).get("session_id")
    if sid is None:
        svc.check_rate(request)
        talk, run = await _throwaway(svc, body.messages[:_last_user(body.messages)], agent,
                                     text)
    else:
        if not isinstance(sid, str):
            raise ApiError("invalid_argument", "metadata.session_id is a string.")
        state = await svc.session(request, sid)
        svc.check_rate(request)
        if agent is not None and (state.active_agent or svc.team.entry) != agent:
            await svc.runner.select_agent(sid, agent)
        key = request_key(request) or sdk_retry_key(request, body.messages)
        talk = Conversation(sid, False, unseen=persons_replies(svc.team, state))
        run = svc.turns.start(sid, text, key=key)
    if body.stream:
        return sse.response(_chunks(svc, run, body.model, talk))
    result = await run.finished()
    _failed(result)
    return Answer(await _completion(svc, result, body.model, talk))


def _agent(svc: Service, model: str) -> str | None:
    if model == TEAM:
        return None
    name = model.removeprefix(f"{TEAM}/")
    if model.startswith(f"{TEAM}/") and name in svc.team:
        return name
    raise ApiError("unknown_model", f"No model {model!r}: use 'team' or 'team/<agent>' "
                   "(GET /v1/models lists them).")


def _content(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content
                       if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def _last_user(messages: list[dict[str, Any]]) -> int:
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "user":
            return i
    raise ApiError("invalid_request", "The messages hold no user message to answer.")


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    return _content(messages[_last_user(messages)])


async def _throwaway(svc: Service, earlier: list[dict[str, Any]], agent: str | None,
                     text: str) -> tuple[Conversation, TurnRun]:
    """A session whose transcript is the request's earlier user and assistant messages
    (system messages belong to the agents' own instructions, so they are left out),
    started with `agent` if the user may pick it, and its turn; the session is deleted
    when the turn ends unless the turn waits for a person."""
    team = svc.team
    sid = new_session_id("chat_")
    if agent is not None:  # refused before anything is stored
        rejection = team.policy.check_selection(team, agent, SessionState(sid, channel="openai"))
        if rejection is not None:
            raise ApiError(rejection.code, rejection.message)
    entry = team.entry
    transcript: list[Message] = []
    for m in earlier:
        role = m.get("role")
        if role == "user":
            transcript.append(UserMessage(_content(m), entry))
        elif role == "assistant":
            transcript.append(AssistantMessage(_content(m), entry))
    token, digest = auth.new_token()
    state = SessionState(sid, active_agent=agent or entry, messages=transcript,
                         channel="openai", metadata={auth.TOKEN_KEY: digest})
    if team[agent or entry].is_human:
        state.status = SessionStatus.WAITING_FOR_HUMAN
    if not await create_session(svc.store, state):  # a fresh random id: never taken
        raise ApiError("session_conflict", f"Session {sid!r} exists already; send again.")
    talk = Conversation(sid, True, token)
    run = svc.turns.start(sid, text)
    svc.discard_after(sid, run, talk.kept)
    return talk, run


async def _answer(svc: Service, result: RunResult, talk: Conversation) -> str:
    """The text a client shows the user: never empty when a person must act."""
    parts = [*talk.unseen, result.output] if result.output else list(talk.unseen)
    who = svc.team.get(result.agent)
    name = who.label if who is not None else result.agent
    follow = (f" This conversation is kept as session {talk.id} for that: send your next "
              f"message in it (header X-Handoffs-Session: {talk.id}, API key: the token "
              "in this answer's handoffs.token)." if talk.throwaway else "")
    if result.status is RunStatus.WAITING_FOR_HUMAN:
        parts.append(f"{name} will reply: a person answers this conversation now. Their "
                     "reply comes with the answer to your next message." + follow)
    elif result.status is RunStatus.WAITING_FOR_APPROVAL:
        state = await svc.store.load(talk.id)
        tools = sorted({a["tool"] or "a tool" for a in approvals_view(state)} if state
                       else {"a tool"})
        parts.append(f"{name} needs a person to approve {', '.join(tools)} before going "
                     f"on; the answer is stored in session {talk.id} once they decide "
                     "(its events and transcript)." + follow)
    return "\n\n".join(parts)


def _extra(svc: Service, result: RunResult, talk: Conversation) -> dict[str, Any]:
    kept = talk.kept(result)
    extra = {"agent": agent_view(svc.team.get(result.agent), result.agent),
             "session_id": talk.id if kept else None, "status": result.status.value,
             "turn": result.turn,
             "handoffs": [customer.record(r.to_dict()) for r in result.handoffs]}
    if kept and talk.throwaway:
        extra["token"] = talk.token
    return extra


def _failed(result: RunResult) -> None:
    if result.status is RunStatus.FAILED:
        err = result.error
        said = customer.error(err.code if err else "run_failed")
        raise ApiError(said["code"], said["message"], 502)


async def _completion(svc: Service, result: RunResult, model: str,
                      talk: Conversation) -> dict[str, Any]:
    u = result.usage
    return {
        "id": f"chatcmpl-{new_id()}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant",
                                 "content": await _answer(svc, result, talk)}}],
        "usage": {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
                  "total_tokens": u.input_tokens + u.output_tokens},
        "handoffs": _extra(svc, result, talk),
    }


async def _chunks(svc: Service, run: TurnRun, model: str,
                  talk: Conversation) -> AsyncIterator[str]:
    cid = f"chatcmpl-{new_id()}"
    created = int(time.time())

    def chunk(delta: dict[str, Any] | None, finish: str | None = None,
              **extra: Any) -> str:
        choices = [] if delta is None else [
            {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
        d = {"id": cid, "object": "chat.completion.chunk", "created": created,
             "model": model, "choices": choices, **extra}
        return f"data: {valid(json.dumps(d, ensure_ascii=False))}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    async for event in run.follow():
        if event["type"] in ("agent_handoff", "agent_changed"):
            yield chunk(None, handoffs_event=customer.event(dict(event)))
    try:
        result = await run.finished()
        _failed(result)
        text = await _answer(svc, result, talk)
    except Exception as exc:
        _, code, message = from_exception(exc)
        yield f"data: {json.dumps({'error': {'code': code, 'message': message}})}\n\n"
        return
    yield chunk({"content": text})
    yield chunk({}, "stop", handoffs=_extra(svc, result, talk))
    yield "data: [DONE]\n\n"
