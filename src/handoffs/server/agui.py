"""`POST /v1/agui`: a turn of the team streamed as AG-UI events, for any AG-UI client
(`@ag-ui/client`'s `HttpAgent`, CopilotKit), with the protocol's own types and encoder
(`ag_ui`, the `agui` extra); `create_app(..., agui=True)`, `handoffs serve --agui`.

The body is the protocol's `RunAgentInput`. Its `threadId` is the session: a thread that
is not one yet is made a session, whose token comes once, in a `CUSTOM` event named
`handoffs_session` ({session_id, token}), and opens it from then on (`Authorization:
Bearer ...`; the operator key opens every session). The server keeps the conversation,
so of `messages` only the latest user message is the turn's input. Shared state goes both
ways: the keys of the client's `state.shared` that differ from the session's are written
to its shared memory before the run, and a tool's change is a `STATE_DELTA` as soon as
the tool returns (`Runner.live_shared`), not only at the end.

A tool call that waits for a person's approval ends the run with an `interrupt` outcome
(one interrupt per call, its `responseSchema` the form: `{approved, reason}`) when this
client may decide (the operator key, or the thread's token with
`Team(approvals_by="user")`); a run whose `resume` answers them (`status: "resolved"`
with that payload, or `"cancelled"`: a rejection) continues the turn. A client that may
not decide gets no interrupt it could not answer: its run follows the session
(`CUSTOM` `handoffs_waiting`) until the operator decides, and so does a run whose turn
left a person holding the conversation, until the person replies. A client that keeps
its history gets a `MESSAGES_SNAPSHOT` first when the session holds answers it does not
show; a client that closes the stream mid-turn cancels the turn.

A run sent again with the same `runId` (or `Idempotency-Key`) is a retry: its message is
stored and answered once, and the retry streams the first run's stored events.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import StreamingResponse

from ..core.events import StoredEvent
from ..core.idempotency import IdempotencyKey
from ..core.session import SessionState
from ..errors import missing_extra
from . import auth, customer
from .agui_events import Translator, shared_patch
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
                                             "no_pending_approval", "no_pending_tool_call",
                                             "tool_name_taken", "client_tools_unsupported",
                                             "too_many_requests",
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
    decides = auth.is_operator(secret, svc.settings.operator_key) or \
        svc.team.approvals_by == "user"
    if resume and not decides:
        raise ApiError("forbidden", "Deciding on a call that waits for approval is the "
                       "operator's here: resume with the operator key (or build the team "
                       "with Team(approvals_by=\"user\")).")
    answers = _tool_answers(run_input.messages)
    text = "" if resume or answers else _last_user_text(run_input.messages)
    if not resume:
        if not answers:
            svc.check_text(text)
        svc.check_rate(request)
    tools = _client_tools(svc, run_input.tools) if not (resume or answers) else None
    opened = await open_context(svc, sid, secret)
    if opened.refused is not None:
        raise ApiError(opened.refused, opened.message)
    if answers:
        await _check_answers(svc, sid, answers)
    encoder = EventEncoder(accept=request.headers.get("accept", ""))
    # The run's id is its idempotency key (the header, when given, wins): a client that
    # sends the run again gets the first one's events, its message stored once.
    key = request_key(request) or (
        IdempotencyKey(f"agui:{run_input.run_id}") if run_input.run_id else None)
    await _take_state(svc, sid, run_input.state)
    frames = _frames(svc, sid, run_input.run_id or new_session_id("run_"), text, resume,
                     opened.token, encoder, decides, _assistant_texts(run_input.messages),
                     key, tools, answers)
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


def _client_tools(svc: Service, tools: Any) -> list[dict[str, Any]] | None:
    """The run's `tools` (the client's own, AG-UI's frontend tools), checked now: a name
    one of the team's tools or handoffs has is refused (`tool_name_taken`)."""
    from ..core.client_tools import client_tools
    from ..errors import HandoffsError

    specs = [{"name": t.name, "description": t.description, "parameters": t.parameters}
             for t in tools or ()]
    if not specs:
        return None
    if getattr(svc.runner.executor, "dispatcher", None) is not None:
        raise ApiError("client_tools_unsupported", "This server runs its turns under "
                       "Temporal, where the client's tools are not supported yet: send "
                       "the run without `tools`.")
    try:
        client_tools(svc.team, specs)
    except HandoffsError as exc:
        raise ApiError(exc.code, str(exc)) from exc
    return specs


def _tool_answers(messages: Any) -> list[tuple[str, str, bool]]:
    """The client's results of its tools' calls: the `tool` messages that end `messages`
    (call id, text, whether it is an error), in order."""
    out: list[tuple[str, str, bool]] = []
    for m in reversed(list(messages or ())):
        if getattr(m, "role", None) != "tool":
            break
        error = getattr(m, "error", None)
        out.append((m.tool_call_id, error or m.content or "", error is not None))
    return out[::-1]


