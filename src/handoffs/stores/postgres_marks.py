"""The PostgreSQL store's turn marks (`stores.marks`): read, copy, and cut a session back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.session import SessionState
from .marks import TurnMark

READ = """
SELECT turn, messages, records, events, header FROM turns WHERE session_id = $1 ORDER BY turn
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
