"""The operator's routes (operator key): find sessions, speak as the human agent,
export and import."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse

from ..runtime.state.result import RunResult
from ..stores.checks import STATUSES
from .errors import ApiError, responses
from .idempotency import request_key
from .queue import queue
from .routes_sessions import PICK, check_path_id, service
from .schemas import ApprovalDecision, HumanReply, SessionExport
from .service import Service
from .views import Answer, agent_view, approvals_view

router = APIRouter(prefix="/v1", tags=["operator"])

LIMIT = {"minimum": 1, "maximum": 500}
CURSOR = {"pattern": "^[0-9]{1,10}$"}
"""The parameters' bounds, declared in the OpenAPI document and checked by the route
(400 `invalid_argument` beyond them, as every refused parameter)."""

OPERATOR = ("unauthorized", "forbidden", "store_unavailable")
"""What every operator route may answer: no key, not the operator key (or operator
routes off), the store failing."""


@router.get("/sessions", responses=responses(*OPERATOR, "invalid_argument",
                                             "validation_error"))
async def list_sessions(request: Request,
                        status: str | None = Query(
                            None, json_schema_extra={"enum": list(STATUSES)}),
                        limit: int = Query(50, json_schema_extra=LIMIT),
                        cursor: str | None = Query(None, json_schema_extra=CURSOR)
                        ) -> dict[str, Any]:
    """Sessions, most recently updated first; `status` keeps one status
    (`waiting_for_human`, `interrupted`, ...); `cursor` is the `next_cursor` of the
    previous page."""
    svc = service(request)
    svc.require_operator(request)
    if status is not None and status not in STATUSES:
        raise ApiError("invalid_argument", f"status is one of {', '.join(STATUSES)}.")
    if not 1 <= limit <= 500:
        raise ApiError("invalid_argument", "limit is between 1 and 500.")
    try:
        offset = int(cursor) if cursor else 0
        if offset < 0 or offset > 10**9:
            raise ValueError
    except ValueError as exc:
        raise ApiError("invalid_argument", "cursor is the next_cursor of a listing.") \
            from exc
    found = await svc.store.list_sessions(limit + 1, offset, status=status)
    more = len(found) > limit
    return {"sessions": [s.to_dict() for s in found[:limit]],
            "next_cursor": str(offset + limit) if more else None}


@router.get("/queue", responses=responses(*OPERATOR))
async def waiting_queue(request: Request) -> dict[str, Any]:
    """The customers waiting for a person, oldest first: `{sessions: [{id, status,
    agent, reason, since, waited, source, explanation, kind, tools, turn, messages}],
    count}`. `reason` is `escalation` (a human agent holds it: `source`, `explanation`
    and `kind` are the handoff's that brought it in) or `approval` (`tools` wait for a
    decision); `waited` is in seconds. Forks and other copies made by going back in a
    session are the operator's own and never listed."""
    svc = service(request)
    svc.require_operator(request)
    found = await queue(svc.team, svc.store.list_sessions, svc.store.load)
    now = time.time()
    return {"sessions": [w.to_dict(now) for w in found], "count": len(found)}


@router.post("/sessions/{session_id}/human", responses=responses(
    *OPERATOR, "session_not_found", "not_waiting_for_human", *PICK, "not_declared",
    "invalid_json", "message_too_large", "validation_error", "idempotency_key_reused",
    "idempotency_unsupported"))
async def human_reply(request: Request, session_id: str, reply: HumanReply) -> JSONResponse:
    """The human agent that holds the session speaks; with `handoff_to`, it hands the
    conversation back to that agent (the human's routes and the policy apply). An
    `Idempotency-Key` makes a retry store nothing and get the first reply's result."""
    svc = service(request)
    svc.require_operator(request)
    svc.check_text(reply.text)
    key = request_key(request)
    return await _operator_turn(svc, session_id, lambda: svc.runner.reply_as_human(
        session_id, reply.text, reply.handoff_to, idempotency_key=key))


@router.get("/sessions/{session_id}/approvals",
            responses=responses(*OPERATOR, "session_not_found"))
async def approvals(request: Request, session_id: str) -> dict[str, Any]:
    """The tool calls of the session that wait for a person's decision."""
    svc = service(request)
    svc.require_operator(request)
    state = await svc.store.load(session_id)
    if state is None:
        raise ApiError("session_not_found", f"There is no session {session_id!r}.")
    return {"session_id": session_id, "status": state.status,
            "approvals": approvals_view(state)}


@router.post("/sessions/{session_id}/approvals/{call_id}", responses=responses(
    *OPERATOR, "session_not_found", "no_pending_approval", "invalid_json",
    "body_too_large", "validation_error", "idempotency_key_reused",
    "idempotency_unsupported"))
async def decide(request: Request, session_id: str, call_id: str,
                 decision: ApprovalDecision) -> JSONResponse:
    """Approve (`{"approved": true}`) or reject (`{"approved": false, "reason": ...}`) a
    waiting call; the last decision of a response continues the turn, whose result this
    is (409 `no_pending_approval` when the call does not wait; a retry with the same
    `Idempotency-Key` gets the first decision's result instead)."""
    svc = service(request)
    svc.require_operator(request)
    runner = svc.runner
    key = request_key(request)
    return await _operator_turn(svc, session_id, lambda: (
        runner.approve(session_id, call_id, idempotency_key=key) if decision.approved
        else runner.reject(session_id, call_id, decision.reason, idempotency_key=key)))


async def _operator_turn(svc: Service, session_id: str,
                         act: Callable[[], Awaitable[RunResult]]) -> JSONResponse:
    """Run an operator's action on an existing session as its one running turn, wake its
    live streams, and answer with the result and the agent that holds it now."""
    if await svc.store.load(session_id) is None:
        raise ApiError("session_not_found", f"There is no session {session_id!r}.")
    async with svc.turns.exclusive(session_id):
        result = await act()
    svc.hub.wake(session_id)
    d = result.to_dict()
    d["active_agent"] = agent_view(svc.team.get(result.agent), result.agent)
    return Answer(d)


@router.get("/sessions/{session_id}/export",
            responses=responses(*OPERATOR, "session_not_found"))
async def export_session(request: Request, session_id: str) -> dict[str, Any]:
    """The whole session (transcript, records, events) as JSON to import elsewhere."""
    svc = service(request)
    svc.require_operator(request)
    found: dict[str, Any] | None = await svc.store.export_session(session_id)
    if found is None:
        raise ApiError("session_not_found", f"There is no session {session_id!r}.")
    return found


@router.post("/sessions/import", status_code=201, responses=responses(
    *OPERATOR, "invalid_argument", "invalid_json", "session_exists", "body_too_large",
    "validation_error", "invalid_export"))
async def import_session(request: Request, data: SessionExport,
                         replace: bool = False) -> dict[str, Any]:
    """Store an export under its id (`?replace=true` to overwrite; else 409
    `session_exists`)."""
    svc = service(request)
    svc.require_operator(request)
    check_path_id(data.id)
    try:
        state = await svc.store.import_session(data.model_dump(), replace=replace)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ApiError("invalid_export", f"This is not a session export ({exc}).") from exc
    return {"id": state.id, "messages": len(state.messages), "turn": state.turn}
