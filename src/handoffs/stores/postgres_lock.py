"""PostgreSQL's session locks: advisory locks on one watched connection, with a lease.

A turn holds its session for seconds (model calls), so a transaction cannot be the lock.
A session-level advisory lock (`pg_try_advisory_lock` on a 63-bit hash of the schema and
session id) is, all of a store's held on one dedicated connection: a thousand sessions
mid-turn cost one connection, and the server drops the locks the moment a process dies.

The locks live and die with that connection, which can go without this process being
told (an administrator's `pg_terminate_backend`, `idle_session_timeout`, a failover, a
pooler). Two things keep a lost lock from letting two processes work on one session:

- The lease (fencing). Taking a lock bumps the session's `lease` in the same statement,
  and each commit of the holder checks, in its own statement, that the lease is still
  the one it took. Once another process has taken the session, nothing the first one
  sends is written, not even a commit already on its way (`session_lock_lost`).
- The watch. The connection's end is heard at once (a termination listener), and while
  locks are held a `SELECT 1` every `CHECK_EVERY` seconds finds a connection that stopped
  answering. A lost connection cancels every turn holding a lock on it; each ends with
  `session_lock_lost` like a crashed turn: nothing more is stored, the session reads
  `interrupted`, and the next message answers it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from ..errors import HandoffsError, StoreError
from ..log import fields
from . import postgres_sql as sql
from . import rows
from .locks import finish, lock_key, poll

log = logging.getLogger("handoffs.stores.postgres")

CHECK_EVERY = 5.0
"""Seconds between two checks that the lock connection still answers, while it holds
locks (a connection that ended is noticed at once)."""

LOST = "handoffs: the session's lock was lost"
"""The message of the cancel a turn gets when its lock's connection is lost."""

TAKE = """
WITH got AS (SELECT pg_try_advisory_lock($1) AS ok),
bump AS (UPDATE sessions SET lease = lease + 1 FROM got WHERE got.ok AND id = $2
         RETURNING lease)
SELECT got.ok, (SELECT lease FROM bump) FROM got
"""
"""Take the session's lock if it is free and, in the same statement, a new lease (None
while the session has no row: its first commit inserts it with lease 0)."""


def lock_settings(settings: dict[str, str]) -> dict[str, str]:
    """The server settings of the lock connection, from the store's: its commits (lease
    bumps) need not wait for the disk, and it names itself apart from the pool's."""
    found = {**settings, "synchronous_commit": "off"}
    if "application_name" in found:
        found["application_name"] = f"handoffs-lock {os.getpid()}"
    return found


class _Hold:
    """One session this store holds: the task holding it, its lock key and lease."""

    __slots__ = ("delivered", "key", "lease", "lost", "task")

    def __init__(self, task: asyncio.Task[Any] | None, key: int, lease: int | None) -> None:
        self.task = task
        self.key = key
        self.lease = lease
        self.lost = False
        self.delivered = False
        """Whether the cancel sent when the lock was lost reached the holder."""


