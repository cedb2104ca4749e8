"""Fan-out of a session's events to this process's subscribers, with no gap and no
duplicate.

The store's event log is the record; this is only delivery. Every event carries the
sequence number it is (or will be) stored under. A subscriber keeps the last number it
delivered and accepts only the next one: an event from the future waits in `ahead` until
the missing ones are read from the store, an event it already has is dropped. Numbers
only grow, but they may skip: a turn that died showed numbers it never stored, and the
next turn starts past them (`runtime.recovery`). So an event read from the store is
delivered even when it skips numbers: every number below a stored one is stored or never
will be. Three sources feed it, in any order:

- live events of the turns this process runs (`publish`), numbered by the runtime, and
  of the turns other processes run (`heard`: PostgreSQL, `server.relay`);
- the in-flight buffers of those turns, for a subscriber that joins mid-turn;
- the store, read after a wake-up (`wake`): this process's own commits, a PostgreSQL
  `NOTIFY` from another process, or a poll of SQLite.

Where a live copy and the stored copy of an event meet, the first delivered wins and
the other is dropped by its number.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..stores.rows import dumps
from ..stores.text import valid

log = logging.getLogger("handoffs.server.pubsub")

QUEUE_LIMIT = 10_000
"""Events a subscriber may have undelivered before it is dropped (it reconnects with
`Last-Event-ID` and loses nothing)."""

PAGE = 500
"""Events read from the store per query while catching a subscriber up."""

HEARD_LIMIT = 32 * 1024 * 1024
"""Characters of other processes' in-flight events kept for subscribers that join
mid-turn; beyond it the least recently active sessions' are forgotten (their
subscribers then get those events when the turn is stored)."""

RELAY_GRACE = 0.05
"""Seconds a commit heard from another process, of a turn whose events were heard live,
waits before what its subscribers miss is read from the store: the read (a query per
turn and subscribed session) is skipped when the live copies came meanwhile, as they do
unless one was lost; one that was lost comes from the store this much later."""

TERMINAL = ("run_completed", "run_failed")


class Heard(dict[str, Any]):
    """An event heard from another process, as it is delivered: its `seq` and `type`
    (all a subscriber and a stream look at), and `text`, the JSON text it came as (the
    text the stores write for it, `seq` included), sent on as it came, not decoded and
    encoded again (`sse.frame`). `whole()` decodes the rest of it. Read it, never change
    it: the text would no longer say the same."""

    __slots__ = ("text",)

    def __init__(self, seq: int, kind: str, text: str) -> None:
        super().__init__(seq=seq, type=kind)
        self.text = text

    def whole(self) -> dict[str, Any]:
        """The event, every field of it."""
        event: dict[str, Any] = json.loads(self.text)
        return event


def text_of(event: dict[str, Any]) -> str:
    """An event's JSON text as the stores write it (`stores.rows.dumps`, text that is not
    valid Unicode repaired): a `Heard` event's own text, any other encoded."""
    return event.text if isinstance(event, Heard) else valid(dumps(event))


def _decoded(seq: int, kind: str | None, text: str) -> dict[str, Any] | None:
    """A heard event's JSON text as the event delivered (None if it is not one). A text
    that ends with its number, as the stores write one, is not decoded (`Heard`)."""
    if isinstance(kind, str) and text.endswith(f',"seq":{seq}}}'):
        return Heard(seq, kind, text)
    try:
        event = json.loads(text)
    except ValueError:
        log.warning("a live event %d heard from another process is not JSON; skipped", seq)
        return None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        return None
    event["seq"] = seq  # a text without its number (or another): encoded again when sent
    return event


class Subscriber:
    """One client following one session's events."""

    __slots__ = ("ahead", "closed", "last", "queue", "session_id")

    def __init__(self, session_id: str, last: int) -> None:
        self.session_id = session_id
        self.last = last
        """The sequence number of the last event delivered (-1: none)."""
        self.queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self.ahead: dict[int, dict[str, Any]] = {}
        self.closed = False

    def offer(self, event: dict[str, Any], stored: bool = False) -> bool:
        """Deliver `event` if it is the next one (and any it unblocks); False if it
        leaves a gap that the store must fill. A `stored` event (read from the store) is
        the next one whatever its number."""
        if self.closed:
            return True
        seq = event["seq"]
        if seq <= self.last:
            return True
        ahead = self.ahead
        if seq > self.last + 1:
            if not stored:
                ahead[seq] = event
                return False
            for n in [n for n in ahead if n < seq]:  # numbers the store skipped
                del ahead[n]
        self._put(event)
        while self.last + 1 in ahead:
            self._put(ahead.pop(self.last + 1))
        return True

    def _put(self, event: dict[str, Any]) -> None:
        self.last = event["seq"]
        if self.queue.qsize() >= QUEUE_LIMIT:
            log.warning("a subscriber of %r fell %d events behind; dropping it",
                        self.session_id, QUEUE_LIMIT)
            self.close()
            return
        self.queue.put_nowait(event)

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put_nowait(None)


