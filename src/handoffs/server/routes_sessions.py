"""A user's routes: create a session, send messages, pick an agent, read, delete."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from ..core.session import SessionState, SessionStatus
from ..errors import HandoffsError
from ..stores import edits
from ..stores.checks import session_id as check_id
from . import auth, customer, sse
from .customer import EventView
from .errors import ApiError, body, from_exception, responses
from .idempotency import request_key
from .schemas import AgentPick, NewMessage, NewSession
from .service import Service, new_session_id
from .views import Answer, agent_view, session_view, transcript_view

router = APIRouter(prefix="/v1", tags=["sessions"])

OPENS = ("unauthorized", "forbidden", "session_not_found", "store_unavailable")
"""What any route of one session may answer: no token, a wrong one, no such session."""
PICK = ("not_user_selectable", "system_only", "unknown_target", "target_disabled",
        "channel_unsupported", "held_by_person")
"""The refusals of a user's pick."""


def service(request: Request) -> Service:
    s: Service = request.app.state.service
    return s


@router.post("/sessions", status_code=201, responses=responses(
    "invalid_json", "invalid_argument", "forbidden", *PICK, "session_exists", "body_too_large",
    "validation_error", "too_many_requests", "store_unavailable"))
async def create_session(request: Request, spec: NewSession | None = None) -> JSONResponse:
    """Start a session. Answers its `id` (random), its `token` (the bearer secret for
    every route of this session; shown once, stored hashed) and its active agent."""
    svc = service(request)
    spec = spec or NewSession()
    if spec.id is not None:
        if not svc.operator(request):
            raise ApiError("forbidden", "Only the operator key may choose a session id; "
                           "leave 'id' out to get a new one.")
        check_path_id(spec.id)
    svc.check_rate(request)
    sid = spec.id or new_session_id()
    team = svc.team
    agent = spec.agent or team.entry
    if spec.agent is not None:
        rejection = team.policy.check_selection(team, spec.agent, SessionState(sid))
        if rejection is not None:
            raise ApiError(rejection.code, rejection.message)
    token, digest = auth.new_token()
    state = SessionState(sid, active_agent=agent, channel=spec.channel,
                         metadata={auth.TOKEN_KEY: digest},
                         context=_first_context(svc, request, spec.context))
    if team[agent].is_human:
        state.status = SessionStatus.WAITING_FOR_HUMAN
    if not await edits.create_session(svc.store, state):
        raise ApiError("session_exists", f"Session {sid!r} already exists.")
    return Answer({"id": sid, "token": token,
                         "active_agent": agent_view(team.get(agent), agent),
                         "channel": spec.channel}, status_code=201)


def _first_context(svc: Service, request: Request, given: dict[str, Any] | None
                   ) -> dict[str, Any] | None:
    """A new session's typed context, fixed now (a customer's message cannot choose it
    later): the operator's `context`, else the team's `context_type()`."""
    team = svc.team
    if given is not None and (team.context_type is None or not svc.operator(request)):
        raise ApiError("forbidden" if team.context_type is not None else "invalid_argument",
                       "Only the operator key may give a new session its context."
                       if team.context_type is not None else
                       "This team declares no session context (Team(context_type=...)).")
    if team.context_type is None:
        return None
    from ..core.typed_context import dumped, opened

    try:
        return dumped(opened(team.context_type, None, given))
    except HandoffsError as exc:
        raise ApiError(exc.code, str(exc)) from exc


def check_path_id(session_id: str) -> None:
    """Refuse (`invalid_argument`) an id that no store or no route could reach: one
    with '/' has no URL of its own under /v1/sessions/."""
    try:
        check_id(session_id)
    except Exception as exc:
        raise ApiError("invalid_argument", str(exc)) from exc
    if "/" in session_id:
        raise ApiError("invalid_argument", f"Invalid session id {session_id!r}: it "
                       "contains '/', so no URL could name it. Leave '/' out.")


@router.get("/sessions/{session_id}", responses=responses(*OPENS))
async def get_session(request: Request, session_id: str) -> dict[str, Any]:
    """The session: its active agent (with display name, icon, colour), status, turn,
    channel, and the team's typed context under `context` (`Team(context_type=...)`: all
    of it for the operator key, its public fields for the session's token)."""
    svc = service(request)
    state = await svc.session(request, session_id)
    return session_view(svc.team, state, svc.operator(request))


@router.get("/sessions/{session_id}/transcript", responses=responses(*OPENS))
async def get_transcript(request: Request, session_id: str) -> dict[str, Any]:
    """Every message with the agent it belongs to, and every handoff record (for a
    customer's token, a failure's internal text replaced: `customer.transcript`)."""
    svc = service(request)
    state = await svc.session(request, session_id)
    seen = transcript_view(svc.team, state)
    return seen if svc.operator(request) else customer.transcript(seen)


