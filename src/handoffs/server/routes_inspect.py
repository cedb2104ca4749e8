"""What the inspector page (`/inspect`) reads besides the session's events: the state a
session holds now (shared memory, the active agent's view, a waiting response), for the
operator key only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from .errors import ApiError, responses
from .routes_operator import OPERATOR
from .routes_sessions import service
from .views import HIDDEN

router = APIRouter(prefix="/v1", tags=["operator"])


@router.get("/sessions/{session_id}/state",
            responses=responses(*OPERATOR, "session_not_found"))
async def session_state(request: Request, session_id: str) -> dict[str, Any]:
    """The session's state as stored (operator key): status, turn, active agent, the
    active agent's view of the transcript (mode, start, pivot, the record that opened
    it), shared memory (with `handoff_context`), a response waiting for approval, and
    metadata (the token's hash left out)."""
    svc = service(request)
    svc.require_operator(request)
    state = await svc.store.load(session_id)
    if state is None:
        raise ApiError("session_not_found", f"There is no session {session_id!r}.")
    return {"id": state.id, "status": state.status, "turn": state.turn,
            "active_agent": state.active_agent or svc.team.entry,
            "channel": state.channel, "view": state.view.to_dict(),
            "shared": state.shared, "pending": state.pending,
            "messages": len(state.messages), "records": len(state.handoffs),
            "metadata": {k: v for k, v in state.metadata.items() if k not in HIDDEN},
            "created_at": state.created_at, "updated_at": state.updated_at}