class Hub:
    """This process's subscribers by session, and the turns it is running."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.subscribers: dict[str, set[Subscriber]] = {}
        self.inflight: dict[str, list[dict[str, Any]]] = {}
        """The events of the turn this process runs on a session, until it is stored."""
        self.relay: Callable[[str, dict[str, Any]], None] | None = None
        """Sends this process's live events to the other processes, if set."""
        self.remote: OrderedDict[str, list[tuple[int, str | None, str]]] = OrderedDict()
        """The heard events (number, type, JSON text) of turns other processes run, by session,
        until they are stored; the least recently active session first."""
        self._remote_chars = 0
        self._tasks: set[asyncio.Task[None]] = set()
        self._filling: dict[str, asyncio.Event] = {}

    # -- subscribing -----------------------------------------------------------------------

    async def subscribe(self, session_id: str, after: int) -> Subscriber:
        """A subscriber that gets every event after `after`: stored ones first, then the
        running turn's, then live ones, each once and in order."""
        sub = Subscriber(session_id, after)
        self.subscribers.setdefault(session_id, set()).add(sub)
        try:
            await self._catch_up(session_id, [sub])
        except BaseException:
            self.unsubscribe(sub)
            raise
        for event in list(self.inflight.get(session_id, ())):
            sub.offer(event)
        for seq, kind, text in list(self.remote.get(session_id, ())):
            heard = _decoded(seq, kind, text)
            if heard is not None:
                sub.offer(heard)
        return sub

    def unsubscribe(self, sub: Subscriber) -> None:
        sub.close()
        subs = self.subscribers.get(sub.session_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self.subscribers[sub.session_id]

    # -- delivering ------------------------------------------------------------------------

    def publish(self, session_id: str, event: dict[str, Any]) -> None:
        """A live event of a turn this process runs (numbered, not yet stored)."""
        self.inflight.setdefault(session_id, []).append(event)
        gap = False
        for sub in self.subscribers.get(session_id, ()):
            if not sub.offer(event):
                gap = True
        if gap:
            self.wake(session_id)
        if self.relay is not None:
            self.relay(session_id, event)

    def heard(self, session_id: str, seq: int, kind: str | None, text: str) -> None:
        """A live event of a turn another process runs (its JSON text, with `seq`).
        A subscriber it leaves a gap for holds it until the store fills the gap (the
        turn's commit wakes this process)."""
        kept = self.remote.get(session_id)
        if kind in TERMINAL:  # sent after its commit: the turn is stored
            if kept is not None:
                self._forget(session_id, seq + 1)
        else:
            if kept is None:
                kept = self.remote[session_id] = []
            else:
                self.remote.move_to_end(session_id)
            kept.append((seq, kind, text))
            self._remote_chars += len(text)
            while self._remote_chars > HEARD_LIMIT and self.remote:
                _, dropped = self.remote.popitem(last=False)
                self._remote_chars -= sum(len(t) for _, _, t in dropped)
        subs = self.subscribers.get(session_id)
        event = _decoded(seq, kind, text) if subs else None
        if subs and event is not None:
            for sub in subs:
                sub.offer(event)

    def _forget(self, session_id: str, count: int) -> None:
        """The session's heard events numbered below `count` are stored: drop them."""
        kept = self.remote.get(session_id)
        if kept is None:
            return
        left = [e for e in kept if e[0] >= count]
        self._remote_chars -= sum(len(e[2]) for e in kept if e[0] < count)
        if left:
            self.remote[session_id] = left
        else:
            del self.remote[session_id]

    def turn_stored(self, session_id: str) -> None:
        """The turn this process ran on the session is committed: its events are in the
        store now, so the in-flight copy goes, and subscribers are checked against it."""
        self.inflight.pop(session_id, None)
        self.wake(session_id)

    def wake(self, session_id: str, count: int | None = None, grace: bool = True) -> None:
        """New events may be stored for the session (`count`: how many it has, if
        known): catch its subscribers up from the store, in the background. A commit
        of a turn whose events were heard live (`count` given) first waits
        `RELAY_GRACE` for the events still on their way (the turn's last is sent just
        after its commit), and reads the store only if they did not come."""
        relayed = session_id in self.remote
        if count is not None and relayed:
            self._forget(session_id, count)
        subs = self.subscribers.get(session_id)
        if not subs:
            return
        if count is not None and all(s.last >= count - 1 for s in subs):
            return
        if count is not None and grace and relayed:
            asyncio.get_running_loop().call_later(RELAY_GRACE, self.wake, session_id,
                                                  count, False)
            return
        pending = self._filling.get(session_id)
        if pending is not None:
            pending.set()  # a catch-up is running: it reads once more when done
            return
        again = self._filling[session_id] = asyncio.Event()
        task = asyncio.get_running_loop().create_task(self._fill(session_id, again))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _fill(self, session_id: str, again: asyncio.Event) -> None:
        try:
            while True:
                again.clear()
                subs = list(self.subscribers.get(session_id, ()))
                if subs:
                    await self._catch_up(session_id, subs)
                if not again.is_set():
                    break
        except Exception:
            log.warning("reading the events of %r failed; its subscribers are closed (they "
                        "reconnect with Last-Event-ID)", session_id, exc_info=True)
            for sub in list(self.subscribers.get(session_id, ())):
                self.unsubscribe(sub)
        finally:
            self._filling.pop(session_id, None)

    async def _catch_up(self, session_id: str, subs: list[Subscriber]) -> None:
        after = min(s.last for s in subs)
        while True:
            found = await self.store.events_after(session_id, after, PAGE)
            for event in found:
                for sub in subs:
                    sub.offer(event, stored=True)
            if len(found) < PAGE:
                return
            after = found[-1]["seq"]

    def watched(self) -> list[tuple[str, int]]:
        """Each session with subscribers here, and the lowest next number they wait for."""
        return [(sid, min(s.last for s in subs) + 1)
                for sid, subs in self.subscribers.items() if subs]

    async def close(self) -> None:
        for subs in list(self.subscribers.values()):
            for sub in list(subs):
                self.unsubscribe(sub)
        for task in list(self._tasks):
            task.cancel()