async def _check_answers(svc: Service, sid: str, answers: list[tuple[str, str, bool]]
                         ) -> None:
    """Refuse, before the run starts, a result for a call the session never had wait for
    the client (a result sent again, for a call already answered, goes on: its run's
    idempotency key answers it with the first outcome)."""
    from ..core.messages import ToolResult

    state = await svc.store.load(sid)
    pending = state.pending if state is not None else None
    known = set(pending.client) if pending is not None else set()
    if state is not None:
        known |= {m.call_id for m in state.messages if isinstance(m, ToolResult)}
    for call_id, _, _ in answers:
        if call_id not in known:
            raise ApiError("no_pending_tool_call",
                           f"No tool call {call_id!r} of the client's waits for a result on "
                           "this thread: send results only for the tool calls the last run "
                           "ended with.")


def _client_waiting(state: Any) -> list[str]:
    """The calls of the client's tools that wait for its result (none: nothing waits for
    the client)."""
    pending = state.pending if state is not None else None
    if pending is None:
        return []
    decided = pending.decisions
    return [c for c in pending.client if c not in decided]


async def _take_state(svc: Service, sid: str, state: Any) -> None:
    """The client's side of shared state: the keys of its `state.shared` that differ from
    the session's are written to the session's shared memory before the run (a key it
    leaves out is kept: a client that has not seen a change does not undo it)."""
    shared = state.get("shared") if isinstance(state, dict) else None
    if not isinstance(shared, dict) or not shared:
        return

    def take(session: SessionState) -> bool:
        changed = {k: v for k, v in shared.items() if session.shared.get(k) != v}
        session.shared.update(changed)
        return bool(changed)

    await svc.edit(sid, take)


def _assistant_texts(messages: Any) -> set[str] | None:
    """What the client already shows of the agents' answers (None: it keeps no history,
    sending only the latest message)."""
    messages = list(messages or ())
    if len(messages) < 2:
        return None
    return {m.content for m in messages if getattr(m, "role", None) == "assistant"
            and isinstance(getattr(m, "content", None), str)}


async def _frames(svc: Service, sid: str, run_id: str, text: str, resume: list[Any],
                  token: str | None, encoder: Any, decides: bool,
                  shown: set[str] | None, key: IdempotencyKey | None,
                  tools: list[dict[str, Any]] | None,
                  answers: list[tuple[str, str, bool]]) -> AsyncIterator[str]:
    from ag_ui.core import CustomEvent, StateDeltaEvent

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
    if state is not None and _unseen(svc, state, shown):  # an operator's reply, say
        yield encoder.encode(messages_snapshot(svc.team, state))
    result: dict[str, Any] | None = None
    run: Any = None
    try:
        if resume or answers:  # the continued turn, once it has ended
            events, result = await _resumed(svc, sid, resume, answers, key)
            for event in events:
                for e in tr.event(event):
                    yield encoder.encode(e)
            status = result.get("status")
            if status == "waiting_for_approval" and not decides \
                    and not _client_waiting(await svc.store.load(sid)):
                waiting = Waiting()  # the operator decides what else waits
                async for frame in _follow(svc, sid, events[-1]["seq"] if events else -1,
                                           tr, encoder, waiting,
                                           _approval_notice(await svc.store.load(sid))):
                    yield frame
                result = waiting.result or result
                tr.interrupts.clear()
        else:
            if state is not None and state.status == "waiting_for_approval" \
                    and not decides and not _client_waiting(state):
                # the operator decides first; then this message
                waiting = Waiting()
                async for frame in _follow(svc, sid, state.event_seq - 1, tr, encoder,
                                           waiting, notice=_approval_notice(state)):
                    yield frame
            run = svc.turns.queue(sid)
            run.go(text, key=key, client_tools=tools)
            last = -1
            async for event in run.follow():
                last = event.get("seq", last)
                for e in tr.event(event):
                    yield encoder.encode(e)
                if event["type"] == "tool_result":  # a tool may have changed the state
                    live = svc.runner.live_shared(sid)
                    if live is not None and (patch := shared_patch(before, live)):
                        yield encoder.encode(StateDeltaEvent(delta=patch))
                        before = live
            result = (await run.finished()).to_dict()
            status = result.get("status")
            if status == "waiting_for_human" or (
                    status == "waiting_for_approval" and not decides
                    and not _client_waiting(await svc.store.load(sid))):
                # Someone else acts next: the run follows the session until they do.
                waiting = Waiting()
                notice = _approval_notice(await svc.store.load(sid)) \
                    if status == "waiting_for_approval" else \
                    {"waiting_for": "human", "agent": result.get("agent")}
                async for frame in _follow(svc, sid, last, tr, encoder, waiting, notice):
                    yield frame
                result = waiting.result or result
                tr.interrupts.clear()  # not this client's to answer
    except Exception as exc:
        _, code, message = from_exception(exc)
        log.warning("agui run on session %s failed: %s", sid, code)
        for e in tr.failed(code, message):
            yield encoder.encode(e)
        return
    finally:
        # The client went away mid-turn (an abort): stop the turn it started.
        if run is not None and run.events and not run.done and svc.runner.cancel(sid):
            log.info("agui run on session %s: the client left; its turn is cancelled", sid)
    if not decides:  # an approval this client may not answer is never its interrupt
        tr.interrupts.clear()
    after = await svc.store.load(sid)
    for e in tr.finished(result, before,
                         customer.shared(after.shared) if after is not None else {}):
        yield encoder.encode(e)