class SessionLocks:
    """The advisory locks of one `PostgresStore`, on its lock connection. The store gives
    what they need of it when it builds them (so this module needs nothing of
    `postgres`): `connect` opens a connection of the store's with `lock_settings` (its
    failures already the store's errors; `store_closed` once closed), `failed` makes a
    database error a `HandoffsError`, `namespace` keeps the lock keys of one schema apart
    from another's, `statement_timeout` bounds the watch's check, and `name` says which
    store in a lost lock's message."""

    def __init__(self, connect: Callable[[], Awaitable[Any]],
                 failed: Callable[[BaseException], HandoffsError], namespace: str,
                 statement_timeout: float | None, name: str) -> None:
        self.connect = connect
        self.failed = failed
        self.namespace = namespace
        self.statement_timeout = statement_timeout
        self.name = name
        self.errors: tuple[type[BaseException], ...] = (OSError, TimeoutError)
        """What a database call may raise: the store sets its driver's classes once it
        has imported them."""
        self.closed = False
        """Whether the store closed them (a lock connection ending is then no loss)."""
        self.conn: Any = None
        self.held: dict[str, _Hold] = {}
        self._guard: asyncio.Lock | None = None
        self._watch: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Future[None]] = set()

    # -- the connection ------------------------------------------------------------------

    async def connection(self) -> Any:
        """The connection that holds the locks (a new one if it was lost)."""
        conn = self.conn
        if conn is None or conn.is_closed():
            conn = await self.connect()
            with contextlib.suppress(*self.errors):  # PostgreSQL 14+: this connection
                await conn.execute("SET idle_session_timeout = 0")  # idles by design
            conn.add_termination_listener(self._ended)
            self.conn = conn
        return conn

    def _ended(self, conn: Any) -> None:
        """The lock connection closed: every lock it held is gone."""
        if conn is not self.conn:
            return
        self.conn = None
        if self.closed or not self.held:
            return
        for sid, h in self.held.items():
            if not h.lost:
                h.lost = True
                log.warning("the lock of session %r was lost with its PostgreSQL connection;"
                            " its turn stops (session_lock_lost)", sid,
                            extra=fields(sid, None, None))
                if h.task is not None and not h.task.done():
                    h.task.cancel(LOST)

    async def _check(self) -> None:
        """While locks are held, make sure their connection still answers."""
        while self.held:
            await asyncio.sleep(CHECK_EVERY)
            conn = self.conn
            if conn is None or not self.held or self._guard is None:
                continue
            try:
                async with self._guard:
                    await conn.fetchval("SELECT 1", timeout=self.statement_timeout)
            except self.errors:  # TimeoutError included
                log.warning("the PostgreSQL connection holding session locks stopped "
                            "answering; dropping it", exc_info=True)
                conn.terminate()
                self._ended(conn)

    # -- holding -------------------------------------------------------------------------

    def lease(self, session_id: str) -> int | None:
        """The lease a commit of this session must still find (None: not checked)."""
        h = self.held.get(session_id)
        return None if h is None else h.lease

    def inserted(self, session_id: str) -> None:
        """The held session's row was just created, with lease 0."""
        h = self.held.get(session_id)
        if h is not None and h.lease is None:
            h.lease = 0

    async def commit_error(self, pool: Any, w: rows.Write, lease: int | None) -> HandoffsError:
        """Why a commit found no row to write: another process took the session (the
        lease is not ours: `session_lock_lost`), else the version moved
        (`session_conflict`)."""
        h = self.held.get(w.id)
        if h is None:
            return rows.conflict(w.id, w.expected)
        try:
            if lease is None:
                # The row appeared after this process took the lock (written by one that
                # had lost it): take a lease now, so that one cannot write again.
                h.lease = await pool.fetchval(sql.BUMP, w.id)
            elif await pool.fetchval(sql.LEASE, w.id) not in (None, lease):
                return self.lost_error(w.id)
        except self.errors:
            log.warning("reading the lease of %r failed", w.id, exc_info=True)
        return rows.conflict(w.id, w.expected)

    def lost_error(self, session_id: str) -> StoreError:
        return StoreError(
            f"The lock of session {session_id!r} was lost with its connection to "
            f"{self.name} (or another process has taken the session since); this turn "
            "stopped and nothing more of it was stored. The session reads 'interrupted': "
            "the next message answers it.", code="session_lock_lost")

    @asynccontextmanager
    async def hold(self, session_id: str, timeout: float | None) -> AsyncIterator[None]:
        """Hold the session (the caller serialises this process's tasks per session)."""
        key = lock_key(session_id, self.namespace)
        if self._guard is None:
            self._guard = asyncio.Lock()
        guard = self._guard
        leases: list[int | None] = []

        async def take() -> bool:
            async with guard:
                conn = await self.connection()
                try:
                    row = await conn.fetchrow(TAKE, key, session_id)
                except asyncio.CancelledError:
                    self._give_back(conn, key)  # the server may have granted it
                    raise
                except self.errors as exc:
                    self._give_back(conn, key)
                    raise self.failed(exc) from exc
                if not row[0]:
                    return False
                leases.append(row[1])
                return True

        await poll(take, f"Session {session_id!r}", timeout, session_id)
        conn = self.conn
        h = self.held[session_id] = _Hold(asyncio.current_task(), key, leases[0])
        if self._watch is None or self._watch.done():
            self._watch = asyncio.get_running_loop().create_task(self._check())
        try:
            yield
        except asyncio.CancelledError:
            if h.lost and h.task is not None:
                h.delivered = True
                if h.task.uncancel() == 0:
                    raise self.lost_error(session_id) from None
            raise
        finally:
            del self.held[session_id]
            if h.lost and not h.delivered and h.task is not None:
                # The turn ended before the cancel reached it (its commit passed the
                # lease, so it was still the holder): take the cancel back.
                try:
                    await asyncio.sleep(0)
                except asyncio.CancelledError:
                    if h.task.uncancel() > 0:
                        raise
            if not h.lost:  # to its end even if cancelled: the next turn must find it free
                await finish(self._unlock(conn, key))

    def _give_back(self, conn: Any, key: int) -> None:
        task = asyncio.ensure_future(self._unlock(conn, key))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _unlock(self, conn: Any, key: int) -> None:
        if conn is None or conn.is_closed():
            return  # the server dropped the connection, and its locks with it
        assert self._guard is not None
        async with self._guard:
            try:
                await conn.execute("SELECT pg_advisory_unlock($1)", key)
            except self.errors:
                # The lock connection is broken: closing it makes the server drop every
                # lock it held, this one included (their turns are told: `_ended`).
                log.warning("unlocking a session failed; closing the lock connection",
                            exc_info=True)
                conn.terminate()
                self._ended(conn)

    async def close(self) -> None:
        """Close the lock connection (the server releases every lock still held)."""
        self.closed = True
        conn, self.conn = self.conn, None
        if self._watch is not None:
            self._watch.cancel()
        if conn is not None and not conn.is_closed():
            await conn.close()
