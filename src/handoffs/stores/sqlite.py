"""SQLiteStore: durable sessions in one SQLite file, the embedded default.

    runner = Runner(team, store="sqlite:///sessions.db")   # or SQLiteStore("sessions.db")

The file is in WAL mode with `synchronous=NORMAL`: readers never block the writer, and a
commit costs tens of microseconds. Every database call runs on one worker thread per
store, so the event loop never waits on the disk or on another process's write.

Turns on one session are serialised across processes by a byte-range lock in the file
`<path>-lock` (see `stores.locks`): the kernel drops it when a process dies, so a killed
turn never leaves a stale lock behind. The version check in `commit` is the backstop: a
write that does not continue the stored version is refused with `session_conflict`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.events import Event
from ..core.session import Checkpoint, SessionState
from ..errors import HandoffsError
from . import rows
from .base import SessionSummary
from .cache import StateCache
from .locks import KeyedLocks, RangeLock, lock_key, poll
from .migrations import SCHEMA_VERSION, SQLITE, check_version

if TYPE_CHECKING:
    import sqlite3

T = TypeVar("T")

_INSERT_SESSION = (
    "INSERT INTO sessions (id, version, active_agent, status, turn, channel, created_at,"
    " updated_at, header, messages, records, events) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)
_UPDATE_SESSION = (
    "UPDATE sessions SET version = ?, active_agent = ?, status = ?, turn = ?, channel = ?,"
    " updated_at = ?, header = ?, messages = ?, records = ?, events = events + ?"
    " WHERE id = ? AND version = ? RETURNING events"
)
_INSERT_MESSAGE = "INSERT INTO messages (session_id, seq, body) VALUES (?, ?, ?)"
_INSERT_RECORD = "INSERT INTO records (session_id, seq, body) VALUES (?, ?, ?)"
_INSERT_EVENT = (
    "INSERT INTO events (session_id, seq, turn, type, at, body) VALUES (?, ?, ?, ?, ?, ?)"
)


def migrate(conn: sqlite3.Connection, target: int = SCHEMA_VERSION,
            where: str = "The SQLite database") -> int:
    """Bring the database to schema `target` (forward only); returns the version found.

    Runs in one `BEGIN IMMEDIATE` transaction, so two processes opening a new file at
    once migrate it once.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        exists = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'handoffs_schema'"
        ).fetchone()
        found = 0
        if exists:
            row = conn.execute("SELECT version FROM handoffs_schema WHERE id = 1").fetchone()
            found = int(row[0]) if row else 0
        check_version(found, where)
        for step in SQLITE[found:target]:
            for statement in step:
                conn.execute(statement)
        if target > found:
            conn.execute("INSERT INTO handoffs_schema (id, version) VALUES (1, ?) ON CONFLICT"
                         " (id) DO UPDATE SET version = excluded.version", (target,))
        conn.execute("COMMIT")
    except BaseException:
        _rollback(conn)
        raise
    return found


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _busy(exc: Exception) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED: another connection holds the write lock."""
    return getattr(exc, "sqlite_errorcode", None) in (5, 6) or "locked" in str(exc)


# -- the database calls: plain functions over a connection, run on either connection ---


def _read(c: sqlite3.Connection, session_id: str, most: int | None
          ) -> tuple[str, int, int, str | None, str | None] | None:
    """The header and, when the session has at most `most` rows, its rows too."""
    c.execute("BEGIN")  # one snapshot for the three reads
    try:
        row = c.execute("SELECT header, messages, records FROM sessions WHERE id = ?",
                        (session_id,)).fetchone()
        if row is None:
            return None
        header, n_msgs, n_recs = row
        if most is not None and n_msgs + n_recs > most:
            return header, n_msgs, n_recs, None, None
        msgs, recs = _read_rows(c, session_id, n_msgs, n_recs)
    finally:
        c.execute("COMMIT")
    return header, n_msgs, n_recs, msgs, recs


def _head(c: sqlite3.Connection, session_id: str) -> tuple[int, int, int] | None:
    """The stored version and row counts: enough to tell whether a cached state is current."""
    row = c.execute("SELECT version, messages, records FROM sessions WHERE id = ?",
                    (session_id,)).fetchone()
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]))


def _read_rows(c: sqlite3.Connection, session_id: str, n_msgs: int, n_recs: int
               ) -> tuple[str, str]:
    """Rows below the header's counts: rows are append-only, so this matches the header
    even when read in a later snapshot than the header."""
    msgs = c.execute("SELECT body FROM messages WHERE session_id = ? AND seq < ? ORDER BY seq",
                     (session_id, n_msgs)).fetchall()
    recs = c.execute("SELECT body FROM records WHERE session_id = ? AND seq < ? ORDER BY seq",
                     (session_id, n_recs)).fetchall()
    return rows.join([m[0] for m in msgs]), rows.join([r[0] for r in recs])


def _list(c: sqlite3.Connection, limit: int, offset: int) -> list[Any]:
    return c.execute(
        "SELECT id, active_agent, turn, status, created_at, updated_at, messages"
        " FROM sessions ORDER BY updated_at DESC, id LIMIT ? OFFSET ?",
        (limit, offset)).fetchall()


def _write(c: sqlite3.Connection, w: rows.Write, replace: bool = False) -> None:
    c.execute("BEGIN IMMEDIATE")
    try:
        if replace:
            _delete_rows(c, w.id)
        if w.expected == 0:
            try:
                c.execute(_INSERT_SESSION, (
                    w.id, w.version, w.active_agent, w.status, w.turn, w.channel,
                    w.created_at, w.updated_at, w.header, w.message_count,
                    w.record_count, len(w.events)))
            except Exception as exc:
                if type(exc).__name__ == "IntegrityError":
                    raise rows.conflict(w.id, 0) from None
                raise
            first_event = 0
        else:
            found = c.execute(_UPDATE_SESSION, (
                w.version, w.active_agent, w.status, w.turn, w.channel, w.updated_at,
                w.header, w.message_count, w.record_count, len(w.events), w.id,
                w.expected)).fetchall()
            if not found:
                raise rows.conflict(w.id, w.expected)
            first_event = found[0][0] - len(w.events)
        sid = w.id
        if w.messages:
            c.executemany(_INSERT_MESSAGE, [
                (sid, w.first_message + i, b) for i, b in enumerate(w.messages)])
        if w.records:
            c.executemany(_INSERT_RECORD, [
                (sid, w.first_record + i, b) for i, b in enumerate(w.records)])
        if w.events:
            c.executemany(_INSERT_EVENT, [
                (sid, first_event + i, turn, type_, at, body)
                for i, (turn, type_, at, body) in enumerate(w.events)])
        c.execute("COMMIT")
    except BaseException:
        _rollback(c)
        raise


def _delete_rows(c: sqlite3.Connection, session_id: str) -> bool:
    for table in ("messages", "records", "events"):
        c.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
    return bool(c.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0)


def _delete(c: sqlite3.Connection, session_id: str) -> bool:
    c.execute("BEGIN IMMEDIATE")
    try:
        existed = _delete_rows(c, session_id)
        c.execute("COMMIT")
    except BaseException:
        _rollback(c)
        raise
    return existed


def _export(c: sqlite3.Connection, session_id: str) -> tuple[str, str, str, str] | None:
    c.execute("BEGIN")
    try:
        row = c.execute("SELECT header, messages, records FROM sessions WHERE id = ?",
                        (session_id,)).fetchone()
        if row is None:
            return None
        msgs, recs = _read_rows(c, session_id, row[1], row[2])
        evs = c.execute("SELECT body FROM events WHERE session_id = ? ORDER BY seq",
                        (session_id,)).fetchall()
    finally:
        c.execute("COMMIT")
    return row[0], msgs, recs, rows.join([e[0] for e in evs])


def _checkpoint(c: sqlite3.Connection) -> None:
    c.execute("PRAGMA wal_checkpoint(PASSIVE)")




SMALL = 256
"""Reads and writes of at most this many rows run inline on the event loop's thread."""
CHECKPOINT_EVERY = 256
"""Inline commits between two WAL checkpoints (run on the worker thread)."""


