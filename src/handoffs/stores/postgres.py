"""PostgresStore: durable sessions in PostgreSQL, for production and many processes.

    runner = Runner(team, store="postgresql://user@host/db")   # or PostgresStore(dsn)

Needs `asyncpg` (`pip install 'handoffs[postgres]'`). The pool opens on first use; the
schema is created or migrated forward then. `?schema=name` in the URL (or `schema=`)
keeps the tables in that schema, created if missing.

Each operation is one statement, so one round trip: a load reads the header and both
row sets in one query; a commit is one statement whose CTEs update the header (only if
its version is still the expected one) and insert the new rows.

Turns on one session are serialised across processes and machines with a session-level
advisory lock (`pg_try_advisory_lock` on a 63-bit hash of the schema and session id),
all held on one dedicated connection per store: a thousand sessions mid-turn cost one
connection, not a thousand, and the server drops the locks the moment a process dies.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..core.events import Event
from ..core.session import Checkpoint, SessionState
from ..errors import HandoffsError
from . import rows
from .base import SessionSummary
from .cache import StateCache
from .locks import KeyedLocks, lock_key, poll
from .migrations import POSTGRES, SCHEMA_VERSION, check_version

_MIGRATION_LOCK = 0x68616E646F6666  # "handoff": serialises migrations across processes

_HEAD = "SELECT version, messages, records FROM sessions WHERE id = $1"

_LOAD = """
SELECT s.header,
  (SELECT string_agg(m.body, ',' ORDER BY m.seq) FROM messages m
    WHERE m.session_id = s.id AND m.seq < s.messages),
  (SELECT string_agg(r.body, ',' ORDER BY r.seq) FROM records r
    WHERE r.session_id = s.id AND r.seq < s.records)
FROM sessions s WHERE s.id = $1
"""

_EXPORT = """
SELECT s.header,
  (SELECT string_agg(m.body, ',' ORDER BY m.seq) FROM messages m
    WHERE m.session_id = s.id AND m.seq < s.messages),
  (SELECT string_agg(r.body, ',' ORDER BY r.seq) FROM records r
    WHERE r.session_id = s.id AND r.seq < s.records),
  (SELECT string_agg(e.body, ',' ORDER BY e.seq) FROM events e WHERE e.session_id = s.id)
FROM sessions s WHERE s.id = $1
"""

_ROWS = """
, m AS (
  INSERT INTO messages (session_id, seq, body)
  SELECT $1, $13::bigint + u.o - 1, u.b FROM s, unnest($14::text[]) WITH ORDINALITY AS u(b, o)
), r AS (
  INSERT INTO records (session_id, seq, body)
  SELECT $1, $15::bigint + u.o - 1, u.b FROM s, unnest($16::text[]) WITH ORDINALITY AS u(b, o)
), e AS (
  INSERT INTO events (session_id, seq, turn, type, at, body)
  SELECT $1, s.events - $12::bigint + u.o - 1, u.t, u.y, u.a, u.b
  FROM s, unnest($17::bigint[], $18::text[], $19::float8[], $20::text[])
    WITH ORDINALITY AS u(t, y, a, b, o)
)
SELECT events FROM s
"""

_UPDATE = """
WITH s AS (
  UPDATE sessions SET version = $3, active_agent = $4, status = $5, turn = $6, channel = $7,
    updated_at = $8, header = $9, messages = $10, records = $11,
    events = events + $12::bigint, created_at = $21
  WHERE id = $1 AND version = $2 RETURNING events
)""" + _ROWS

_INSERT = """
WITH s AS (
  INSERT INTO sessions (id, version, active_agent, status, turn, channel, created_at,
    updated_at, header, messages, records, events)
  SELECT $1, $3, $4, $5, $6, $7, $21, $8, $9, $10, $11, $12::bigint WHERE $2::bigint = 0
  ON CONFLICT (id) DO NOTHING RETURNING events
)""" + _ROWS

_DELETE = """
WITH a AS (DELETE FROM messages WHERE session_id = $1),
     b AS (DELETE FROM records WHERE session_id = $1),
     c AS (DELETE FROM events WHERE session_id = $1),
     s AS (DELETE FROM sessions WHERE id = $1 RETURNING 1)
SELECT count(*) FROM s
"""

_LIST = """
SELECT id, active_agent, turn, status, created_at, updated_at, messages FROM sessions
ORDER BY updated_at DESC, id LIMIT $1 OFFSET $2
"""

_PROBE = ("SELECT CASE WHEN pg_try_advisory_lock($1) THEN pg_advisory_unlock($1) "
          "ELSE false END")

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def _split_dsn(dsn: str, schema: str | None) -> tuple[str, str | None]:
    """Take `schema=` out of the URL's query (asyncpg would send it as a setting)."""
    parts = urlsplit(dsn)
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(k, v) for k, v in query if k != "schema"]
    for k, v in query:
        if k == "schema" and schema is None:
            schema = v
    if schema is not None and not _IDENT.match(schema):
        raise HandoffsError(f"Invalid schema name {schema!r}: use letters, digits and _.",
                            code="invalid_store")
    return urlunsplit(parts._replace(query=urlencode(kept))), schema


