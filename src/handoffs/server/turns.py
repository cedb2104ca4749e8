"""Running a turn for the API: in a task of its own, its events numbered and fanned out.

The turn does not belong to the request that started it: a client that disconnects
does not stop it, and every subscriber of the session sees its events live. Each event
carries the sequence number the runtime gave it under the session's lock
(`Event.seq`): the number it is stored under, so replay and live delivery line up
exactly, across processes too, and a number a client saw is never given to another
event (a turn after one that died numbers past it: `runtime.recovery`).

This process runs its turns on one session one at a time, in arrival order: a request
takes its place in the session's queue (`queue`) before anything it awaits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from ..core.events import Event, StoredEvent
from ..core.idempotency import IdempotencyKey
from ..log import fields
from ..runtime.runner import Runner
from ..runtime.state import TURN_EVENTS
from ..runtime.state.result import RunResult
from .pubsub import Hub

log = logging.getLogger("handoffs.server.turns")


class TurnRun:
    """One turn the server runs: its events as they come, and its result at the end."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.events: list[dict[str, Any]] = []
        self.changed = asyncio.Event()
        self.done = False
        self.result: RunResult | None = None
        self.error: BaseException | None = None
        self.task: asyncio.Task[None] | None = None
        self.args: asyncio.Future[tuple[str, str | None, Any, IdempotencyKey | None, Any]
                                  | None] = \
            asyncio.get_running_loop().create_future()
        """The message, once the request that queued the turn has checked it (None:
        the request gave its place up)."""

    def go(self, text: str, channel: str | None = None, context: Any = None,
           key: IdempotencyKey | None = None, client_tools: Any = None) -> None:
        """Run the turn on this message when its place in the queue comes (`key`: the
        request's idempotency key, `client_tools`: the client's tools, see
        `runner.run`)."""
        self.args.set_result((text, channel, context, key, client_tools))

    def drop(self) -> None:
        """Give the place in the queue up (the request was refused)."""
        if not self.args.done():
            self.args.set_result(None)

    async def follow(self) -> AsyncIterator[dict[str, Any]]:
        """Every event of the turn, from its first, until it ends."""
        i = 0
        while True:
            while i < len(self.events):
                yield self.events[i]
                i += 1
            if self.done:
                return
            self.changed.clear()
            if i < len(self.events) or self.done:
                continue
            await self.changed.wait()

    async def started(self) -> dict[str, Any] | None:
        """The turn's first event, once it has one (None if it failed before)."""
        while not self.events and not self.done:
            self.changed.clear()
            await self.changed.wait()
        return self.events[0] if self.events else None

    async def finished(self) -> RunResult:
        """The turn's result; re-raises what the turn raised before it could start."""
        if self.task is not None:
            await asyncio.shield(self.task)
        if self.error is not None:
            raise self.error
        assert self.result is not None
        return self.result


class Turns:
    """Starts turns, numbers their events, and keeps them running until they end."""

    def __init__(self, runner: Runner, hub: Hub) -> None:
        self.runner = runner
        self.hub = hub
        self.running: dict[str, int] = {}
        """How many turns are running or queued here, by session id."""
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self, session_id: str, text: str, channel: str | None = None,
              context: Any = None, key: IdempotencyKey | None = None) -> TurnRun:
        """Queue a turn on this message (behind the session's earlier turns here)."""
        run = self.queue(session_id)
        run.go(text, channel, context, key)
        return run

    def queue(self, session_id: str) -> TurnRun:
        """A place in the session's queue, taken now, in arrival order: call it before
        the request awaits anything, then `go` (or `drop`) once it checked the request.
        Turns run one at a time per session, in the order of their places."""
        run = TurnRun(session_id)
        self.running[session_id] = self.running.get(session_id, 0) + 1
        task = asyncio.get_running_loop().create_task(self._run(run, session_id))
        run.task = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return run

    @contextlib.asynccontextmanager
    async def exclusive(self, session_id: str) -> AsyncIterator[None]:
        """Held around any other operation that stores events on the session (a human
        operator's reply), so no turn of this process numbers its events meanwhile."""
        self.running[session_id] = self.running.get(session_id, 0) + 1
        lock = self._locks.setdefault(session_id, asyncio.Lock())
        try:
            async with lock:
                yield
        finally:
            self._done(session_id)

    def _done(self, sid: str) -> None:
        n = self.running.get(sid, 1) - 1
        if n:
            self.running[sid] = n
        else:  # nobody holds or waits for the session's lock here any more
            self.running.pop(sid, None)
            self._locks.pop(sid, None)

    def busy(self, session_id: str) -> bool:
        return self.running.get(session_id, 0) > 0

    async def _run(self, run: TurnRun, sid: str) -> None:
        lock = self._locks.setdefault(sid, asyncio.Lock())
        try:
            async with lock:
                args = await run.args
                if args is None:  # the request gave its place up
                    return
                await self._stream(run, sid, *args)
        except BaseException as exc:  # handed to whoever awaits the turn
            run.error = exc
            if not isinstance(exc, Exception):
                raise
        finally:
            self._done(sid)
            if run.events:
                self.hub.turn_stored(sid)
            run.done = True
            run.changed.set()
        if run.result is None and run.error is None:
            run.error = RuntimeError("the turn ended without a result")

    async def _stream(self, run: TurnRun, sid: str, text: str, channel: str | None,
                      context: Any, key: IdempotencyKey | None, client_tools: Any) -> None:
        first = -1
        hub, events, changed = self.hub, run.events, run.changed

        def on_event(event: Event) -> None:  # inside the turn: it must not raise
            nonlocal first
            d = event.to_dict()
            if first < 0:
                first = event.seq
            if isinstance(event, StoredEvent):  # a retry's answer: stored, not news
                d["seq"] = event.seq
            elif event.seq - first < TURN_EVENTS:
                d["seq"] = event.seq
                try:
                    hub.publish(sid, d)
                except Exception:  # the turn goes on; subscribers catch up from the store
                    log.exception("session %s: event %d could not be published live",
                                  sid, event.seq, extra=fields(sid, event.turn, None))
            # else: past the numbers a turn may show live (a runaway turn): sent here
            # without one; subscribers read it from the store once the turn is stored.
            events.append(d)
            if event.is_terminal:
                run.result = event.result
            changed.set()

        # `run` with a callback, not `stream`: the turn runs in this task, without a
        # task and a generator of its own (this task already outlives the request).
        await self.runner.run(sid, text, channel, context, on_event=on_event,
                              idempotency_key=key, client_tools=client_tools)

    async def close(self) -> None:
        """Let running turns finish (they are persisted either way)."""
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=10)