class SQLiteStore:
    """Sessions in a SQLite file: durable, shared by every process on this machine.

    `path` is a file path (created if missing) or `:memory:` (one process only). The
    schema is created or migrated forward when the store is made; a file written by a
    newer handoffs is refused with `schema_too_new`. `lock_timeout` bounds how long a
    turn waits for another turn on the same session (None: as long as it takes).

    Small calls (a turn's commit, a short session's load: tens of microseconds in WAL
    mode) run inline on the event loop's thread, on a connection that never waits:
    a hand-off to a thread costs more than the call. Anything large, and any call that
    meets another writer's lock, runs on the store's worker thread with its own
    connection, which waits for the lock (up to 30 s). WAL checkpoints, the only calls
    that sync the disk, run there too.
    """

    def __init__(self, path: str | os.PathLike[str] = "handoffs.db", *,
                 lock_timeout: float | None = None, cache_size: int = 256) -> None:
        import sqlite3

        self.path = os.fspath(path)
        self.lock_timeout = lock_timeout
        memory = self.path in ("", ":memory:") or self.path.startswith("file::memory:")
        if memory:
            # One in-memory database shared by both connections of this store.
            self.path = f"file:handoffs-{id(self):x}?mode=memory&cache=shared"
        uri = memory or self.path.startswith("file:")
        where = f"The SQLite database {os.fspath(path)!r}"
        try:
            slow = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=30.0, uri=uri)
        except sqlite3.Error as exc:
            raise HandoffsError(f"Cannot open {where}: {exc}.",
                                code="store_unavailable") from exc
        try:
            if not memory:
                slow.execute("PRAGMA journal_mode = WAL")
            slow.execute("PRAGMA synchronous = NORMAL")
            migrate(slow, where=where)
            fast = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False,
                                   timeout=0.0, uri=uri)
            fast.execute("PRAGMA synchronous = NORMAL")
            fast.execute("PRAGMA wal_autocheckpoint = 0")
        except BaseException:
            slow.close()
            raise
        self._fast = fast
        self._slow = slow
        self._sqlite_error: type[Exception] = sqlite3.OperationalError
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="handoffs-sqlite")
        self._locks = KeyedLocks()
        self._range = None if memory else RangeLock(self.path + "-lock")
        self._held: set[str] = set()
        self._cache = StateCache(cache_size)
        self._inline_commits = 0
        self._closed = False

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"

    async def _worker(self, fn: Callable[..., T], *args: Any) -> T:
        if self._closed:
            raise HandoffsError("This SQLiteStore is closed.", code="store_closed")
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fn, self._slow, *args)

    async def _call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run inline if the database is free, else on the worker thread (which waits)."""
        if self._closed:
            raise HandoffsError("This SQLiteStore is closed.", code="store_closed")
        try:
            return fn(self._fast, *args)
        except self._sqlite_error as exc:
            if not _busy(exc):
                raise
        return await self._worker(fn, *args)

    # -- locking -----------------------------------------------------------------------

    @asynccontextmanager
    async def lock(self, session_id: str) -> AsyncIterator[None]:
        """Hold the session for a turn: first against this process's tasks, then others."""
        async with self._locks.hold(session_id):
            rng = self._range
            key = lock_key(session_id)
            if rng is not None and not rng.try_acquire(key):
                async def take() -> bool:
                    return rng.try_acquire(key)

                await poll(take, f"Session {session_id!r}", self.lock_timeout)
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
        cached = self._cache.candidate(session_id)
        if cached is not None and not self._interrupted(session_id, cached.status):
            head = await self._call(_head, session_id)
            if head is not None and StateCache.current(cached, *head):
                return cached
            self._cache.forget(session_id)
        found = await self._call(_read, session_id, SMALL)
        if found is None:
            return None
        header, n_msgs, n_recs, msgs, recs = found
        if msgs is None or recs is None:  # a long session: read its rows off the loop
            state = rows.decode(header, *await self._worker(
                _read_rows, session_id, n_msgs, n_recs))
        else:
            state = rows.decode(header, msgs, recs)
        if self._interrupted(session_id, state.status):
            state.status = "interrupted"
        return state

    async def list_sessions(self, limit: int = 50, offset: int = 0) -> list[SessionSummary]:
        """Sessions, most recently updated first."""
        if limit <= SMALL:
            found = await self._call(_list, limit, offset)
        else:
            found = await self._worker(_list, limit, offset)
        return [
            SessionSummary(r[0], r[1], r[2],
                           "interrupted" if self._interrupted(r[0], r[3]) else r[3],
                           r[4], r[5], r[6])
            for r in found
        ]

    # -- writes ------------------------------------------------------------------------

    async def commit(
        self, state: SessionState, since: Checkpoint, events: Sequence[Event] = ()
    ) -> None:
        """Append the messages, records and events past `since`; rewrite the header."""
        w = rows.encode_commit(state, since, events)
        if len(w.messages) + len(w.records) + len(w.events) > SMALL:
            await self._worker(_write, w)
        else:
            await self._call(_write, w)
            self._inline_commits += 1
            if self._inline_commits >= CHECKPOINT_EVERY:
                self._inline_commits = 0
                self._executor.submit(_checkpoint, self._slow)
        rows.applied(state, w)
        self._cache.remember(state, w.header)

    async def delete(self, session_id: str) -> bool:
        """Remove the session and all its rows; False if there was none."""
        self._cache.forget(session_id)
        return await self._worker(_delete, session_id)

    # -- export / import ---------------------------------------------------------------

    async def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session as a JSON-ready dict (`SessionState.to_dict()` plus `events`)."""
        import json

        found = await self._worker(_export, session_id)
        if found is None:
            return None
        header, msgs, recs, events = found
        return rows.export_dict(rows.decode(header, msgs, recs), json.loads(events))

    async def import_session(self, data: Mapping[str, Any] | str, *,
                             replace: bool = False) -> SessionState:
        """Store an `export_session` result (dict or JSON text) under its id.

        Raises `session_exists` if the id is taken, unless `replace=True`.
        """
        state, w = rows.import_write(data)
        self._cache.forget(state.id)
        async with self.lock(state.id):
            try:
                await self._worker(_write, w, replace)
            except HandoffsError as exc:
                if exc.code == "session_conflict":
                    raise HandoffsError(
                        f"Session {state.id!r} already exists; pass replace=True to "
                        "overwrite it.", code="session_exists") from None
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
