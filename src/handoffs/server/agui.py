"""`POST /v1/agui`: a turn of the team streamed as AG-UI events, for any AG-UI client
(`@ag-ui/client`'s `HttpAgent`, CopilotKit), with the protocol's own types and encoder
(`ag_ui`, the `agui` extra); `create_app(..., agui=True)`, `handoffs serve --agui`.

The body is the protocol's `RunAgentInput`. Its `threadId` is the session: a thread that
is not one yet is made a session, whose token comes once, in a `CUSTOM` event named
`handoffs_session` ({session_id, token}), and opens it from then on (`Authorization:
Bearer ...`; the operator key opens every session). The server keeps the conversation,
so of `messages` only the latest user message is the turn's input; the client's `state`
is not read (shared memory is the server's, sent as `STATE_SNAPSHOT` / `STATE_DELTA`).

A tool call that waits for a person's approval ends the run with an `interrupt` outcome
(one interrupt per call, its `responseSchema` the form: `{approved, reason}`); a run
whose `resume` answers them (`status: "resolved"` with that payload, or `"cancelled"`: a
rejection) continues the turn. Deciding is the operator's: a resume needs the operator
key, as `POST /v1/sessions/{id}/approvals/{call_id}` does.

A run sent again with the same `runId` (or `Idempotency-Key`) is a retry: its message is
stored and answered once, and the retry streams the first run's stored events.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import StreamingResponse

from ..core.events import StoredEvent
from ..core.idempotency import IdempotencyKey
from ..errors import missing_extra
from . import auth, customer
from .agui_events import Translator
from .contexts import bearer, open_context
from .errors import ApiError, from_exception, responses
from .idempotency import request_key
from .service import Service, new_session_id
from .sse import HEADERS

log = logging.getLogger("handoffs.server.agui")

router = APIRouter(prefix="/v1", tags=["agui"])


@router.post("/agui", responses={200: {"description": "The run's AG-UI events "
                                       "(text/event-stream)"},
                                 **responses("unauthorized", "forbidden", "invalid_argument",
                                             "validation_error", "message_too_large",
                                             "no_pending_approval", "too_many_requests",
                                             "idempotency_key_reused", "idempotency_unsupported")})
async def agui(request: Request) -> StreamingResponse:
    """Run one turn (or continue one after approvals: `resume`) and stream it as AG-UI
    events: `RUN_STARTED`, `STATE_SNAPSHOT`, text messages per agent message (`name`: the
    agent), tool calls, `CUSTOM` `handoff`, `STATE_DELTA`, `RUN_FINISHED` or
    `RUN_ERROR`."""
    try:
        from ag_ui.core import RunAgentInput
        from ag_ui.encoder import EventEncoder
    except ImportError as exc:
        raise missing_extra("POST /v1/agui needs the AG-UI protocol package", "agui") \
            from exc
    from pydantic import ValidationError

    svc: Service = request.app.state.service
    try:
        run_input = RunAgentInput.model_validate(await request.json())
    except (ValidationError, ValueError) as exc:
        raise ApiError("validation_error", f"The body is not an AG-UI RunAgentInput: {exc}") \
            from exc
    sid = run_input.thread_id
    secret = bearer(request.headers.get("authorization"))
    resume = list(run_input.resume or ())
    if resume and not auth.is_operator(secret, svc.settings.operator_key):
        raise ApiError("forbidden", "Deciding on a call that waits for approval is the "
                       "operator's: resume with the operator key.")
    text = "" if resume else _last_user_text(run_input.messages)
    if not resume:
        svc.check_text(text)
        svc.check_rate(request)
    opened = await open_context(svc, sid, secret)
    if opened.refused is not None:
        raise ApiError(opened.refused, opened.message)
    encoder = EventEncoder(accept=request.headers.get("accept", ""))
    # The run's id is its idempotency key (the header, when given, wins): a client that
    # sends the run again gets the first one's events, its message stored once.
    key = request_key(request) or (
        IdempotencyKey(f"agui:{run_input.run_id}") if run_input.run_id else None)
    frames = _frames(svc, sid, run_input.run_id or new_session_id("run_"), text, resume,
                     opened.token, encoder, key)
    return StreamingResponse(frames, media_type=encoder.get_content_type(), headers=HEADERS)


def _last_user_text(messages: Any) -> str:
    for m in reversed(list(messages or ())):
        if getattr(m, "role", None) != "user":
            continue
        content = m.content
        if isinstance(content, str):
            text = content
        else:
            text = "".join(getattr(p, "text", "") or "" for p in content)
        if text.strip():
            return text
    raise ApiError("invalid_argument", "The run has no user message to answer: put the "
                   "user's message last in `messages` (or answer interrupts with `resume`).")


async def _frames(svc: Service, sid: str, run_id: str, text: str, resume: list[Any],
                  token: str | None, encoder: Any,
                  key: IdempotencyKey | None) -> AsyncIterator[str]:
    from ag_ui.core import CustomEvent

    from ..runtime.effects.ids import new_id

    state = await svc.store.load(sid)
    before = customer.shared(state.shared) if state is not None else {}
    active = (state.active_agent if state is not None else None) or svc.team.entry
    tr = Translator(sid, run_id, new_id)
    for e in tr.started(active, before):
        yield encoder.encode(e)
    if token is not None:
        yield encoder.encode(CustomEvent(name="handoffs_session",
                                         value={"session_id": sid, "token": token}))
    try:
        if resume:  # the continued turn, once it has ended
            events, result = await _resumed(svc, sid, resume, key)
            for event in events:
                for e in tr.event(event):
                    yield encoder.encode(e)
        else:  # the turn, live
            run = svc.turns.queue(sid)
            run.go(text, key=key)
            async for event in run.follow():
                for e in tr.event(event):
                    yield encoder.encode(e)
            result = (await run.finished()).to_dict()
    except Exception as exc:
        _, code, message = from_exception(exc)
        log.warning("agui run on session %s failed: %s", sid, code)
        for e in tr.failed(code, message):
            yield encoder.encode(e)
        return
    after = await svc.store.load(sid)
    for e in tr.finished(result, before,
                         customer.shared(after.shared) if after is not None else {}):
        yield encoder.encode(e)


async def _resumed(svc: Service, sid: str, resume: list[Any], key: IdempotencyKey | None
                   ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Apply a resume's decisions in order (the last continues the turn); the events the
    continued turn stored, and its result. With `key` (the run's), each decision has a
    key of its own made of it and the interrupt's id: a resume sent again decides
    nothing twice and gets the continued turn's stored events."""
    runner = svc.runner
    store = svc.store
    first = await store.event_count(sid)
    result: Any = None
    async with svc.turns.exclusive(sid):
        for entry in resume:
            payload = entry.payload if isinstance(entry.payload, dict) else {}
            approved = entry.status == "resolved" and payload.get("approved", True) is True
            each = None if key is None else IdempotencyKey(f"{key.key}:{entry.interrupt_id}")
            if approved:
                result = await runner.approve(sid, entry.interrupt_id, idempotency_key=each)
            else:
                result = await runner.reject(sid, entry.interrupt_id,
                                             str(payload.get("reason") or ""),
                                             idempotency_key=each)
    svc.hub.wake(sid)
    kept = result.events if result is not None else []
    if kept and isinstance(kept[0], StoredEvent):  # a retry: the first resume's events
        return [e.to_dict() | {"seq": e.seq} for e in kept], result.to_dict()
    events = await store.events_after(sid, first - 1)
    return events, result.to_dict()
