"""Live events to the other server processes as they are emitted: PostgreSQL `NOTIFY`.

A turn's events reach this process's subscribers at once (`pubsub.Hub.publish`); the
other processes serving the same PostgreSQL schema get each one a moment later through
the database the store already uses, with no broker to run. Each event is sent on the
schema's channel (`live_channel`: `handoffs_live_` and a hash of the schema), carried
whole when it fits NOTIFY's payload limit (shorter than 8000 bytes) and otherwise cut
into parts that are all sent in one transaction, so a listener gets every part of it or
none. An event over `LIVE_MAX_BYTES` is not sent: the
listeners' subscribers read it from the stored log when the turn is stored (they hold
the later events until then, so they still see every event once and in order).

One notification is `HEADER\\nTEXT`: the header is a JSON object (ASCII) with `schema`
(the schema the tables are in: apps sharing one database under different `?schema=`
listen on different channels, and a hash that collides is told apart by it) and `origin`
(the sending process, which ignores its own). Events are packed: as many whole events
as fit in one payload travel together, the header listing each as `[session_id, seq,
type, length]` under `events` and TEXT their JSON texts one after the other (`length`:
each text's length in characters), so a burst of events costs the database and each
listener one notification instead of one per event. An event too large for a payload
of its own travels alone, cut into parts: its header names `session_id`, `seq`, `type`,
`part` and `parts`. A text is the event's JSON text exactly as the store writes it
(`stores.rows.dumps`, repaired as `stores.text.valid` repairs it), `seq` included.

Delivery is best effort and the stored log stays the record: an event lost here (the
sending connection dropped, a listener not yet listening) comes from the store when the
turn is stored, and one that comes twice is dropped by its number (`pubsub.Subscriber`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from .pubsub import text_of

log = logging.getLogger("handoffs.server.relay")

LIVE_CHANNEL = "handoffs_live"
"""The prefix of the channels live events are sent on, one per schema (`live_channel`);
commits wake listeners on `handoffs_events`."""

PAYLOAD_BYTES = 7999
"""A NOTIFY payload must be shorter than 8000 bytes (PostgreSQL's default build)."""

LIVE_MAX_BYTES = 1 << 20
"""Events whose JSON text is longer (in UTF-8 bytes) are not sent live: they come with
the stored log when the turn is stored."""

BATCH = 500
"""Events sent per statement at most."""

PENDING_LIMIT = 10_000
"""Events waiting to be sent; beyond it new events are not sent live (the database is
slower than the turns): subscribers elsewhere get them from the store."""

SEND = "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p"


def live_channel(schema: str) -> str:
    """The channel of one schema's live events: `handoffs_live_` and 16 hex digits of the
    schema name's SHA-256 (a channel name has at most 63 bytes, a schema name may have
    more), so a process never even receives another app's events."""
    return f"{LIVE_CHANNEL}_{hashlib.sha256(schema.encode('utf-8')).hexdigest()[:16]}"


def pack(schema: str, origin: str, items: Iterable[tuple[str, dict[str, Any]]]) \
        -> list[str]:
    """The notifications that carry `items` (session id, numbered event), in order: whole
    events packed together while they fit in one payload, an event that does not fit
    alone cut into parts of its own, one too large to send (`LIVE_MAX_BYTES`) left out."""
    prefix = json.dumps({"schema": schema, "origin": origin}, separators=(",", ":"))[:-1] \
        + ',"events":['
    out: list[str] = []
    heads: list[str] = []
    texts: list[str] = []
    empty = size = len(prefix) + 3  # `]}` and the newline
    for session_id, event in items:
        text = text_of(event)
        nbytes = len(text) if text.isascii() else len(text.encode("utf-8"))
        head = json.dumps([session_id, event["seq"], event.get("type"), len(text)],
                          separators=(",", ":"))
        more = len(head) + 1 + nbytes
        if heads and size + more > PAYLOAD_BYTES:
            out.append(prefix + ",".join(heads) + "]}\n" + "".join(texts))
            heads, texts, size = [], [], empty
        if size + more > PAYLOAD_BYTES:  # too large to travel with others
            out.extend(_parts(schema, origin, session_id, event, text))
            continue
        heads.append(head)
        texts.append(text)
        size += more
    if heads:
        out.append(prefix + ",".join(heads) + "]}\n" + "".join(texts))
    return out


def _parts(schema: str, origin: str, session_id: str, event: dict[str, Any],
           text: str) -> list[str]:
    """An event too large to share a payload, cut into parts sent together."""
    data = text.encode("utf-8")
    if len(data) > LIVE_MAX_BYTES:
        return []
    head = {"schema": schema, "origin": origin, "session_id": session_id,
            "seq": event["seq"], "type": event.get("type"), "part": 0, "parts": 1}
    room = PAYLOAD_BYTES - len(json.dumps(head, separators=(",", ":"))) - 1 - 20
    pieces = _split(data, room)  # 20: the part numbers' digits
    out = []
    for i, piece in enumerate(pieces):
        head["part"], head["parts"] = i, len(pieces)
        out.append(json.dumps(head, separators=(",", ":")) + "\n" + piece)
    return out


def _split(data: bytes, room: int) -> list[str]:
    """UTF-8 `data` as texts of at most `room` bytes each, cut between characters."""
    out, i, n = [], 0, len(data)
    while i < n:
        j = min(i + room, n)
        while j < n and (data[j] & 0xC0) == 0x80:  # inside a character: back to its start
            j -= 1
        out.append(data[i:j].decode("utf-8"))
        i = j
    return out


class Assembler:
    """Reads the notifications of one schema: each event's text once all its parts are in."""

    PARTIAL_LIMIT = 64
    """Events whose parts are still coming (a transaction's parts arrive together, so
    more than a few means parts were lost: the oldest are dropped)."""

    def __init__(self, schema: str, origin: str) -> None:
        self.schema = schema
        self.origin = origin
        self._own = json.dumps({"origin": origin}, separators=(",", ":"))[1:-1]
        """`"origin":"<this process>"` as a header says it: a header holds it only if it
        is this process's (JSON escapes the quotes of a string holding it), so this
        process's own events, which it hears back, are dropped unparsed."""
        self._parts: dict[tuple[str, str, int], list[str | None]] = {}

    def feed(self, payload: str) -> list[tuple[str, int, str | None, str]]:
        """`(session_id, seq, type, text)` of each whole event a notification completes,
        of another process of this schema; none for a part that leaves its event
        incomplete, for this process's own events, another schema's, or a payload that
        is not one of ours."""
        head_text, newline, data = payload.partition("\n")
        if not newline or self._own in head_text:
            return []
        try:
            head = json.loads(head_text)
            if head["schema"] != self.schema or head["origin"] == self.origin:
                return []
            listed = head.get("events")
            if listed is not None:
                return _unpacked(listed, data)
            origin, sid = head["origin"], head["session_id"]
            seq, part, parts = int(head["seq"]), int(head["part"]), int(head["parts"])
        except (ValueError, TypeError, KeyError):
            return []
        if not isinstance(sid, str):
            return []
        kind = head.get("type")
        if parts == 1:
            return [(sid, seq, kind, data)]
        if not 0 <= part < parts:
            return []
        key = (origin, sid, seq)
        got = self._parts.get(key)
        if got is None or len(got) != parts:
            got = self._parts[key] = [None] * parts
            while len(self._parts) > self.PARTIAL_LIMIT:
                del self._parts[next(iter(self._parts))]
        got[part] = data
        if any(p is None for p in got):
            return []
        del self._parts[key]
        return [(sid, seq, kind, "".join(p for p in got if p is not None))]


def _unpacked(listed: Any, data: str) -> list[tuple[str, int, str | None, str]]:
    """The events of a packed notification: its header's `[session_id, seq, type,
    length]` entries, their texts cut from `data` in order (a header that does not
    account for `data` exactly yields nothing)."""
    out: list[tuple[str, int, str | None, str]] = []
    at = 0
    for sid, seq, kind, length in listed:
        if not isinstance(sid, str) or not isinstance(seq, int) or length < 0:
            raise ValueError("not a packed event")
        out.append((sid, seq, kind, data[at:at + length]))
        at += length
    if at != len(data):
        raise ValueError("a packed notification's texts do not match its header")
    return out


class Sender:
    """Sends this process's live events on its own connection, in the order they came,
    several per statement when they come faster than one round trip. Events are encoded
    here, in the sending task, not in the turn that emits them."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.origin = secrets.token_hex(8)
        """This process, as its notifications name it."""
        self.schema: str | None = None
        """The schema named, once connected (`current_schema()` without `?schema=`)."""
        self._pending: deque[tuple[str, dict[str, Any]]] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._conn: Any = None
        self._warned = 0.0

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()

    def send(self, session_id: str, event: dict[str, Any]) -> None:
        """Queue a live event for the other processes (dropped while not connected)."""
        if self._conn is None or self.schema is None:
            return
        if len(self._pending) >= PENDING_LIMIT:
            self._warn("the live events of %r are not sent to other processes: %d are "
                       "waiting (they get them when the turn is stored)", session_id,
                       len(self._pending))
            return
        self._pending.append((session_id, event))
        self._wake.set()

    def _warn(self, message: str, *args: Any, **kw: Any) -> None:
        now = time.monotonic()
        if now - self._warned >= 10:  # at most one such line per 10 s
            self._warned = now
            log.warning(message, *args, **kw)

    def _batch(self, schema: str) -> list[str]:
        """The notifications of the next `BATCH` events waiting, at most."""
        pending = self._pending
        items = [pending.popleft() for _ in range(min(BATCH, len(pending)))]
        return pack(schema, self.origin, items)

    async def _run(self) -> None:
        import asyncpg  # type: ignore[import-untyped, import-not-found, unused-ignore]

        while True:
            try:
                # A notification needs no durability: its commit need not wait
                # for the WAL to reach the disk.
                conn = self._conn = await asyncpg.connect(
                    self.store.dsn, server_settings={"synchronous_commit": "off"})
                schema = self.schema = self.store.schema or await conn.fetchval(
                    "SELECT current_schema()")
                channel = live_channel(schema)
                while not conn.is_closed():
                    await self._wake.wait()
                    self._wake.clear()
                    while self._pending:
                        batch = self._batch(schema)
                        if batch:
                            await conn.execute(SEND, channel, batch)
            except asyncio.CancelledError:
                raise
            except Exception:
                self._warn("sending live events to other processes failed; retrying in "
                           "1 s (they get them when the turn is stored)", exc_info=True)
            conn, self._conn = self._conn, None
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()
            self._pending.clear()
            await asyncio.sleep(1.0)
