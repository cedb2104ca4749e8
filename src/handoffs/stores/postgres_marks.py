"""The PostgreSQL store's turn marks (`stores.marks`): read, copy, and cut a session back."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..core.session import SessionState
from ..errors import HandoffsError
from . import checks, rows
from .cache import StateCache
from .locks import finish
from .marks import TurnMark, cut_header

if TYPE_CHECKING:
    from .postgres_lock import SessionLocks

READ = """
SELECT turn, messages, records, events, header FROM turns WHERE session_id = $1 ORDER BY turn
"""

PREFIX = """
SELECT (SELECT string_agg(body, ',' ORDER BY seq) FROM messages
          WHERE session_id = $1 AND seq < $2),
       (SELECT string_agg(body, ',' ORDER BY seq) FROM records
          WHERE session_id = $1 AND seq < $3)
"""

PUT = """
INSERT INTO turns (session_id, turn, messages, records, events, header)
VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (session_id, turn) DO UPDATE SET messages = excluded.messages,
  records = excluded.records, events = excluded.events, header = excluded.header
"""

CUT = """
WITH s AS (
  UPDATE sessions SET version = $3, active_agent = $4, status = $5, turn = $6, channel = $7,
    updated_at = $8, header = $9, messages = $10, records = $11
  WHERE id = $1 AND version = $2 AND ($14::bigint IS NULL OR lease = $14::bigint)
  RETURNING id
), m AS (DELETE FROM messages WHERE session_id IN (SELECT id FROM s) AND seq >= $10),
   r AS (DELETE FROM records WHERE session_id IN (SELECT id FROM s) AND seq >= $11),
   e AS (DELETE FROM events WHERE session_id IN (SELECT id FROM s) AND seq >= $12),
   k AS (DELETE FROM turns WHERE session_id IN (SELECT id FROM s) AND turn >= $13)
SELECT count(*) FROM s
"""
"""Cut a session back to a mark, if its version is still the expected one (and its lease
the one this process holds); the events counter stays, so no number is given twice."""


async def read_marks(pool: Any, session_id: str) -> list[TurnMark]:
    found = await pool.fetch(READ, session_id)
    return [TurnMark(int(t), int(m), int(r), int(e), h) for t, m, r, e, h in found]


async def put_marks(pool: Any, session_id: str, marks: Sequence[TurnMark]) -> None:
    async with pool.acquire() as conn, conn.transaction():
        await conn.executemany(PUT, [(session_id, m.turn, m.messages, m.records, m.events,
                                      m.header) for m in marks])


async def truncate(pool: Any, state: SessionState, expected: int, header: str,
                   mark: TurnMark, lease: int | None) -> bool:
    """True if the session was cut (False: its version or lease moved on)."""
    n: int = await pool.fetchval(
        CUT, state.id, expected, state.version, state.active_agent, state.status,
        state.turn, state.channel, state.updated_at, header, mark.messages, mark.records,
        mark.events, mark.turn, lease)
    return n > 0


class TurnMarksOnPostgres:
    """The turn marks of one `PostgresStore` (`stores.marks.MarkedStore`), which the store
    offers as its own. The store gives what they need of it when it builds them (so this
    module needs nothing of `postgres`): `ready` is its pool (opened on first use),
    `failed` and `write_failed` make a database error of a read or of a write a
    `HandoffsError`, `cache` holds the states it loaded (a cut session's is dropped) and
    `sessions` its session locks (a cut is made under the lease they hold; what a
    database call may raise is theirs: `SessionLocks.errors`)."""

    def __init__(self, ready: Callable[[], Awaitable[Any]],
                 failed: Callable[[BaseException], HandoffsError],
                 write_failed: Callable[[BaseException], HandoffsError], cache: StateCache,
                 sessions: SessionLocks) -> None:
        self.ready = ready
        self.failed = failed
        self.write_failed = write_failed
        self.cache = cache
        self.sessions = sessions

    async def turn_marks(self, session_id: str) -> list[TurnMark]:
        """Where each recorded turn of the session began, by turn."""
        pool = await self.ready()
        try:
            return await read_marks(pool, checks.session_id(session_id))
        except self.sessions.errors as exc:
            raise self.failed(exc) from exc

    async def read_prefix(self, session_id: str, messages: int, records: int
                          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The session's first messages and records (see `stores.marks.MarkedStore`)."""
        pool = await self.ready()
        try:
            row = await pool.fetchrow(PREFIX, checks.session_id(session_id), messages,
                                      records)
        except self.sessions.errors as exc:
            raise self.failed(exc) from exc
        return json.loads(rows.wrap(row[0])), json.loads(rows.wrap(row[1]))

    async def put_turn_marks(self, session_id: str, found: Sequence[TurnMark]) -> None:
        """Keep these marks for the session (a fork's, copied from its original)."""
        pool = await self.ready()
        try:
            await finish(put_marks(pool, checks.session_id(session_id), found))
        except self.sessions.errors as exc:
            raise self.write_failed(exc) from exc

    async def truncate(self, state: SessionState, mark: TurnMark) -> None:
        """Cut the session back to `mark` (see `stores.marks.MarkedStore.truncate`)."""
        checks.session_id(state.id)
        self.cache.forget(state.id)
        pool = await self.ready()
        expected = state.version
        header = cut_header(state)
        lease = self.sessions.lease(state.id)
        try:
            if not await finish(truncate(pool, state, expected, header, mark, lease)):
                raise rows.conflict(state.id, expected)
        except BaseException as exc:
            state.version = expected
            if isinstance(exc, self.sessions.errors):
                raise self.write_failed(exc) from exc
            raise

