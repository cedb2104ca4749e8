"""The operator's routes for going back in a session (issue 31): fork it before a turn,
rewind it to before a turn, replay it from a turn; what `runner.fork`, `runner.rewind`
and `runner.replay` do, over HTTP, for the operator key only."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from ..core.session import SessionState
from ..runtime.answer_fork import fork_with_answer
from ..runtime.replay import replay as replay_session
from ..runtime.timetravel import fork as fork_session
from ..stores.edits import edit_session
from . import auth
from .errors import ApiError, responses
from .idempotency import request_key
from .routes_operator import OPERATOR
from .routes_sessions import check_path_id, service
from .service import Service
from .views import HIDDEN

router = APIRouter(prefix="/v1", tags=["operator"])

REFUSED = ("turn_running", "waiting_for_approval", "waiting_for_human")
"""Why a session cannot go back now: a turn runs, or a person is awaited."""


class ForkRequest(BaseModel):
    """`POST /v1/sessions/{id}/fork`."""

    model_config = ConfigDict(extra="forbid")
    turn: int = Field(ge=1, description="The fork holds the session as it was before this "
                      "turn (1 is the first user message; the turn after the last copies "
                      "all of it).")
    new_id: str | None = Field(None, min_length=1, max_length=256,
                               description="The fork's id (default: `<id>-fork-<random>`).")
    call: int | None = Field(None, ge=0, description="Fork at this recorded model call of "
                             "`turn` instead (`--inspect`), continued with `answer`: the "
                             "session as it was when the call was made, the called agent "
                             "then saying `answer`.")
    answer: str | None = Field(None, max_length=100_000,
                               description="With `call`: the answer the fork continues with "
                               "(a text, e.g. one a rerun gave).")
    token: bool = Field(False, description="Give the fork a session token of its own "
                        "(answered once, as `token`), so a chat page can continue it.")


class RewindRequest(BaseModel):
    """`POST /v1/sessions/{id}/rewind`."""

    model_config = ConfigDict(extra="forbid")
    turn: int = Field(ge=1, description="Cut the session back to before this turn.")


class ReplayRequest(BaseModel):
    """`POST /v1/sessions/{id}/replay`: on the server's own team and models."""

    model_config = ConfigDict(extra="forbid")
    from_turn: int = Field(ge=1, description="The first turn played again.")


async def _existing(request: Request, session_id: str) -> Service:
    svc = service(request)
    svc.require_operator(request)
    if await svc.store.load(session_id) is None:
        raise ApiError("session_not_found", f"There is no session {session_id!r}.")
    return svc


async def _retoken(svc: Service, made: SessionState, digest: str) -> None:
    """Give a fork found by a retried request the retry's token (its hash)."""
    def retoken(state: SessionState) -> bool:
        state.metadata[auth.TOKEN_KEY] = digest
        return True

    if await edit_session(svc.runner.store, made.id, retoken) is None:
        raise ApiError("session_not_found", f"There is no session {made.id!r}.")
    made.metadata[auth.TOKEN_KEY] = digest


def _summary(state: SessionState) -> dict[str, Any]:
    return {"id": state.id, "turn": state.turn, "messages": len(state.messages),
            "records": len(state.handoffs), "active_agent": state.active_agent,
            "status": state.status,
            "metadata": {k: v for k, v in state.metadata.items() if k not in HIDDEN}}


@router.post("/sessions/{session_id}/fork", status_code=201, responses=responses(
    *OPERATOR, "session_not_found", "session_exists", "invalid_turn", "turn_not_recorded",
    "call_not_recorded", "invalid_argument", *REFUSED, "validation_error", "invalid_json",
    "body_too_large"))
async def fork(request: Request, session_id: str, ask: ForkRequest) -> dict[str, Any]:
    """A new session holding this one as it was before `turn` (its id, turn, messages,
    active agent, status and metadata, `forked_from` included); the original gains a
    link in `metadata.forks`. With `call` and `answer`: as it was at that recorded model
    call of `turn`, continued with `answer` (`Runner.fork_with_answer`). The fork is the
    operator's: the customer's token does not open it; with `token: true` it gets a
    token of its own (`token` in the answer), for a chat page to continue it. With an
    `Idempotency-Key`, a retry answers with the fork the first
    request made, and makes no other (with `token: true`, a new token: the first
    answer's never arrived)."""
    svc = await _existing(request, session_id)
    if ask.new_id is not None:
        check_path_id(ask.new_id)
    if (ask.call is None) != (ask.answer is None):
        raise ApiError("invalid_argument", "A fork at a model call names the call and the "
                       "answer it continues with: give both 'call' and 'answer', or neither.")
    token, metadata = None, {}
    if ask.token:
        token, digest = auth.new_token()
        metadata = {auth.TOKEN_KEY: digest}
    # The customer's token does not open the operator's fork (HIDDEN: its hash, and the
    # A2A tokens a remote agent was given); a token of its own may.
    key = request_key(request)
    if ask.call is not None and ask.answer is not None:
        made = await fork_with_answer(svc.runner, session_id, ask.turn, ask.call, ask.answer,
                                      ask.new_id, drop=HIDDEN, metadata=metadata, key=key)
    else:
        made = await fork_session(svc.runner.store, session_id, ask.turn, ask.new_id,
                                  drop=HIDDEN, metadata=metadata, key=key)
    if key is not None and token is not None and \
            made.metadata.get(auth.TOKEN_KEY) != metadata[auth.TOKEN_KEY]:
        # A retry: the first answer's token never reached the client, so the fork takes
        # this answer's instead.
        await _retoken(svc, made, metadata[auth.TOKEN_KEY])
    answer = _summary(made)
    if token is not None:
        answer["token"] = token
    return answer


@router.post("/sessions/{session_id}/rewind", responses=responses(
    *OPERATOR, "session_not_found", "invalid_turn", "turn_not_recorded", *REFUSED,
    "validation_error", "idempotency_key_reused"))
async def rewind(request: Request, session_id: str, ask: RewindRequest) -> dict[str, Any]:
    """Cut the session back to before `turn`; what was cut is kept as the session named
    in `metadata.rewinds[-1].kept_as`. 409 while a turn runs or a person is awaited. A
    retry with the same `Idempotency-Key` cuts nothing more: it answers with the
    session as the first request left it."""
    svc = await _existing(request, session_id)
    if svc.turns.busy(session_id):
        raise ApiError("turn_running", f"A turn is running on session {session_id!r}; "
                       "wait for it to end, then rewind.")
    key = request_key(request)
    async with svc.turns.exclusive(session_id):
        state = await svc.runner.rewind(session_id, ask.turn, idempotency_key=key)
    svc.hub.wake(session_id)
    return _summary(state)


@router.post("/sessions/{session_id}/replay", responses=responses(
    *OPERATOR, "session_not_found", "invalid_turn", "turn_not_recorded",
    "validation_error"))
async def replay(request: Request, session_id: str, ask: ReplayRequest) -> dict[str, Any]:
    """Fork the session before `from_turn` and play its user messages again on this
    server's team and models: per turn the original and new answering agent, handoffs
    and answer, the routing (`same`, `different agent`, `different path`), and the
    replay's model calls, prompt bytes and tokens (`Replay.to_dict()`)."""
    svc = await _existing(request, session_id)
    found = await replay_session(svc.runner, session_id, ask.from_turn, drop=HIDDEN)
    return found.to_dict()
