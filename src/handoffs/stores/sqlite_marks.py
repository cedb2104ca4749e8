"""The SQLite store's turn marks (`stores.marks`): read, copy, and cut a session back."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from ..core.session import SessionState
from . import checks, rows
from .cache import StateCache
from .locks import finish
from .marks import TurnMark, cut_header
from .sqlite_ops import read_rows, rollback

T = TypeVar("T")


def read_marks(c: sqlite3.Connection, session_id: str) -> list[TurnMark]:
    found = c.execute("SELECT turn, messages, records, events, header FROM turns"
                      " WHERE session_id = ? ORDER BY turn", (session_id,)).fetchall()
    return [TurnMark(int(t), int(m), int(r), int(e), h) for t, m, r, e, h in found]


def put_marks(c: sqlite3.Connection, session_id: str, marks: Sequence[TurnMark]) -> None:
    c.execute("BEGIN IMMEDIATE")
    try:
        c.executemany("INSERT OR REPLACE INTO turns VALUES (?, ?, ?, ?, ?, ?)", [
            (session_id, m.turn, m.messages, m.records, m.events, m.header) for m in marks])
        c.execute("COMMIT")
    except BaseException:
        rollback(c)
        raise


def truncate(c: sqlite3.Connection, state: SessionState, expected: int, header: str,
             mark: TurnMark) -> None:
    """Cut the rows past `mark` and write `state`'s header, if the version is `expected`
    (the events counter stays: numbers are never given twice)."""
    sid = state.id
    c.execute("BEGIN IMMEDIATE")
    try:
        found = c.execute(
            "UPDATE sessions SET version = ?, active_agent = ?, status = ?, turn = ?,"
            " channel = ?, updated_at = ?, header = ?, messages = ?, records = ?"
            " WHERE id = ? AND version = ? RETURNING 1",
            (state.version, state.active_agent, state.status, state.turn, state.channel,
             state.updated_at, header, mark.messages, mark.records, sid, expected),
        ).fetchall()
        if not found:
            raise rows.conflict(sid, expected)
        for table, count in (("messages", mark.messages), ("records", mark.records),
                             ("events", mark.events)):
            c.execute(f"DELETE FROM {table} WHERE session_id = ? AND seq >= ?", (sid, count))
        c.execute("DELETE FROM turns WHERE session_id = ? AND turn >= ?", (sid, mark.turn))
        c.execute("COMMIT")
    except BaseException:
        rollback(c)
        raise


class TurnMarksOnSQLite:
    """`SQLiteStore`'s turn marks (`stores.marks.MarkedStore`)."""

    _cache: StateCache

    if TYPE_CHECKING:
        async def _worker(self, fn: Callable[..., T], *args: Any) -> T: ...

    async def turn_marks(self, session_id: str) -> list[TurnMark]:
        """Where each recorded turn of the session began, by turn."""
        return await self._worker(read_marks, checks.session_id(session_id))

    async def read_prefix(self, session_id: str, messages: int, records: int
                          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The session's first messages and records (see `stores.marks.MarkedStore`)."""
        msgs, recs = await self._worker(read_rows, checks.session_id(session_id), messages,
                                        records)
        return json.loads(msgs), json.loads(recs)

    async def put_turn_marks(self, session_id: str, found: Sequence[TurnMark]) -> None:
        """Keep these marks for the session (a fork's, copied from its original)."""
        await finish(self._worker(put_marks, checks.session_id(session_id), found))

    async def truncate(self, state: SessionState, mark: TurnMark) -> None:
        """Cut the session back to `mark` (see `stores.marks.MarkedStore.truncate`)."""
        checks.session_id(state.id)
        expected = state.version
        header = cut_header(state)
        self._cache.forget(state.id)
        try:
            await finish(self._worker(truncate, state, expected, header, mark))
        except BaseException:
            state.version = expected
            raise

