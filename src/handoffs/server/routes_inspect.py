"""What the inspector page (`/inspect`) reads besides the session's events: the state a
session holds now (shared memory, the active agent's view, a waiting response); and what
it does: make a recorded model call again, edited (`runtime.rerun`). For the operator
key only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from ..runtime.rerun import CallEdits, rerun
from .errors import ApiError, responses
from .routes_operator import OPERATOR
from .routes_sessions import service
from .views import HIDDEN, context_of

router = APIRouter(prefix="/v1", tags=["operator"])


@router.get("/sessions/{session_id}/state",
            responses=responses(*OPERATOR, "session_not_found"))
async def session_state(request: Request, session_id: str) -> dict[str, Any]:
    """The session's state as stored (operator key): status, turn, active agent, the
    active agent's view of the transcript (mode, start, pivot, the record that opened
    it), shared memory (with `handoff_context`), the typed context (None: the team
    declares none), a response waiting for approval, and
    metadata (the token's hash left out)."""
    svc = service(request)
    svc.require_operator(request)
    state = await svc.store.load(session_id)
    if state is None:
        raise ApiError("session_not_found", f"There is no session {session_id!r}.")
    return {"id": state.id, "status": state.status, "turn": state.turn,
            "active_agent": state.active_agent or svc.team.entry,
            "channel": state.channel, "view": state.view.to_dict(),
            "shared": state.shared, "context": context_of(svc.team, state),
            "pending": None if state.pending is None else state.pending.to_dict(),
            "messages": len(state.messages), "records": len(state.handoffs),
            "metadata": {k: v for k, v in state.metadata.items() if k not in HIDDEN},
            "created_at": state.created_at, "updated_at": state.updated_at}


class RerunRequest(BaseModel):
    """`POST /v1/sessions/{id}/rerun`: a recorded model call and what to change in it."""

    model_config = ConfigDict(extra="forbid")
    turn: int = Field(ge=1, description="The turn the call was made in.")
    call: int = Field(ge=0, description="The call's number in its turn (its events' `call`).")
    line: str = Field("", max_length=256, description="Its line of work: empty for the "
                      "main line, else a delegated task's (the event's `line`).")
    system: str | None = Field(None, max_length=200_000,
                               description="The system text instead of the recorded one.")
    window: int | None = Field(None, ge=0, description="Send only the newest this many of "
                               "the recorded messages.")
    tools: list[str] | None = Field(None, max_length=500, description="Offer only these of "
                                    "the recorded tools (by name).")
    model: str | None = Field(None, min_length=3, max_length=300, description="A "
                              "'provider:name' model string instead of the agent's model.")


@router.post("/sessions/{session_id}/rerun", responses=responses(
    *OPERATOR, "session_not_found", "call_not_recorded", "content_not_captured",
    "invalid_argument", "invalid_model", "no_model", "validation_error", "invalid_json",
    "body_too_large"))
async def rerun_call(request: Request, session_id: str, ask: RerunRequest) -> dict[str, Any]:
    """Make a recorded model call again (`--inspect`), with its system text, history
    window, tools or model changed, and answer what came back beside the recorded
    answer: `{turn, call, line, agent, model, latency, request: {system, messages, tools,
    tool_choice}, response: {text, tool_calls, usage, model} | {error: {code, message}},
    recorded}`. One model call: no tool runs, and nothing is stored in the session."""
    svc = service(request)
    svc.require_operator(request)
    if await svc.store.load(session_id) is None:
        raise ApiError("session_not_found", f"There is no session {session_id!r}.")
    edits = CallEdits(ask.system, ask.window, ask.tools, ask.model or None)
    done = await rerun(svc.runner, session_id, ask.turn, ask.call, edits, ask.line)
    return done.to_dict()
