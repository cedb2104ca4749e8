"""What `runner.stream` reads: a streamed turn's events, and how the turn wakes its reader.

The turn appends each event to `events` (a plain list, no Python call per event) and
wakes the reader only when it sleeps: once per stretch of events between two points
where the turn waits (a model call, a lock), never once per event.
"""

from __future__ import annotations

import asyncio

from ..core.events import Event


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
