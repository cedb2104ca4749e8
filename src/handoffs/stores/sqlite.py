"""SQLiteStore: durable sessions in one SQLite file, the embedded default.

    runner = Runner(team, store="sqlite:///sessions.db")   # or SQLiteStore("sessions.db")

The file is in WAL mode with `synchronous=NORMAL`: readers never block the writer, and a
commit costs tens of microseconds. Small calls run inline; large ones, and any that
would wait for another writer, on one worker thread per store (see `SQLiteStore`). The
database calls themselves are in `stores.sqlite_ops`.

Turns on one session are serialised across processes by a byte-range lock in the file
`<path>-lock` (see `stores.locks`): the kernel drops it when a process dies, so a killed
turn never leaves a stale lock behind. The version check in `commit` is the backstop: a
write that does not continue the stored version is refused with `session_conflict`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..core.events import Event
from ..core.session import Checkpoint, SessionState, SessionStatus
from ..errors import HandoffsError, StoreError
from ..log import fields
from . import checks, rows, stats
from . import sqlite_ops as ops
from .base import SessionSummary
from .cache import StateCache
from .locks import KeyedLocks, RangeLock, finish, lock_key, poll
from .sqlite_marks import TurnMarksOnSQLite
from .sqlite_ops import migrate
from .stats import HandoffStats

__all__ = ["SQLiteStore", "migrate"]

log = logging.getLogger("handoffs.stores.sqlite")

READY_LOCK_WAIT = 0.5
"""Seconds `check_ready` lets another writer hold the write lock before it says the
store is busy (`store_busy`): a turn's commit holds it for milliseconds."""

T = TypeVar("T")

SMALL = 256
"""Reads and writes of at most this many rows (and `rows.LARGE` characters) run inline
on the event loop's thread."""
CHECKPOINT_EVERY = 256
"""Inline commits between two WAL checkpoints (run on the worker thread)."""
_PAGE = 100
"""Rows read per query while filtering a listing on a status that depends on locks."""


def _lock_path(path: str, uri: bool) -> str:
    """The lock file beside the database (for a `file:` URI, beside its path)."""
    return (urlsplit(path).path if uri else path) + "-lock"


