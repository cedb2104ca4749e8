"""The team as one OpenAI-compatible model: `GET /v1/models`, `POST /v1/chat/completions`.

`team` is the team as it routes itself; `team/<agent>` first makes `<agent>` the active
agent (the user's pick, so the policy applies): a client's model picker becomes the agent
picker. The session comes from the `X-Handoffs-Session` header or `metadata.session_id`,
with its token (or the operator key) as the API key. Without one, the request's
`messages` are the transcript of a throw-away session, deleted after the turn.

The reply is the final agent's text. Which agent answered, the session and the turn's
handoffs go in an extra `handoffs` field that SDK clients ignore. Internal tool calls
(transfers, delegations, tools) are never sent as `tool_calls`. A streamed reply sends
its text once the turn's answer is final, so words of an agent that then handed off, or
of a delegate, never reach the user as the answer.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from ..core.messages import AssistantMessage, Message, UserMessage
from ..core.session import SessionState
from ..runtime.ids import new_id
from ..runtime.result import RunResult, RunStatus
from . import sse
from .errors import ApiError
from .routes_sessions import service
from .service import Service
from .turns import TurnRun
from .views import agent_view

router = APIRouter(prefix="/v1", tags=["openai"])

TEAM = "team"


class ChatRequest(BaseModel):
    """The fields of an OpenAI chat completion request that the team uses; the rest
    (temperature, tools, ...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(TEAM, max_length=300)
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=10_000)
    stream: bool = False
    metadata: dict[str, Any] | None = None


@router.get("/models")
async def models(request: Request) -> dict[str, Any]:
    """`team`, and `team/<agent>` for every agent a user may pick."""
    svc = service(request)
    ids = [TEAM] + [f"{TEAM}/{a.name}" for a in svc.team.agents
                    if a.user_selectable and not a.system_only and not a.is_human]
    return {"object": "list",
            "data": [{"id": i, "object": "model", "created": 0, "owned_by": "handoffs"}
                     for i in ids]}


@router.post("/chat/completions")
async def chat_completions(request: Request, body: ChatRequest) -> Response:
    """Run one turn of the team on the last user message (see the module's doc)."""
    svc = service(request)
    agent = _agent(svc, body.model)
    text = _last_user_text(body.messages)
    svc.check_text(text)
    sid = request.headers.get("x-handoffs-session") or \
        (body.metadata or {}).get("session_id")
    throwaway = sid is None
    if throwaway:
        sid = f"chat_{new_id()}"
        await _throwaway(svc, sid, body.messages[:_last_user(body.messages)])
    else:
        if not isinstance(sid, str):
            raise ApiError("invalid_argument", "metadata.session_id is a string.")
        await svc.session(request, sid)
    if agent is not None:
        state = await svc.store.load(sid)
        if state is not None and (state.active_agent or svc.team.entry) != agent:
            await svc.runner.select_agent(sid, agent)
    run = svc.turns.start(sid, text)
    if body.stream:
        return sse.response(_chunks(svc, run, body.model, sid, throwaway))
    try:
        result = await run.finished()
    finally:
        if throwaway:
            await _forget(svc, sid, run)
    return JSONResponse(_completion(svc, result, body.model, sid, throwaway))


def _agent(svc: Service, model: str) -> str | None:
    if model == TEAM or model.startswith(("gpt", "handoffs")):
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


async def _throwaway(svc: Service, sid: str, earlier: list[dict[str, Any]]) -> None:
    """A session whose transcript is the request's earlier user and assistant messages
    (system messages belong to the agents' own instructions, so they are left out)."""
    entry = svc.team.entry
    transcript: list[Message] = []
    for m in earlier:
        role = m.get("role")
        if role == "user":
            transcript.append(UserMessage(_content(m), entry))
        elif role == "assistant":
            transcript.append(AssistantMessage(_content(m), entry))
    state = SessionState(sid, active_agent=entry, messages=transcript, channel="openai")
    await svc.store.commit(state, state.checkpoint())


async def _forget(svc: Service, sid: str, run: TurnRun) -> None:
    if run.task is not None and not run.task.done():
        return
    async with svc.store.lock(sid):
        await svc.store.delete(sid)


def _extra(svc: Service, result: RunResult, sid: str, throwaway: bool) -> dict[str, Any]:
    return {"agent": agent_view(svc.team.get(result.agent), result.agent),
            "session_id": None if throwaway else sid, "status": result.status.value,
            "turn": result.turn, "handoffs": [r.to_dict() for r in result.handoffs]}


def _failed(result: RunResult) -> None:
    if result.status is RunStatus.FAILED:
        err = result.error
        raise ApiError(err.code if err else "run_failed",
                       err.message if err else "The turn failed.", 502)


def _completion(svc: Service, result: RunResult, model: str, sid: str,
                throwaway: bool) -> dict[str, Any]:
    _failed(result)
    u = result.usage
    return {
        "id": f"chatcmpl-{new_id()}", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": result.output}}],
        "usage": {"prompt_tokens": u.input_tokens, "completion_tokens": u.output_tokens,
                  "total_tokens": u.input_tokens + u.output_tokens},
        "handoffs": _extra(svc, result, sid, throwaway),
    }


async def _chunks(svc: Service, run: TurnRun, model: str, sid: str,
                  throwaway: bool) -> AsyncIterator[str]:
    cid = f"chatcmpl-{new_id()}"
    created = int(time.time())

    def chunk(delta: dict[str, Any] | None, finish: str | None = None,
              **extra: Any) -> str:
        choices = [] if delta is None else [
            {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
        d = {"id": cid, "object": "chat.completion.chunk", "created": created,
             "model": model, "choices": choices, **extra}
        return f"data: {json.dumps(d, ensure_ascii=False)}\n\n"

    try:
        yield chunk({"role": "assistant", "content": ""})
        async for event in run.follow():
            if event["type"] in ("agent_handoff", "agent_changed"):
                yield chunk(None, handoffs_event=event)
        try:
            result = await run.finished()
            _failed(result)
        except Exception as exc:
            from .errors import from_exception

            _, code, message = from_exception(exc)
            yield f"data: {json.dumps({'error': {'code': code, 'message': message}})}\n\n"
            return
        yield chunk({"content": result.output})
        yield chunk({}, "stop", handoffs=_extra(svc, result, sid, throwaway))
        yield "data: [DONE]\n\n"
    finally:
        if throwaway:
            await _forget(svc, sid, run)
