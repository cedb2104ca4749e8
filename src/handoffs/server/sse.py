"""Server-sent events: one frame per event, its sequence number as the SSE id."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Collection
from typing import Any

from starlette.responses import StreamingResponse

from ..stores.text import valid

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def frame(event: dict[str, Any]) -> str:
    """`id: SEQ`, `event: TYPE`, `data: JSON` (one line: JSON escapes newlines). Text
    that is not valid Unicode (a lone surrogate) is repaired as the stores repair it, so
    a live event is sent exactly as it is stored."""
    data = valid(json.dumps(event, ensure_ascii=False)).replace("\u2028", "\\u2028") \
        .replace("\u2029", "\\u2029")
    seq = event.get("seq")
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}event: {event['type']}\ndata: {data}\n\n"


def response(frames: AsyncIterator[str], status: int = 200) -> StreamingResponse:
    return StreamingResponse(frames, status_code=status, media_type="text/event-stream",
                             headers=HEADERS)


async def with_heartbeat(queue: asyncio.Queue[dict[str, Any] | None], every: float,
                         until_terminal: bool = False,
                         hidden: Collection[str] = ()) -> AsyncIterator[str]:
    """Frames from a subscriber's queue, with a comment line whenever it is idle for
    `every` seconds (so proxies keep the stream open); ends when the queue does. Events
    of a `hidden` type are left out (the client sees their numbers skipped)."""
    yield "retry: 1000\n\n"
    while True:
        try:
            event = await asyncio.wait_for(queue.get(), every)
        except TimeoutError:
            yield ": keep-alive\n\n"
            continue
        if event is None:
            return
        if hidden and event["type"] in hidden:
            continue
        yield frame(event)
        if until_terminal and event["type"] in ("run_completed", "run_failed"):
            return
