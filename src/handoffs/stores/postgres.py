"""PostgresStore: durable sessions in PostgreSQL, for production and many processes.

    runner = Runner(team, store="postgresql://user@host/db")   # or PostgresStore(dsn)

Needs `asyncpg` (`pip install 'handoffs[postgres]'`). The pool opens on first use; the
schema is created or migrated forward then. `?schema=name` in the URL (or `schema=`)
keeps the tables in that schema, created if missing.

Each operation is one statement, so one round trip: a load reads the header and both
row sets in one query; a commit is one statement whose CTEs update the header (only if
its version is still the expected one) and insert the new rows.

Turns on one session are serialised across processes and machines with a session-level
advisory lock, all held on one dedicated connection per store, and fenced by a lease that
every commit checks (see `stores.postgres_lock`). Every connection, statement and wait
for a row lock is bounded (`connect_timeout`, `statement_timeout`): a server that stops
answering is `store_unavailable` within them, not a request that hangs.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

from ..core.events import Event
from ..core.session import Checkpoint, SessionState, SessionStatus
from ..errors import HandoffsError, missing_extra
from . import checks, rows, stats
from . import postgres_sql as sql
from .base import SessionSummary
from .cache import StateCache
from .locks import KeyedLocks, finish, lock_key
from .marks import TurnMark
from .postgres_lock import SessionLocks, lock_settings
from .postgres_marks import TurnMarksOnPostgres
from .stats import HandoffStats

log = logging.getLogger("handoffs.stores.postgres")

_PAGE = 100
"""Rows read per query while filtering a listing on a status that depends on locks."""

CONNECT_TIMEOUT = 5.0
"""Seconds to open a connection, by default."""
STATEMENT_TIMEOUT = 10.0
"""Seconds a statement (a load, a commit, taking a lock) may take, by default; also the
server's `statement_timeout` and `lock_timeout` (a wait for a row lock)."""