async def _no_reset(conn: Any) -> None:
    """Pooled connections keep no state between uses (every call is one statement, the
    only transaction is scoped), so skip asyncpg's reset round trip on each release."""


def _params(w: rows.Write) -> tuple[Any, ...]:
    ev = w.events
    return (
        w.id, w.expected, w.version, w.active_agent, w.status, w.turn, w.channel,
        w.updated_at, w.header, w.message_count, w.record_count, len(ev),
        w.first_message, w.messages, w.first_record, w.records,
        [e[0] for e in ev], [e[1] for e in ev], [e[2] for e in ev], [e[3] for e in ev],
        w.created_at,
    )


class PostgresStore:
    """Sessions in PostgreSQL, shared by every process and machine that reaches it.

    `dsn` is a `postgresql://` URL; `schema` (or `?schema=` in it) selects the schema,
    `min_size`/`max_size` the pool, `lock_timeout` how long a turn waits for another turn
    on the same session (None: as long as it takes). Nothing connects until first use.
    """

    def __init__(self, dsn: str, *, schema: str | None = None, min_size: int = 1,
                 max_size: int = 10, lock_timeout: float | None = None,
                 cache_size: int = 256) -> None:
        self.dsn, self.schema = _split_dsn(dsn, schema)
        self.min_size = min_size
        self.max_size = max_size
        self.lock_timeout = lock_timeout
        self._pool: Any = None
        self._lock_conn: Any = None
        self._lock_guard: asyncio.Lock | None = None
        self._opening: asyncio.Lock | None = None
        self._locks = KeyedLocks()
        self._held: set[str] = set()
        self._cache = StateCache(cache_size)
        self._tasks: set[asyncio.Future[None]] = set()
        self._closed = False
        self._namespace = self.schema or ""

    def __repr__(self) -> str:
        parts = urlsplit(self.dsn)
        host = parts.hostname or "localhost"
        return f"PostgresStore('{parts.scheme}://{host}{parts.path}', schema={self.schema!r})"

    # -- connections ---------------------------------------------------------------------

    def _settings(self) -> dict[str, str]:
        return {"search_path": self.schema} if self.schema else {}

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
            raise HandoffsError("PostgresStore needs asyncpg: pip install 'handoffs[postgres]'.",
                                code="store_unavailable") from exc
        try:
            conn = await asyncpg.connect(self.dsn)
        except (OSError, asyncpg.PostgresError) as exc:
            raise HandoffsError(f"Cannot reach PostgreSQL at {self!r}: {exc}",
                                code="store_unavailable") from exc
        try:
            await self._migrate(conn)
        finally:
            await conn.close()
        return await asyncpg.create_pool(self.dsn, min_size=self.min_size,
                                         max_size=self.max_size, reset=_no_reset,
                                         server_settings=self._settings())

    async def _migrate(self, conn: Any, target: int = SCHEMA_VERSION) -> int:
        """Bring the schema to version `target`; returns the version found."""
        where = f"The PostgreSQL schema {self.schema or 'public'!r}"
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", _MIGRATION_LOCK)
            if self.schema:
                await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
                await conn.execute(f'SET LOCAL search_path TO "{self.schema}"')
            found = 0
            if await conn.fetchval("SELECT to_regclass('handoffs_schema') IS NOT NULL"):
                found = await conn.fetchval("SELECT version FROM handoffs_schema WHERE id = 1")
                found = int(found or 0)
            check_version(found, where)
            for step in POSTGRES[found:target]:
                for statement in step:
                    await conn.execute(statement)
            if target > found:
                await conn.execute(
                    "INSERT INTO handoffs_schema (id, version) VALUES (1, $1) ON CONFLICT (id)"
                    " DO UPDATE SET version = excluded.version", target)
        return int(found)

    async def _locker(self) -> Any:
        """The connection that holds this store's advisory locks (reopened if lost)."""
        conn = self._lock_conn
        if conn is None or conn.is_closed():
            import asyncpg

            await self._ready()
            conn = self._lock_conn = await asyncpg.connect(self.dsn)
        return conn

    # -- locking -------------------------------------------------------------------------

    @asynccontextmanager
    async def lock(self, session_id: str) -> AsyncIterator[None]:
        """Hold the session for a turn, across processes and machines."""
        async with self._locks.hold(session_id):
            key = lock_key(session_id, self._namespace)
            if self._lock_guard is None:
                self._lock_guard = asyncio.Lock()
            guard = self._lock_guard

            async def take() -> bool:
                async with guard:
                    conn = await self._locker()
                    try:
                        got: bool = await conn.fetchval("SELECT pg_try_advisory_lock($1)", key)
                    except asyncio.CancelledError:
                        # The server may have granted it: give it back whatever happened.
                        task = asyncio.ensure_future(self._unlock(conn, key))
                        self._tasks.add(task)
                        task.add_done_callback(self._tasks.discard)
                        raise
                    return got

            await poll(take, f"Session {session_id!r}", self.lock_timeout)
            conn = self._lock_conn
            self._held.add(session_id)
            try:
                yield
            finally:
                self._held.discard(session_id)
                # Shielded: a cancelled turn must not leave its session locked.
                await asyncio.shield(self._unlock(conn, key))

    async def _unlock(self, conn: Any, key: int) -> None:
        if conn is None or conn.is_closed():
            return  # the server dropped the connection, and its locks with it
        assert self._lock_guard is not None
        async with self._lock_guard:
            await conn.execute("SELECT pg_advisory_unlock($1)", key)

    async def _interrupted(self, pool: Any, session_id: str, status: str) -> bool:
        if status != "running" or session_id in self._held:
            return False
        free: bool = await pool.fetchval(_PROBE, lock_key(session_id, self._namespace))
        return free

    # -- reads ---------------------------------------------------------------------------

    async def load(self, session_id: str) -> SessionState | None:
        """The stored session, or None. Outside a turn, a turn that died shows as
        status `interrupted`; the next `run` answers its message first.

        The state this store last committed is returned as it is (no rows read) while the
        database still holds that version (see `stores.cache`)."""
        pool = self._pool or await self._ready()
        cached = self._cache.candidate(session_id)
        if cached is not None and cached.status != "running":
            head = await pool.fetchrow(_HEAD, session_id)
            if head is not None and StateCache.current(cached, head[0], head[1], head[2]):
                return cached
            self._cache.forget(session_id)
        row = await pool.fetchrow(_LOAD, session_id)
        if row is None:
            return None
        state = rows.decode(row[0], rows.wrap(row[1]), rows.wrap(row[2]))
        if await self._interrupted(pool, session_id, state.status):
            state.status = "interrupted"
        return state

    async def list_sessions(self, limit: int = 50, offset: int = 0) -> list[SessionSummary]:
        """Sessions, most recently updated first."""
        pool = await self._ready()
        found = await pool.fetch(_LIST, limit, offset)
        out: list[SessionSummary] = []
        for r in found:
            status = r[3]
            if await self._interrupted(pool, r[0], status):
                status = "interrupted"
            out.append(SessionSummary(r[0], r[1], r[2], status, r[4], r[5], r[6]))
        return out

    # -- writes --------------------------------------------------------------------------

    async def commit(
        self, state: SessionState, since: Checkpoint, events: Sequence[Event] = ()
    ) -> None:
        """Append the messages, records and events past `since`; rewrite the header."""
        w = rows.encode_commit(state, since, events)
        pool = self._pool or await self._ready()
        found = await pool.fetchval(_INSERT if w.expected == 0 else _UPDATE, *_params(w))
        if found is None:
            raise rows.conflict(w.id, w.expected)
        rows.applied(state, w)
        self._cache.remember(state, w.header)

    async def delete(self, session_id: str) -> bool:
        """Remove the session and all its rows; False if there was none."""
        self._cache.forget(session_id)
        pool = await self._ready()
        n: int = await pool.fetchval(_DELETE, session_id)
        return n > 0

    # -- export / import -----------------------------------------------------------------

    async def export_session(self, session_id: str) -> dict[str, Any] | None:
        """The session as a JSON-ready dict (`SessionState.to_dict()` plus `events`)."""
        pool = await self._ready()
        row = await pool.fetchrow(_EXPORT, session_id)
        if row is None:
            return None
        state = rows.decode(row[0], rows.wrap(row[1]), rows.wrap(row[2]))
        return rows.export_dict(state, json.loads(rows.wrap(row[3])))

    async def import_session(self, data: Mapping[str, Any] | str, *,
                             replace: bool = False) -> SessionState:
        """Store an `export_session` result (dict or JSON text) under its id.

        Raises `session_exists` if the id is taken, unless `replace=True`.
        """
        state, w = rows.import_write(data)
        self._cache.forget(state.id)
        pool = await self._ready()
        async with self.lock(state.id), pool.acquire() as conn, conn.transaction():
            if replace:
                await conn.fetchval(_DELETE, state.id)
            if await conn.fetchval(_INSERT, *_params(w)) is None:
                raise HandoffsError(f"Session {state.id!r} already exists; pass "
                                    "replace=True to overwrite it.", code="session_exists")
        return state

    async def close(self) -> None:
        """Close the pool and the lock connection (releasing any locks still held)."""
        self._closed = True
        pool, self._pool = self._pool, None
        conn, self._lock_conn = self._lock_conn, None
        if conn is not None and not conn.is_closed():
            await conn.close()
        if pool is not None:
            await pool.close()