class SQLiteStore(TurnMarksOnSQLite):
    """Sessions in a SQLite file: durable, shared by every process on this machine.

    `path` is a file path (created if missing), a `file:` URI (`file:/x.db?mode=ro` for
    read-only) or `:memory:` (one process only). The schema is created or migrated
    forward when the store is made; a file written by a newer handoffs is refused with
    `schema_too_new`, a file that is no SQLite database with `store_corrupt`.
    `lock_timeout` bounds how long a turn waits for another turn on the same session
    (None: as long as it takes).

    Small calls (a turn's commit, a short session's load: tens of microseconds in WAL
    mode) run inline on the event loop's thread, on a connection that never waits:
    a hand-off to a thread costs more than the call. Anything large (over `SMALL` rows
    or `rows.LARGE` characters: encoding included), and any call that meets another
    writer's lock, runs on the store's worker thread with its own connection, which
    waits for the lock (up to 30 s). WAL checkpoints, the only calls that sync the
    disk, run there too. A commit, once started, completes before the turn releases
    the session, even if the turn is cancelled.
    """

    def __init__(self, path: str | os.PathLike[str] = "handoffs.db", *,
                 lock_timeout: float | None = None, cache_size: int = 256) -> None:
        self.path = os.fspath(path)
        self.lock_timeout = lock_timeout
        memory = self.path in ("", ":memory:") or self.path.startswith("file::memory:")
        if memory:
            # One in-memory database shared by both connections of this store.
            self.path = f"file:handoffs-{id(self):x}?mode=memory&cache=shared"
        uri = memory or self.path.startswith("file:")
        self._where = where = f"The SQLite database {os.fspath(path)!r}"
        connections: list[sqlite3.Connection] = []
        try:
            slow = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=30.0, uri=uri)
            connections.append(slow)
            if not memory:
                ops.wal(slow)
            slow.execute("PRAGMA synchronous = NORMAL")
            migrate(slow, where=where)
            fast = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=0.0, uri=uri)
            connections.append(fast)
            fast.execute("PRAGMA synchronous = NORMAL")
            fast.execute("PRAGMA wal_autocheckpoint = 0")
            self._range = None if memory else self._range_lock(_lock_path(self.path, uri))
        except BaseException as exc:
            for c in connections:
                c.close()
            if isinstance(exc, sqlite3.Error):
                raise ops.store_error(exc, where) from exc
            raise
        self._fast = fast
        self._slow = slow
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="handoffs-sqlite")
        self._locks = KeyedLocks()
        self._held: set[str] = set()
        self._cache = StateCache(cache_size)
        self._inline_commits = 0
        self._full: HandoffsError | None = None
        """The last write's refusal by the disk, until a write succeeds."""
        self._closed = False

    def _range_lock(self, lock_path: str) -> RangeLock | None:
        try:
            return RangeLock(lock_path)
        except OSError as exc:
            if self.path.startswith("file:") and "mode=ro" in self.path:
                # A read-only database in a read-only place: no turn can commit anyway.
                log.warning("no cross-process session locks for %s: %s", self._where, exc)
                return None
            raise StoreError(
                f"Cannot create the lock file {lock_path!r} beside {self._where} ({exc}). "
                "The store needs to write beside its database: check the directory's "
                "permissions.", code="store_unavailable") from exc

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    def _open(self) -> None:
        if self._closed:
            raise HandoffsError("This SQLiteStore is closed.", code="store_closed")

    async def _worker(self, fn: Callable[..., T], *args: Any) -> T:
        self._open()
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor, fn, self._slow, *args)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc

    def _error(self, exc: sqlite3.Error) -> HandoffsError:
        """What sqlite3 raised as a store error; a write refused by the disk (no space,
        a size limit) is remembered until a write succeeds (`check_ready`)."""
        err = ops.store_error(exc, self._where)
        if err.code in ("store_full", "store_write_failed"):
            self._full = err
        return err

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run inline if the database is free, else on the worker thread (which waits)."""
        self._open()
        try:
            return fn(self._fast, *args)
        except sqlite3.Error as exc:
            if not ops.busy(exc):
                raise self._error(exc) from exc
        log.debug("%s is busy with another writer; %s retries on the worker thread, "
                  "which waits", self._where, fn.__name__)
        return await self._worker(fn, *args)

    # -- locking -----------------------------------------------------------------------

    @asynccontextmanager
    async def lock(self, session_id: str) -> AsyncIterator[None]:
        """Hold the session for a turn: first against this process's tasks, then others."""
        checks.session_id(session_id)
        async with self._locks.hold(session_id):
            rng = self._range
            key = lock_key(session_id)
            if rng is not None and not rng.try_acquire(key):
                async def take() -> bool:
                    return rng.try_acquire(key)

                await poll(take, f"Session {session_id!r}", self.lock_timeout, session_id)
            self._held.add(session_id)
            try:
                yield
            finally:
                self._held.discard(session_id)
                if rng is not None:
                    rng.release(key)

    def _interrupted(self, session_id: str, status: str) -> bool:
        """A `running` session nobody holds: its turn died before it finished."""
        if status != "running" or session_id in self._held:
            return False
        rng = self._range
        return rng is None or rng.is_free(lock_key(session_id))

    # -- reads -------------------------------------------------------------------------

    async def load(self, session_id: str) -> SessionState | None:
        """The stored session, or None. Outside a turn, a turn that died shows as
        status `interrupted`; the next `run` answers its message first.

        The state this store last committed is returned as it is (no rows read) while the
        database still holds that version (see `stores.cache`)."""
        checks.session_id(session_id)
        cached = self._cache.candidate(session_id)
        if cached is not None and not self._interrupted(session_id, cached.status):
            head = await self._call(ops.head, session_id)
            if head is not None and StateCache.current(cached, *head):
                return cached
            self._cache.forget(session_id)
        found = await self._call(ops.read, session_id, SMALL)
        if found is None:
            return None
        header, n_msgs, n_recs, msgs, recs, n_events = found
        if msgs is None or recs is None:  # a long session: read its rows off the loop
            state = rows.decode(header, *await self._worker(
                ops.read_rows, session_id, n_msgs, n_recs))
        else:
            state = rows.decode(header, msgs, recs)
        state.event_seq = n_events
        if self._interrupted(session_id, state.status):
            state.status = SessionStatus.INTERRUPTED
        return state

    async def event_count(self, session_id: str) -> int:
        """The sequence number the session's next stored event gets: one past its last
        stored event (0 if it does not exist). Numbers a turn that died showed but never
        stored are skipped, so this can exceed the number of events stored."""
        checks.session_id(session_id)
        return await self._call(ops.event_count, session_id)

    async def events_after(self, session_id: str, after: int = -1,
                           limit: int = 1000) -> list[dict[str, Any]]:
        """The session's stored events whose sequence number is above `after`, oldest
        first, at most `limit`; each is its `Event.to_dict()` plus `seq`."""
        checks.session_id(session_id)
        return rows.sequenced(await self._call(ops.events_after, session_id, after, limit))

    async def list_sessions(self, limit: int = 50, offset: int = 0, *,
                            status: str | None = None) -> list[SessionSummary]:
        """Sessions, most recently updated first; only those in `status` if given
        (`waiting_for_human`, `interrupted`, ...: see `checks.STATUSES`)."""
        checks.listing(limit, offset, status)
        if status not in ("running", "interrupted"):
            found = await self._rows(limit, offset, status)
            return [self._summary(r) for r in found]
        # Running or interrupted depends on the session's lock, not only on its row.
        async def fetch(n: int, at: int) -> list[SessionSummary]:
            return [self._summary(r) for r in await self._rows(n, at, "live")]

        return await checks.filtered_page(fetch, status, limit, offset, _PAGE)

    async def _rows(self, limit: int, offset: int, status: str | None) -> list[Any]:
        if limit <= SMALL:
            return await self._call(ops.list_rows, limit, offset, status)
        return await self._worker(ops.list_rows, limit, offset, status)

    def _summary(self, r: Any) -> SessionSummary:
        status = "interrupted" if self._interrupted(r[0], r[3]) else r[3]
        return SessionSummary(r[0], r[1], r[2], status, r[4], r[5], r[6])

    async def handoff_stats(self, since: float | None = None,
                            until: float | None = None) -> HandoffStats:
        """Per route: requests, accepted, refusals by code, the share whose turn failed
        or went to a human, the median time the target took (see `stores.stats`).
        `since` (inclusive) and `until` (exclusive) are Unix times; None: unbounded.
        Computed in SQL over the `records_routes` index, on the worker thread."""
        lo, hi = stats.window(since, until)
        found = await self._worker(ops.handoff_stats, lo, hi)
        return stats.from_sql(*found, since, until)

    # -- writes ------------------------------------------------------------------------

    async def commit(
        self, state: SessionState, since: Checkpoint, events: Sequence[Event] = ()
    ) -> None:
        """Append the messages, records and events past `since`; rewrite the header."""
        checks.session_id(state.id)
        self._open()
        w = None
        if rows.rough_size(state, since) <= rows.LARGE:
            w = rows.encode_commit(state, since, events)
            if (len(w.messages) + len(w.records) + len(w.events) <= SMALL
                    and w.size <= rows.LARGE and self._inline(w)):
                rows.applied(state, w)
                self._cache.remember(state, w.header)
                self._full = None
                return
        # Large, or another writer holds the database: on the worker thread, and to
        # its end even if this turn is cancelled meanwhile.
        await finish(self._commit_off_loop(state, since, events, w))

    def _inline(self, w: rows.Write) -> bool:
        """Write on the event loop's thread; False if another writer holds the lock."""
        try:
            ops.write(self._fast, w)
        except sqlite3.Error as exc:
            if ops.busy(exc):
                log.debug("%s is busy with another writer; the commit of %r retries on "
                          "the worker thread, which waits", self._where, w.id,
                          extra=fields(w.id, w.turn, None))
                return False
            raise self._error(exc) from exc
        self._inline_commits += 1
        if self._inline_commits >= CHECKPOINT_EVERY:
            self._inline_commits = 0
            self._executor.submit(ops.checkpoint, self._slow)
        return True

    async def _commit_off_loop(self, state: SessionState, since: Checkpoint,
                               events: Sequence[Event], w: rows.Write | None) -> None:
        if w is None:
            w = await self._worker(ops.encode_and_write, state, since, events)
        else:
            await self._worker(ops.write, w)
        rows.applied(state, w)
        self._cache.remember(state, w.header)
        self._full = None

    async def check_ready(self) -> None:
        """Raise the store's error if it cannot serve turns now: it cannot be read,
        another writer has held its write lock for `READY_LOCK_WAIT` seconds
        (`store_busy`: a turn could not commit), or its last write was refused by the
        disk (`store_full`, `store_write_failed`) and a write still is (tried with a
        64 KB row, then removed)."""
        await self._call(ops.head, "")
        await self._writable()
        if self._full is not None:
            await self._worker(ops.probe_write)
            self._full = None

    async def _writable(self) -> None:
        """Whether a write could take the write lock within `READY_LOCK_WAIT` seconds:
        tried without waiting, on this thread (never behind a turn that waits on the
        store's thread), again and again until then; `store_busy` if it never could."""
        self._open()
        wait, waited = 0.005, 0.0
        while True:
            try:
                ops.write_lock_free(self._fast)
                return
            except sqlite3.Error as exc:
                if not ops.busy(exc):
                    raise self._error(exc) from exc
                if waited >= READY_LOCK_WAIT:
                    raise self._error(exc) from exc
            await asyncio.sleep(wait)
            waited += wait
            wait = min(wait * 2, 0.1)

    async def delete(self, session_id: str) -> bool:
        """Remove the session and all its rows; False if there was none."""
        checks.session_id(session_id)
        self._cache.forget(session_id)
        return await finish(self._worker(ops.delete, session_id))

    # -- export / import ---------------------------------------------------------------

    async def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session as a JSON-ready dict (`SessionState.to_dict()` plus `events`),
        with the status `load` reports."""
        import json

        checks.session_id(session_id)
        found = await self._worker(ops.export, session_id)
        if found is None:
            return None
        header, msgs, recs, events = found
        state = rows.decode(header, msgs, recs)
        if self._interrupted(session_id, state.status):
            state.status = SessionStatus.INTERRUPTED
        return rows.export_dict(state, json.loads(events))

    async def import_session(self, data: Mapping[str, Any] | str, *,
                             replace: bool = False) -> SessionState:
        """Store an `export_session` result (dict or JSON text) under its id.

        Raises `session_exists` if the id is taken, unless `replace=True`.
        """
        state, w = rows.import_write(data)
        self._cache.forget(state.id)
        async with self.lock(state.id):
            try:
                await finish(self._worker(ops.write, w, replace))
            except HandoffsError as exc:
                if exc.code == "session_conflict":
                    raise HandoffsError(
                        f"Session {state.id!r} already exists; pass replace=True to "
                        "overwrite it.", code="session_exists") from exc
                raise
        return state

    async def close(self) -> None:
        """Finish pending writes and close the database."""
        if self._closed:
            return
        self._closed = True
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._slow.close)
        self._executor.shutdown(wait=True)
        self._fast.close()
        if self._range is not None:
            self._range.close()

