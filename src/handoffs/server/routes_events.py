"""Following a session: its events over SSE (replay, then live) and over a WebSocket."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request, WebSocket, WebSocketDisconnect
from starlette.responses import StreamingResponse

from . import sse
from .customer import EventView
from .errors import ApiError, body, from_exception, responses
from .pubsub import Subscriber, text_of
from .routes_sessions import OPENS, service
from .service import Service

router = APIRouter(prefix="/v1", tags=["events"])
log = logging.getLogger("handoffs.server.events")


def _after(last_event_id: str | None, after: str | None) -> int:
    """The sequence number the client has already seen (-1: none)."""
    raw = last_event_id if last_event_id not in (None, "") else after
    if raw in (None, ""):
        return -1
    try:
        n = int(str(raw))
    except ValueError as exc:
        raise ApiError("invalid_argument", "Last-Event-ID and 'after' are event sequence "
                       "numbers (integers).") from exc
    return max(n, -1)


@router.get("/sessions/{session_id}/events",
            responses={200: {"content": {"text/event-stream": {}},
                             "description": "The session's events as SSE"},
                       **responses(*OPENS, "invalid_argument")})
async def events(request: Request, session_id: str, after: str | None = None) -> \
        StreamingResponse:
    """The session's stored events after `Last-Event-ID` (or `?after=`), then its live
    events, each once, in order, with its sequence number as the SSE id; a comment
    every `heartbeat` seconds keeps proxies from closing an idle stream."""
    svc = service(request)
    await svc.session(request, session_id)
    seen = _after(request.headers.get("last-event-id"), after)
    sub = await svc.hub.subscribe(session_id, seen)
    return sse.response(_frames(svc, sub, request))


async def _frames(svc: Service, sub: Subscriber, request: Request) -> AsyncIterator[str]:
    try:
        async for chunk in sse.with_heartbeat(sub.queue, svc.settings.heartbeat,
                                              svc.event_view(request)):
            yield chunk
    finally:
        svc.hub.unsubscribe(sub)


@router.websocket("/sessions/{session_id}/ws")
async def websocket(ws: WebSocket, session_id: str) -> None:
    """The session's events as JSON text frames (after `?after=`), and the client's
    `{"type": "message", "text": ...}` and `{"type": "select_agent", "agent": ...}`.
    The token comes as `?access_token=` (or an Authorization header)."""
    svc: Service = ws.app.state.service
    try:
        await svc.session(ws, session_id)
        seen = _after(None, ws.query_params.get("after"))
    except ApiError as exc:
        await ws.accept()
        await ws.send_text(json.dumps({"type": "error", **body(exc.code, exc.message)}))
        await ws.close(code=4401 if exc.status == 401 else 4403 if exc.status == 403
                       else 4404 if exc.status == 404 else 4400)
        return
    await ws.accept()
    sub = await svc.hub.subscribe(session_id, seen)
    sender = asyncio.get_running_loop().create_task(
        _send(ws, sub, svc.settings.heartbeat, svc.event_view(ws)))
    try:
        while True:
            raw = await ws.receive_text()
            reply = await _command(svc, ws, session_id, raw)
            if reply is not None:
                await ws.send_text(text_of(reply))
    except WebSocketDisconnect:
        pass
    finally:
        svc.hub.unsubscribe(sub)
        sender.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await sender


async def _send(ws: WebSocket, sub: Subscriber, every: float,
                view: EventView | None) -> None:
    """The subscriber's events to the socket, a ping when idle. If sending fails the
    socket is closed (the client reconnects with ?after= and loses nothing), never left
    open and silent."""
    try:
        while True:
            event = await sse.next_event(sub.queue, every)
            if event is sse.IDLE:
                await ws.send_text('{"type":"ping"}')
                continue
            if event is None:
                await ws.close(code=1013)  # fell behind: reconnect with ?after=
                return
            shown = event if view is None else view(event)
            if shown is None:  # the inspector's events: the operator's only
                continue
            await ws.send_text(text_of(shown))
    except (asyncio.CancelledError, WebSocketDisconnect):
        raise
    except Exception:
        log.warning("sending the events of %r on a WebSocket failed; closing it",
                    sub.session_id, exc_info=True)
        with contextlib.suppress(Exception):
            await ws.close(code=1011)


async def _command(svc: Service, ws: WebSocket, session_id: str,
                   raw: str) -> dict[str, Any] | None:
    """Act on one client frame; an answer only for a refusal or a bad frame."""
    try:
        frame = json.loads(raw)
        if not isinstance(frame, dict):
            raise ApiError("invalid_request", "A frame is a JSON object with a 'type'.")
        kind = frame.get("type")
        if kind == "message":
            text = frame.get("text")
            if not isinstance(text, str):
                raise ApiError("invalid_request", "A message frame needs 'text' (a string).")
            svc.check_text(text)
            svc.check_rate(ws)
            svc.turns.start(session_id, text, frame.get("channel"), frame.get("context"))
            return None
        if kind == "select_agent":
            agent = frame.get("agent")
            if not isinstance(agent, str):
                raise ApiError("invalid_request", "A select_agent frame needs 'agent'.")
            record = await svc.pick(session_id, agent)
            return {"type": "agent_selected", "record": record.to_dict()}
        raise ApiError("invalid_request", "Frame types: 'message', 'select_agent'.")
    except json.JSONDecodeError:
        return {"type": "error", **body("invalid_json", "The frame is not valid JSON.")}
    except Exception as exc:
        _, code, message = from_exception(exc)
        return {"type": "error", **body(code, message)}