class Waiting:
    """How a wait for someone else ended (None: the stream ended first)."""

    __slots__ = ("result",)

    def __init__(self) -> None:
        self.result: dict[str, Any] | None = None


def _approval_notice(state: Any) -> dict[str, Any]:
    from .views import approvals_view

    calls = [{"call_id": a["call_id"], "tool": a["tool"]}
             for a in (approvals_view(state) if state is not None else [])
             if a["decision"] is None]
    return {"waiting_for": "approval", "decides": "operator", "calls": calls}


async def _follow(svc: Service, sid: str, after: int, tr: Translator, encoder: Any,
                  waiting: Waiting, notice: dict[str, Any]) -> AsyncIterator[str]:
    """Stream the session's events after `after` until the wait for someone else ends:
    a person's reply (a `waiting_for_human` session), or a decided call's continued turn
    (`waiting_for_approval`). First a `CUSTOM` `handoffs_waiting` event saying for whom;
    an SSE comment every heartbeat meanwhile."""
    from ag_ui.core import CustomEvent

    from ..core.events import TERMINAL_EVENTS

    yield encoder.encode(CustomEvent(name="handoffs_waiting", value=notice))
    sub = await svc.hub.subscribe(sid, after)
    spoke: str | None = None
    try:
        while True:
            try:
                event = await asyncio.wait_for(sub.queue.get(), svc.settings.heartbeat)
            except TimeoutError:
                yield ": waiting\n\n"
                continue
            if event is None:
                return
            for e in tr.event(event):
                yield encoder.encode(e)
            kind = event["type"]
            if kind == "message" and svc.team.get(event.get("agent", "")) is not None \
                    and svc.team[event["agent"]].is_human:
                spoke = event["text"]
            if kind in TERMINAL_EVENTS:
                if event.get("status") != "waiting_for_approval" \
                        or _client_waiting(await svc.store.load(sid)):  # the client's turn
                    waiting.result = {"status": event.get("status"),
                                      "agent": event.get("agent"),
                                      "output": event.get("output", ""),
                                      "error": {"code": event.get("code"),
                                                "message": event.get("message")}
                                      if kind == "run_failed" else None}
                    return
                continue
            if spoke is not None and sub.queue.empty():
                state = await svc.store.load(sid)
                waiting.result = {"status": "completed" if state is None
                                  or state.status == "idle" else state.status,
                                  "agent": state.active_agent if state else None,
                                  "output": spoke}
                return
    finally:
        svc.hub.unsubscribe(sub)


def _unseen(svc: Service, state: Any, shown: set[str] | None) -> bool:
    """Whether the session holds an answer that a client keeping the conversation does
    not show (an operator's reply made while no run of the client was open)."""
    from ..core.messages import AssistantMessage

    if shown is None:
        return False
    return any(isinstance(m, AssistantMessage) and m.text and m.text not in shown
               for m in state.messages)


def messages_snapshot(team: Any, state: Any) -> Any:
    """A `MESSAGES_SNAPSHOT` of the session's conversation: its user messages and the
    agents' answers (named after their agent), as a client shows them."""
    from ag_ui.core import AssistantMessage as AguiAssistant
    from ag_ui.core import MessagesSnapshotEvent
    from ag_ui.core import UserMessage as AguiUser

    from ..core.messages import AssistantMessage, UserMessage

    out: list[Any] = []
    for i, m in enumerate(state.messages):
        if isinstance(m, UserMessage):
            out.append(AguiUser(id=f"{state.id}-{i}", content=m.text))
        elif isinstance(m, AssistantMessage) and m.text:
            out.append(AguiAssistant(id=f"{state.id}-{i}", content=m.text, name=m.agent))
    return MessagesSnapshotEvent(messages=out)


async def _resumed(svc: Service, sid: str, resume: list[Any],
                   answers: list[tuple[str, str, bool]], key: IdempotencyKey | None
                   ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Apply the client's tool results, then a resume's decisions, in order (the last
    continues the turn); the events the continued turn stored, and its result. With
    `key` (the run's), each has a key of its own made of it and the call's id: a run
    sent again decides nothing twice and gets the continued turn's stored events."""
    runner = svc.runner
    store = svc.store
    first = await store.event_count(sid)
    result: Any = None
    async with svc.turns.exclusive(sid):
        for call_id, content, is_error in answers:
            each = None if key is None else IdempotencyKey(f"{key.key}:{call_id}")
            result = await runner.submit_tool_result(sid, call_id, content, is_error,
                                                     idempotency_key=each)
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
