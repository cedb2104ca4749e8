"""Server-sent events: one frame per event, its sequence number as the SSE id."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.responses import StreamingResponse

from .pubsub import text_of

HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def frame(event: dict[str, Any]) -> str:
    """`id: SEQ`, `event: TYPE`, `data: JSON` (one line: JSON escapes newlines). The
    JSON is the event's text as the stores write it (`stores.rows.dumps`: compact, text
    that is not valid Unicode repaired), so a live event is sent exactly as it is stored;
    an event heard from another process (`pubsub.Heard`) is sent as the text it came
    as, which is that same text, without encoding it again."""
    data = text_of(event)
    if "\u2028" in data or "\u2029" in data:
        data = data.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    seq = event.get("seq")
    head = f"id: {seq}\n" if seq is not None else ""
    return f"{head}event: {event['type']}\ndata: {data}\n\n"


CHUNK = 100
"""Events written together at most, when several are waiting (a catch-up of thousands
still goes out in pieces of a bounded size)."""

IDLE: Any = object()
"""What `next_event` answers when no event came in time."""


async def next_event(queue: asyncio.Queue[dict[str, Any] | None], every: float) -> Any:
    """The queue's next item, or `IDLE` if none comes within `every` seconds. One timer
    handle when the queue must be waited for, none when it has an item already
    (`asyncio.wait_for` made a task per event: a tenth of the CPU an event costs a
    process that relays it to its subscribers)."""
    if not queue.empty():
        return queue.get_nowait()
    try:
        async with asyncio.timeout(every):
            return await queue.get()
    except TimeoutError:
        return IDLE


def response(frames: AsyncIterator[str], status: int = 200) -> StreamingResponse:
    return StreamingResponse(frames, status_code=status, media_type="text/event-stream",
                             headers=HEADERS)


async def with_heartbeat(
        queue: asyncio.Queue[dict[str, Any] | None], every: float,
        view: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
) -> AsyncIterator[str]:
    """Frames from a subscriber's queue, with a comment line whenever it is idle for
    `every` seconds (so proxies keep the stream open); ends when the queue does. Each
    event goes out as `view` makes it (`customer.delivered`); one it makes None is left
    out (the client sees its number skipped). The events
    already waiting go out as one chunk (a turn's start or end, a burst heard from
    another process), up to `CHUNK` of them: one write, not one per event."""
    yield "retry: 1000\n\n"
    while True:
        event = await next_event(queue, every)
        if event is IDLE:
            yield ": keep-alive\n\n"
            continue
        frames: list[str] = []
        while True:
            if event is None:
                if frames:
                    yield "".join(frames)
                return
            shown = event if view is None else view(event)
            if shown is not None:
                frames.append(frame(shown))
            if queue.empty() or len(frames) >= CHUNK:
                break
            event = queue.get_nowait()
        if frames:
            yield "".join(frames)