class PostgresStore:
    """Sessions in PostgreSQL, shared by every process and machine that reaches it.

    `dsn` is a `postgresql://` URL (a bad port, `sslmode` or timeout is refused here,
    with `invalid_store`); `schema` (or `?schema=` in it) selects the schema,
    `min_size`/`max_size` the pool, `lock_timeout` how long a turn waits for another turn
    on the same session (None: as long as it takes). `connect_timeout` (default 5 s) and
    `statement_timeout` (default 10 s; also the server's limits on a statement and on a
    wait for a row lock) bound every call: None takes the URL's `?connect_timeout=`
    (seconds) and `?statement_timeout=` (milliseconds, or `3s`), else the default; 0 is
    no limit. Nothing connects until first use. Large commits are encoded on a thread; a
    commit, once started, completes before the turn releases the session, even if the
    turn is cancelled.
    """

    def __init__(self, dsn: str, *, schema: str | None = None, min_size: int = 1,
                 max_size: int = 10, lock_timeout: float | None = None,
                 cache_size: int = 256, connect_timeout: float | None = None,
                 statement_timeout: float | None = None) -> None:
        self.dsn, self.schema, found = sql.split_dsn(dsn, schema)
        self.min_size = min_size
        self.max_size = max_size
        self.lock_timeout = lock_timeout
        self.connect_timeout = sql.limit(connect_timeout, found, "connect_timeout",
                                      CONNECT_TIMEOUT)
        """Seconds to open a connection (None: no limit)."""
        self.statement_timeout = sql.limit(statement_timeout, found, "statement_timeout",
                                        STATEMENT_TIMEOUT)
        """Seconds a statement may take, waits for row locks included (None: no limit)."""
        self._pool: Any = None
        self._opening: asyncio.Lock | None = None
        self._locks = KeyedLocks()
        self._namespace = self.schema or ""
        self._sessions = SessionLocks(self._lock_connection, self._failed, self._namespace,
                                      self.statement_timeout, repr(self))
        self._cache = StateCache(cache_size)
        self._marks = TurnMarksOnPostgres(self._ready, self._failed, self._write_failed,
                                          self._cache, self._sessions)
        self._full: HandoffsError | None = None
        """The last write's failure for lack of space, until a write succeeds."""
        self._closed = False
        self._errors: tuple[type[BaseException], ...] = (OSError, TimeoutError)
        """What a database call may raise (asyncpg's classes once it is imported)."""

    def __repr__(self) -> str:
        parts = urlsplit(self.dsn)
        host = parts.netloc.rpartition("@")[2] or "localhost"
        return f"PostgresStore('{parts.scheme}://{host}{parts.path}', schema={self.schema!r})"

    def _failed(self, exc: BaseException) -> HandoffsError:
        return sql.store_error(exc, f"PostgreSQL at {self!r}")

    # -- connections ---------------------------------------------------------------------

    def _settings(self) -> dict[str, str]:
        return sql.settings(self.dsn, self.schema, self.statement_timeout)

    async def _connect(self, settings: dict[str, str] | None = None) -> Any:
        """A connection of its own, bounded by the store's timeouts."""
        import asyncpg  # type: ignore[import-untyped, import-not-found, unused-ignore]

        return await asyncpg.connect(self.dsn, timeout=self.connect_timeout or None,
                                     command_timeout=self.statement_timeout,
                                     server_settings=settings)

    async def _lock_connection(self) -> Any:
        """A connection of its own for the session locks (`postgres_lock.lock_settings`)."""
        await self._ready()
        try:
            return await self._connect(lock_settings(self._settings()))
        except self._errors as exc:
            raise self._failed(exc) from exc

    async def _ready(self) -> Any:
        pool = self._pool
        if pool is not None:
            return pool
        if self._closed:
            raise HandoffsError("This PostgresStore is closed.", code="store_closed")
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                self._pool = await self._open()
        return self._pool

    async def _open(self) -> Any:
        try:
            import asyncpg  # type: ignore[import-untyped, import-not-found, unused-ignore]
        except ImportError as exc:
            raise missing_extra("PostgresStore needs asyncpg", "postgres") from exc
        self._errors = (asyncpg.PostgresError, asyncpg.InterfaceError,
                        asyncpg.exceptions.InternalClientError, OSError, TimeoutError)
        self._sessions.errors = self._errors  # (the turn marks read them there)
        try:
            conn = await self._connect()
            try:
                await sql.migrate(conn, self.schema)
            finally:
                await conn.close()
            return await asyncpg.create_pool(
                self.dsn, min_size=self.min_size, max_size=self.max_size,
                reset=sql.no_reset, server_settings=self._settings(),
                timeout=self.connect_timeout or None, command_timeout=self.statement_timeout)
        except HandoffsError:
            raise
        except (ValueError, OverflowError, asyncpg.ClientConfigurationError) as exc:
            raise HandoffsError(
                f"Invalid PostgreSQL URL {sql.redact(self.dsn)!r} ({exc}). The form is "
                "postgresql://user@host:5432/database?schema=name.",
                code="invalid_store") from exc
        except Exception as exc:
            raise HandoffsError(f"Cannot reach PostgreSQL at {self!r}: {exc}",
                                code="store_unavailable") from exc

    # -- locking -------------------------------------------------------------------------

    @asynccontextmanager
    async def lock(self, session_id: str) -> AsyncIterator[None]:
        """Hold the session for a turn, across processes and machines; a turn whose lock
        is lost meanwhile stops with `session_lock_lost` (see `stores.postgres_lock`)."""
        checks.session_id(session_id)
        async with self._locks.hold(session_id), \
                self._sessions.hold(session_id, self.lock_timeout):
            yield

    async def _interrupted(self, pool: Any, session_id: str, status: str) -> bool:
        if status != "running" or session_id in self._sessions.held:
            return False
        free: bool = await pool.fetchval(sql.PROBE, lock_key(session_id, self._namespace))
        return free

    # -- reads ---------------------------------------------------------------------------

    async def load(self, session_id: str) -> SessionState | None:
        """The stored session, or None. Outside a turn, a turn that died shows as
        status `interrupted` (the next `run` answers its message with the new one).

        The state this store last committed is returned as it is (no rows read) while the
        database still holds that version (see `stores.cache`)."""
        checks.session_id(session_id)
        pool = self._pool or await self._ready()
        try:
            cached = self._cache.candidate(session_id)
            if cached is not None and cached.status != "running":
                head = await pool.fetchrow(sql.HEAD, session_id)
                if head is not None and StateCache.current(cached, head[0], head[1], head[2]):
                    return cached
                self._cache.forget(session_id)
            row = await pool.fetchrow(sql.LOAD, session_id)
            return None if row is None else await self._decoded(pool, session_id, row, 3)
        except self._errors as exc:
            raise self._failed(exc) from exc

    async def _decoded(self, pool: Any, session_id: str, row: Any, seq: int
                       ) -> SessionState:
        """A state from its header and rows (`row[seq]`: its next event number);
        `interrupted` if its turn died."""
        state = rows.decode(row[0], rows.wrap(row[1]), rows.wrap(row[2]))
        state.event_seq = row[seq]
        if await self._interrupted(pool, session_id, state.status):
            state.status = SessionStatus.INTERRUPTED
        return state

    async def event_count(self, session_id: str) -> int:
        """The sequence number the session's next stored event gets: one past its last
        stored event (0 if it does not exist). Numbers a turn that died showed but never
        stored are skipped, so this can exceed the number of events stored."""
        checks.session_id(session_id)
        pool = self._pool or await self._ready()
        try:
            n = await pool.fetchval(sql.EVENT_COUNT, session_id)
        except self._errors as exc:
            raise self._failed(exc) from exc
        return int(n or 0)

    async def events_after(self, session_id: str, after: int = -1,
                           limit: int = 1000) -> list[dict[str, Any]]:
        """The session's stored events whose sequence number is above `after`, oldest
        first, at most `limit`; each is its `Event.to_dict()` plus `seq`."""
        checks.session_id(session_id)
        pool = self._pool or await self._ready()
        try:
            found = await pool.fetch(sql.EVENTS_AFTER, session_id, after, limit)
        except self._errors as exc:
            raise self._failed(exc) from exc
        return rows.sequenced(found)

    async def list_sessions(self, limit: int = 50, offset: int = 0, *,
                            status: str | None = None) -> list[SessionSummary]:
        """Sessions, most recently updated first; only those in `status` if given
        (`waiting_for_human`, `interrupted`, ...: see `checks.STATUSES`)."""
        checks.listing(limit, offset, status)
        pool = await self._ready()
        try:
            if status not in ("running", "interrupted"):
                if status is None:
                    found = await pool.fetch(sql.LIST_ALL, limit, offset)
                else:
                    found = await pool.fetch(sql.LIST_STATUS, limit, offset, status)
                return [await self._summary(pool, r) for r in found]
            # Running or interrupted depends on the session's lock, not only on its row.
            async def fetch(n: int, at: int) -> list[SessionSummary]:
                return [await self._summary(pool, r)
                        for r in await pool.fetch(sql.LIST_LIVE, n, at)]

            return await checks.filtered_page(fetch, status, limit, offset, _PAGE)
        except self._errors as exc:
            raise self._failed(exc) from exc

    async def _summary(self, pool: Any, r: Any) -> SessionSummary:
        status = "interrupted" if await self._interrupted(pool, r[0], r[3]) else r[3]
        return SessionSummary(r[0], r[1], r[2], status, r[4], r[5], r[6])

    async def handoff_stats(self, since: float | None = None,
                            until: float | None = None) -> HandoffStats:
        """Per route: requests, accepted, refusals by code, the share whose turn failed
        or went to a human, the median time the target took (see `stores.stats`).
        `since` (inclusive) and `until` (exclusive) are Unix times; None: unbounded.
        Computed in SQL over the `records_routes` index, in one snapshot."""
        lo, hi = stats.window(since, until)
        pool = await self._ready()
        try:
            async with pool.acquire() as conn, conn.transaction(isolation="repeatable_read",
                                                                readonly=True):
                routes = await conn.fetch(stats.POSTGRES_ROUTES, lo, hi)
                refused = await conn.fetch(stats.POSTGRES_REFUSED, lo, hi)
        except self._errors as exc:
            raise self._failed(exc) from exc
        medians = [(*r[:3], r[7]) for r in routes if r[7] is not None]
        return stats.from_sql(routes, refused, medians, since, until)

    # -- writes --------------------------------------------------------------------------

    async def commit(
        self, state: SessionState, since: Checkpoint, events: Sequence[Event] = ()
    ) -> None:
        """Append the messages, records and events past `since`; rewrite the header."""
        checks.session_id(state.id)
        # To its end even if this turn is cancelled meanwhile.
        await finish(self._commit(state, since, events))

    async def _commit(self, state: SessionState, since: Checkpoint,
                      events: Sequence[Event]) -> None:
        if rows.rough_size(state, since) > rows.LARGE:  # encode off the event loop
            w = await asyncio.to_thread(rows.encode_commit, state, since, events)
        else:
            w = rows.encode_commit(state, since, events)
        pool = self._pool or await self._ready()
        lease = self._sessions.lease(w.id)
        try:
            statement = (sql.UPDATE if w.marks else sql.UPDATE_ROWS) if w.expected else (
                sql.CREATE if w.marks else sql.INSERT)
            if w.final is None:
                found = await pool.fetchval(statement, *sql.params(w, lease))
            else:  # a turn that waited for approval ends: its earlier records too
                async with pool.acquire() as conn, conn.transaction():
                    found = await conn.fetchval(statement, *sql.params(w, lease))
                    if found is not None:
                        await conn.execute(sql.FINAL_OUTCOME, w.final[1], w.id, w.final[0])
        except self._errors as exc:
            raise self._write_failed(exc) from exc
        if found is None:
            raise await self._sessions.commit_error(pool, w, lease)
        self._full = None
        if w.expected == 0:
            self._sessions.inserted(w.id)
        rows.applied(state, w)
        self._cache.remember(state, w.header)

    def _write_failed(self, exc: BaseException) -> HandoffsError:
        """A write's failure as a store error; one for lack of space is remembered until a
        write succeeds (`check_ready`)."""
        err = self._failed(exc)
        if err.code in ("store_full", "store_write_failed"):
            self._full = err
        return err

    async def check_ready(self) -> None:
        """Raise the store's error if it cannot serve turns now: it does not answer, or
        its last write failed for lack of space and a write still does (tried with a
        64 KB row, rolled back)."""
        pool = self._pool or await self._ready()
        try:
            await pool.fetchval("SELECT 1")
            if self._full is not None:
                async with pool.acquire() as conn:
                    tr = conn.transaction()
                    await tr.start()
                    try:
                        await conn.execute(sql.WRITE_PROBE, rows.probe_body())
                    finally:
                        await tr.rollback()
                self._full = None
        except self._errors as exc:
            raise self._write_failed(exc) from exc

    async def delete(self, session_id: str) -> bool:
        """Remove the session and all its rows; False if there was none."""
        checks.session_id(session_id)
        self._cache.forget(session_id)
        pool = await self._ready()
        try:
            n: int = await finish(pool.fetchval(sql.DELETE, session_id))
        except self._errors as exc:
            raise self._write_failed(exc) from exc
        return n > 0

    # -- turn marks (stores.marks.MarkedStore) -------------------------------------------

    async def turn_marks(self, session_id: str) -> list[TurnMark]:
        """Where each recorded turn of the session began, by turn."""
        return await self._marks.turn_marks(session_id)

    async def read_prefix(self, session_id: str, messages: int, records: int
                          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The session's first messages and records (see `stores.marks.MarkedStore`)."""
        return await self._marks.read_prefix(session_id, messages, records)

    async def put_turn_marks(self, session_id: str, found: Sequence[TurnMark]) -> None:
        """Keep these marks for the session (a fork's, copied from its original)."""
        await self._marks.put_turn_marks(session_id, found)

    async def truncate(self, state: SessionState, mark: TurnMark) -> None:
        """Cut the session back to `mark` (see `stores.marks.MarkedStore.truncate`)."""
        await self._marks.truncate(state, mark)

    # -- export / import -----------------------------------------------------------------

    async def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session as a JSON-ready dict (`SessionState.to_dict()` plus `events`),
        with the status `load` reports."""
        checks.session_id(session_id)
        pool = await self._ready()
        try:
            row = await pool.fetchrow(sql.EXPORT, session_id)
            if row is None:
                return None
            state = await self._decoded(pool, session_id, row, 4)
        except self._errors as exc:
            raise self._failed(exc) from exc
        return rows.export_dict(state, json.loads(rows.wrap(row[3])))

    async def import_session(self, data: Mapping[str, Any] | str, *,
                             replace: bool = False) -> SessionState:
        """Store an `export_session` result (dict or JSON text) under its id.

        Raises `session_exists` if the id is taken, unless `replace=True`.
        """
        state, w = rows.import_write(data)
        self._cache.forget(state.id)
        pool = await self._ready()
        async with self.lock(state.id):
            await finish(self._import(pool, w, replace))
        return state

    async def _import(self, pool: Any, w: rows.Write, replace: bool) -> None:
        try:
            async with pool.acquire() as conn, conn.transaction():
                if replace:
                    await conn.fetchval(sql.DELETE, w.id)
                lease = self._sessions.lease(w.id)  # replaced: the row keeps our lease
                if await conn.fetchval(sql.INSERT, *sql.params(w, lease)) is None:
                    raise HandoffsError(f"Session {w.id!r} already exists; pass "
                                        "replace=True to overwrite it.",
                                        code="session_exists")
        except self._errors as exc:
            raise self._write_failed(exc) from exc

    async def close(self) -> None:
        """Close the pool and the lock connection (releasing any locks still held)."""
        self._closed = True
        pool, self._pool = self._pool, None
        await self._sessions.close()
        if pool is not None:
            await pool.close()

