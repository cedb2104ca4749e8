"""What `runner.stream` reads: a streamed turn's events, and how the turn wakes its reader.

The turn appends each event to `events` (a plain list, no Python call per event) and
wakes the reader only when it sleeps: once per stretch of events between two points
where the turn waits (a model call, a lock), never once per event. The turn's first
stretch runs before the reader first looks (an eager task on Python 3.12+, the same pass of
the event loop on 3.11), so a turn whose model answers at once costs no extra pass.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Iterable
from functools import partial
from itertools import islice
from typing import TYPE_CHECKING, Any

from ...core.events import TERMINAL_EVENTS, Event
from ..state.result import RunResult
from .turn import run_turn

if TYPE_CHECKING:
    from ...core.idempotency import IdempotencyKey
    from ..state.host import Host


class Feed:
    """The events of one streamed turn, in order, and the reader's wake-up."""

    __slots__ = ("events", "waiter")

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.waiter: asyncio.Future[None] | None = None
        """Set while the reader sleeps; the next event (or the turn's end) resolves it."""

    def wake(self, _: object = None) -> None:
        """Resolve the reader's sleep, if it sleeps (also a task done-callback)."""
        w = self.waiter
        if w is not None:
            self.waiter = None
            if not w.done():
                w.set_result(None)

    def sleep(self, loop: asyncio.AbstractEventLoop) -> asyncio.Future[None]:
        """A future the reader awaits until the next event or the turn's end."""
        w = self.waiter = loop.create_future()
        return w


async def stream_turn(runner: Host, session_id: str, text: str, channel: str | None,
                      context: Any, timeout: float | None,
                      key: IdempotencyKey | None = None,
                      client: dict[str, Any] | None = None) -> AsyncIterator[Event]:
    """`runner.stream`: the turn runs in its own task and appends its events to a feed;
    the reader sleeps on one future only when it has read them all (an asyncio.Queue and
    a callback per event cost half a zero-latency turn; each pass of the event loop costs
    a system call). The task goes on to its end, and is stored, even if the reader goes
    away."""
    feed = Feed()
    events = feed.events
    loop = asyncio.get_running_loop()
    if sys.version_info >= (3, 12):
        # The turn runs at once, up to its first wait (all of it when the model answers
        # at once); the reader then finds its events without a pass of the event loop.
        task = asyncio.Task(run_turn(runner, session_id, text, channel, context, None,
                                     timeout, feed, key, client), loop=loop,
                            eager_start=True)
        if not task.done():
            runner.detached_turns.add(task)
            task.add_done_callback(partial(_ended, runner, feed))
    else:
        task = loop.create_task(_fed_turn(runner, feed, session_id, text, channel,
                                          context, timeout, key, client))
        runner.detached_turns.add(task)
        # Let the task take its first step in the same pass of the loop as this reader:
        # the reader wakes right after it, with the events up to the turn's first wait,
        # without a wake-up of its own.
        await asyncio.sleep(0)
    # A list iterator sees what the turn appends while the reader is away (at `yield`);
    # once it ends, every event so far was read. The terminal event is the turn's last:
    # its task is done when the reader finds nothing more.
    unread: Iterable[Event] = events
    while True:
        for event in unread:
            yield event
        if task.done():
            await task  # the turn was stored (or raised before its terminal event)
            return
        read = len(events)
        await feed.sleep(loop)
        unread = islice(events, read, None)


def _ended(runner: Host, feed: Feed, task: asyncio.Task[RunResult]) -> None:
    """A streamed turn's task that waited is done: forget it and wake the reader (also
    when the turn raised before its terminal event)."""
    runner.detached_turns.discard(task)
    feed.wake()


async def _fed_turn(runner: Host, feed: Feed, session_id: str, text: str,
                    channel: str | None, context: Any, timeout: float | None,
                    key: IdempotencyKey | None, client: dict[str, Any] | None
                    ) -> RunResult:
    """The streamed turn's task on Python 3.11 (which has no eager tasks): the turn, then
    `_ended` in the task itself, so the reader wakes in the same pass of the loop."""
    try:
        return await run_turn(runner, session_id, text, channel, context, None, timeout,
                              feed, key, client)
    finally:
        task = asyncio.current_task()
        if task is not None:
            _ended(runner, feed, task)


async def fed(events: AsyncIterator[Event], on_event: Callable[[Event], None]) -> RunResult:
    """`runner.run(..., on_event=)` over a stream of events (an executor that runs turns
    elsewhere streams them): each event to `on_event`, the terminal one's result."""
    result: RunResult | None = None
    async for event in events:
        on_event(event)
        if event.type in TERMINAL_EVENTS:
            result = event.result
    if result is None:
        raise RuntimeError("The turn's events ended without run_completed or run_failed.")
    return result
