"""Hearing of events that another process stored, so its turns reach our subscribers.

PostgreSQL: one connection per process `LISTEN`s on the channel the store notifies at
each commit that stores events (payload: the schema, the session's id and its event
count, nothing else), and on the one other processes send their live events on as they
emit them (`server.relay`); notifications of another schema of the same database
(another app) are ignored. SQLite: the sessions watched here are polled every
`poll_interval` seconds (one indexed read each), which bounds the latency. The memory
store lives in one process and needs neither.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any

from .pubsub import Hub
from .relay import Assembler, Sender, live_channel

log = logging.getLogger("handoffs.server.wakeup")


class Wakeup:
    """Runs the store's wake-up source for a hub: `start()` at start-up, `stop()` at exit."""

    def __init__(self, hub: Hub, poll_interval: float = 0.05) -> None:
        self.hub = hub
        self.poll_interval = poll_interval
        self._task: asyncio.Task[None] | None = None
        self._conn: Any = None
        self._schema: str | None = None
        """The schema this store's notifications name (`current_schema()` there)."""
        self.listening = asyncio.Event()
        """Set while PostgreSQL notifications are heard."""
        self.kind = _kind(hub.store)
        self.sender: Sender | None = None
        """PostgreSQL: sends this process's live events to the others."""
        self._assembler: Assembler | None = None

    async def start(self) -> None:
        if self.kind == "postgres":
            self.sender = Sender(self.hub.store)
            self.sender.start()
            self.hub.relay = self.sender.send
            self._task = asyncio.get_running_loop().create_task(self._listen_forever())
        elif self.kind == "sqlite":
            self._task = asyncio.get_running_loop().create_task(self._poll())

    async def stop(self) -> None:
        if self.sender is not None:
            self.hub.relay = None
            await self.sender.stop()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()

    # -- PostgreSQL ------------------------------------------------------------------------

    async def _listen_forever(self) -> None:
        from ..stores.postgres_sql import NOTIFY_CHANNEL

        while True:
            try:
                import asyncpg  # type: ignore[import-untyped, import-not-found, unused-ignore]

                store = self.hub.store
                self._conn = await asyncpg.connect(store.dsn)
                # Without ?schema=, the tables are where the user's search_path puts
                # them: the store's connections resolve it as this one does.
                self._schema = store.schema or await self._conn.fetchval(
                    "SELECT current_schema()")
                assert self.sender is not None
                self._assembler = Assembler(self._schema, self.sender.origin)
                await self._conn.add_listener(NOTIFY_CHANNEL, self._heard)
                await self._conn.add_listener(live_channel(self._schema), self._heard_live)
                self.listening.set()
                # Whatever was stored while we were not listening.
                for sid, _ in self.hub.watched():
                    self.hub.wake(sid)
                while not self._conn.is_closed():
                    await asyncio.sleep(1.0)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("listening for PostgreSQL notifications failed; retrying in 1 s",
                            exc_info=True)
            self.listening.clear()
            await asyncio.sleep(1.0)

    def _heard(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        if not payload.startswith("{"):  # `<count> <session id>` of an older version,
            count, _, session_id = payload.partition(" ")  # which names no schema
            if count.isdigit():
                self.hub.wake(session_id, int(count))
            return
        try:
            d = json.loads(payload)
            session_id, n = d["session_id"], int(d["events"])
        except (ValueError, TypeError, KeyError):
            return
        if d.get("schema") == self._schema and isinstance(session_id, str):
            self.hub.wake(session_id, n)

    def _heard_live(self, _conn: Any, _pid: int, _channel: str, payload: str) -> None:
        if self._assembler is None:
            return
        heard = self.hub.heard
        for sid, seq, kind, text in self._assembler.feed(payload):
            heard(sid, seq, kind, text)

    # -- SQLite ----------------------------------------------------------------------------

    async def _poll(self) -> None:
        store = self.hub.store
        while True:
            await asyncio.sleep(self.poll_interval)
            for sid, wanted in self.hub.watched():
                try:
                    if await store.event_count(sid) > wanted:
                        self.hub.wake(sid)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.warning("polling the events of %r failed", sid, exc_info=True)


def _kind(store: Any) -> str:
    name = type(store).__name__
    return {"PostgresStore": "postgres", "SQLiteStore": "sqlite"}.get(name, "memory")