@router.delete("/sessions/{session_id}", status_code=204, responses=responses(*OPENS))
async def delete_session(request: Request, session_id: str) -> Response:
    """Delete the session and everything stored with it."""
    svc = service(request)
    await svc.session(request, session_id)
    await edits.delete_session(svc.store, session_id)
    return Response(status_code=204)


@router.post("/sessions/{session_id}/agent", responses=responses(
    *OPENS, *PICK, "invalid_json", "body_too_large", "validation_error",
    "idempotency_key_reused", "idempotency_unsupported"))
async def pick_agent(request: Request, session_id: str, pick: AgentPick) -> dict[str, Any]:
    """The user picks who answers next; refused with the policy's code
    (`unknown_target`, `not_user_selectable`, `system_only`, `target_disabled`,
    `channel_unsupported`; `waiting_for_approval` while a tool call waits for a
    person). The pick is stored and published like any handoff (`agent_handoff`,
    `agent_changed`; `handoff_rejected` when refused). A retry with the same
    `Idempotency-Key` stores nothing and gets the first pick's answer."""
    svc = service(request)
    await svc.session(request, session_id)
    record = await svc.pick(session_id, pick.agent, request_key(request))
    return {"record": record.to_dict(),
            "active_agent": agent_view(svc.team.get(pick.agent), pick.agent)}


@router.post("/sessions/{session_id}/messages",
             responses={200: {"description": "The turn's RunResult (JSON), or its events "
                              "(text/event-stream)"},
                        202: {"description": "Prefer: respond-async: the turn started"},
                        **responses(*OPENS, "invalid_json", "session_busy",
                                    "waiting_for_approval", "message_too_large",
                                    "idempotency_key_reused", "idempotency_unsupported",
                                    "body_too_large", "validation_error",
                                    "too_many_requests")})
async def post_message(request: Request, session_id: str, message: NewMessage) -> Response:
    """Run one user turn. JSON `RunResult` by default; `Accept: text/event-stream`
    streams the turn's events; `Prefer: respond-async` answers 202 once the turn has
    started. Messages to a busy session queue; `Prefer: wait=0` asks for 409
    `session_busy` instead. An `Idempotency-Key` header makes a retry (the same key)
    store and run nothing: it gets the first request's answer (docs/serving.md)."""
    svc = service(request)
    busy = svc.turns.busy(session_id)
    # The message's place in the session's queue is taken before anything is awaited:
    # messages to one session run in the order they arrived.
    run = svc.turns.queue(session_id)
    try:
        state = await svc.session(request, session_id)
        svc.check_text(message.text)
        if (message.context is not None and svc.team.context_type is not None
                and not svc.operator(request)):
            raise ApiError("forbidden", "This team keeps the session's context itself; "
                           "leave 'context' out of the message.")
        key = request_key(request)
        svc.check_rate(request)
        prefer = request.headers.get("prefer", "").lower()
        if "wait=0" in prefer and (busy or state.status == "running"):
            raise ApiError("session_busy", "A turn is running on this session; send "
                           "again later, or leave out 'Prefer: wait=0' to queue behind it.")
    except BaseException:
        run.drop()
        raise
    run.go(message.text, message.channel, message.context, key)
    if "respond-async" in prefer:
        first = await run.started()
        if first is None:
            await run.finished()  # raises what stopped it
            raise ApiError("internal_error", "The turn did not start.", 503)
        after = first["seq"] - 1
        return Answer(
            {"session_id": session_id, "turn": first["turn"], "first_seq": first["seq"],
             "events": f"/v1/sessions/{session_id}/events?after={after}"},
            status_code=202,
            headers={"Location": f"/v1/sessions/{session_id}/events?after={after}"})
    if "text/event-stream" in request.headers.get("accept", ""):
        return sse.response(_turn_frames(run, svc.event_view(request)))
    result = await run.finished()
    d = result.to_dict() if svc.operator(request) else customer.result(result.to_dict())
    d["active_agent"] = agent_view(svc.team.get(result.agent), result.agent)
    return Answer(d)


async def _turn_frames(run: Any, view: EventView | None) -> AsyncIterator[str]:
    async for event in run.follow():
        shown = event if view is None else view(event)
        if shown is not None:
            yield sse.frame(shown)
    if run.result is None and run.error is not None:
        _, code, message = from_exception(run.error)
        yield sse.frame({"type": "error", **body(code, message)})
