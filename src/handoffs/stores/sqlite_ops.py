"""The SQLite store's database calls: plain functions over one connection.

They run on either of a store's connections (inline on the event loop's thread, or on
its worker thread), each in one transaction. `store_error` turns what sqlite3 raises
into a `StoreError` with a stable code and what to do.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from ..errors import HandoffsError, StoreError
from . import rows, stats
from .migrations import SCHEMA_VERSION, SQLITE, check_version

_INSERT_SESSION = (
    "INSERT INTO sessions (id, version, active_agent, status, turn, channel, created_at,"
    " updated_at, header, messages, records, events) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
)
_UPDATE_SESSION = (
    "UPDATE sessions SET version = ?, active_agent = ?, status = ?, turn = ?, channel = ?,"
    " updated_at = ?, header = ?, messages = ?, records = ?, events = ?"
    " WHERE id = ? AND version = ? RETURNING events"
)
_INSERT_MESSAGE = "INSERT INTO messages (session_id, seq, body) VALUES (?, ?, ?)"
_INSERT_RECORD = (
    "INSERT INTO records (session_id, seq, body, source, target, kind, accepted, rejection,"
    " at, turn, outcome, took) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_FINAL_OUTCOME = (
    "UPDATE records SET outcome = ? WHERE session_id = ? AND turn = ?"
    " AND outcome = 'waiting_for_approval'"
)
"""A turn that waited for approval has ended: its earlier records get its outcome."""
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
        rollback(conn)
        raise
    return found


def rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def busy(exc: BaseException) -> bool:
    """SQLITE_BUSY / SQLITE_LOCKED: another connection holds the write lock."""
    return getattr(exc, "sqlite_errorcode", None) in (5, 6) or "locked" in str(exc)


# -- the database calls: plain functions over a connection, run on either connection ---


def read(c: sqlite3.Connection, session_id: str, most: int | None
         ) -> tuple[str, int, int, str | None, str | None, int] | None:
    """The header and, when the session has at most `most` rows, its rows too; then the
    session's next event number."""
    c.execute("BEGIN")  # one snapshot for the three reads
    try:
        row = c.execute("SELECT header, messages, records, events FROM sessions WHERE id = ?",
                        (session_id,)).fetchone()
        if row is None:
            return None
        header, n_msgs, n_recs, n_events = row
        if most is not None and n_msgs + n_recs > most:
            return header, n_msgs, n_recs, None, None, n_events
        msgs, recs = read_rows(c, session_id, n_msgs, n_recs)
    finally:
        c.execute("COMMIT")
    return header, n_msgs, n_recs, msgs, recs, n_events


def head(c: sqlite3.Connection, session_id: str) -> tuple[int, int, int] | None:
    """The stored version and row counts: enough to tell whether a cached state is current."""
    row = c.execute("SELECT version, messages, records FROM sessions WHERE id = ?",
                    (session_id,)).fetchone()
    return None if row is None else (int(row[0]), int(row[1]), int(row[2]))


def read_rows(c: sqlite3.Connection, session_id: str, n_msgs: int, n_recs: int
               ) -> tuple[str, str]:
    """Rows below the header's counts: rows are append-only, so this matches the header
    even when read in a later snapshot than the header."""
    msgs = c.execute("SELECT body FROM messages WHERE session_id = ? AND seq < ? ORDER BY seq",
                     (session_id, n_msgs)).fetchall()
    recs = c.execute("SELECT body FROM records WHERE session_id = ? AND seq < ? ORDER BY seq",
                     (session_id, n_recs)).fetchall()
    return rows.join([m[0] for m in msgs]), rows.join([r[0] for r in recs])


_LIST = ("SELECT id, active_agent, turn, status, created_at, updated_at, messages"
         " FROM sessions {} ORDER BY updated_at DESC, id LIMIT ? OFFSET ?")
_LIST_ALL = _LIST.format("")
_LIST_STATUS = _LIST.format("WHERE status = ?")
_LIST_LIVE = _LIST.format("WHERE status IN ('running', 'interrupted')")


def list_rows(c: sqlite3.Connection, limit: int, offset: int, status: str | None = None
              ) -> list[Any]:
    """Sessions' listing columns, most recent first: all, those whose stored status is
    `status`, or (status `live`) those stored as running or interrupted."""
    if status is None:
        return c.execute(_LIST_ALL, (limit, offset)).fetchall()
    if status == "live":
        return c.execute(_LIST_LIVE, (limit, offset)).fetchall()
    return c.execute(_LIST_STATUS, (status, limit, offset)).fetchall()


_MARK_BEFORE = (
    "INSERT OR REPLACE INTO turns (session_id, turn, messages, records, events, header)"
    " SELECT id, ?, messages, records, events, header FROM sessions"
    " WHERE id = ? AND version = ? AND turn < ?"
)
"""A commit that starts a turn keeps the session as it stood before (`stores.marks`)."""
_MARK_FIRST = "INSERT OR REPLACE INTO turns VALUES (?, ?, 0, 0, 0, NULL)"


def write(c: sqlite3.Connection, w: rows.Write, replace: bool = False) -> None:
    c.execute("BEGIN IMMEDIATE")
    try:
        if replace:
            delete_rows(c, w.id)
        if w.marks and w.turn > 0:
            if w.expected == 0:
                c.execute(_MARK_FIRST, (w.id, w.turn))
            else:
                c.execute(_MARK_BEFORE, (w.turn, w.id, w.expected, w.turn))
        if w.expected == 0:
            try:
                c.execute(_INSERT_SESSION, (
                    w.id, w.version, w.active_agent, w.status, w.turn, w.channel,
                    w.created_at, w.updated_at, w.header, w.message_count,
                    w.record_count, w.first_event + len(w.events)))
            except sqlite3.IntegrityError as exc:
                raise rows.conflict(w.id, 0) from exc
        else:
            found = c.execute(_UPDATE_SESSION, (
                w.version, w.active_agent, w.status, w.turn, w.channel, w.updated_at,
                w.header, w.message_count, w.record_count, w.first_event + len(w.events),
                w.id, w.expected)).fetchall()
            if not found:
                raise rows.conflict(w.id, w.expected)
        first_event = w.first_event
        sid = w.id
        if w.messages:
            c.executemany(_INSERT_MESSAGE, [
                (sid, w.first_message + i, b) for i, b in enumerate(w.messages)])
        if w.records:
            c.executemany(_INSERT_RECORD, [
                (sid, w.first_record + i, b, *cols)
                for i, (b, cols) in enumerate(zip(w.records, w.stats, strict=True))])
        if w.events:
            c.executemany(_INSERT_EVENT, [
                (sid, first_event + i, turn, type_, at, body)
                for i, (turn, type_, at, body) in enumerate(w.events)])
        if w.final is not None:
            c.execute(_FINAL_OUTCOME, (w.final[1], sid, w.final[0]))
        c.execute("COMMIT")
    except BaseException:
        rollback(c)
        raise


def delete_rows(c: sqlite3.Connection, session_id: str) -> bool:
    c.execute("DELETE FROM turns WHERE session_id = ?", (session_id,))
    for table in ("messages", "records", "events"):
        c.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))
    return bool(c.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0)


def delete(c: sqlite3.Connection, session_id: str) -> bool:
    c.execute("BEGIN IMMEDIATE")
    try:
        existed = delete_rows(c, session_id)
        c.execute("COMMIT")
    except BaseException:
        rollback(c)
        raise
    return existed


def export(c: sqlite3.Connection, session_id: str) -> tuple[str, str, str, str] | None:
    c.execute("BEGIN")
    try:
        row = c.execute("SELECT header, messages, records FROM sessions WHERE id = ?",
                        (session_id,)).fetchone()
        if row is None:
            return None
        msgs, recs = read_rows(c, session_id, row[1], row[2])
        evs = c.execute("SELECT body FROM events WHERE session_id = ? ORDER BY seq",
                        (session_id,)).fetchall()
    finally:
        c.execute("COMMIT")
    return row[0], msgs, recs, rows.join([e[0] for e in evs])


def event_count(c: sqlite3.Connection, session_id: str) -> int:
    """The session's next event number (0: no session): one past its last stored event."""
    row = c.execute("SELECT events FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return int(row[0]) if row is not None else 0


def events_after(c: sqlite3.Connection, session_id: str, after: int, limit: int
                 ) -> list[tuple[int, str]]:
    return c.execute("SELECT seq, body FROM events WHERE session_id = ? AND seq > ? "
                     "ORDER BY seq LIMIT ?", (session_id, after, limit)).fetchall()


def write_lock_free(c: sqlite3.Connection) -> None:
    """Take the write lock and let it go at once (SQLITE_BUSY when another connection
    holds it and `c` does not wait): whether a write could begin now."""
    c.execute("BEGIN IMMEDIATE")
    c.execute("ROLLBACK")


def probe_write(c: sqlite3.Connection) -> None:
    """Write (and then remove) a 64 KB row no session owns: whether a write has room."""
    c.execute("BEGIN IMMEDIATE")
    try:
        c.execute(_INSERT_EVENT, ("", -1, 0, "probe", 0.0, rows.probe_body()))
        c.execute("COMMIT")
    except BaseException:
        rollback(c)
        raise
    c.execute("DELETE FROM events WHERE session_id = '' AND seq = -1")


def checkpoint(c: sqlite3.Connection) -> None:
    c.execute("PRAGMA wal_checkpoint(PASSIVE)")


def encode_and_write(c: sqlite3.Connection, state: Any, since: Any, events: Any
                     ) -> rows.Write:
    """Encode a large commit and write it, both on the worker thread."""
    w = rows.encode_commit(state, since, events)
    write(c, w)
    return w


# -- errors ------------------------------------------------------------------------------

_READONLY, _CORRUPT, _NOTADB, _BUSY, _LOCKED, _FULL = 8, 11, 26, 5, 6, 13
_IOERR_WRITE = 10 | 3 << 8
_UNAVAILABLE = {3, 10, 14, 23}  # SQLITE_PERM, IOERR, CANTOPEN, AUTH


def store_error(exc: sqlite3.Error, where: str) -> HandoffsError:
    """What sqlite3 raised, as a `StoreError` with a stable code and what to do."""
    code = getattr(exc, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary == _READONLY or "readonly" in str(exc):
        return StoreError(
            f"{where} is read-only ({exc}); nothing was written. Open a file this process "
            "may write (check the file's and its directory's permissions and the mount), "
            "or use this one only to read sessions.", code="store_read_only")
    if primary in (_CORRUPT, _NOTADB) or type(exc) is sqlite3.DatabaseError:
        return StoreError(
            f"{where} is not a handoffs SQLite database, or it is damaged ({exc}); "
            "nothing was written to it. Point the store at another file, and keep this "
            "one for inspection.", code="store_corrupt")
    if primary in (_BUSY, _LOCKED):
        return StoreError(
            f"{where} stayed locked by another writer for too long ({exc}); nothing was "
            "written. Retry later, and check for a process holding a long transaction.",
            code="store_busy")
    if primary == _FULL:
        return StoreError(f"{where}: the disk is full ({exc}); nothing was written. "
                          "Free some space on its disk and retry.", code="store_full")
    if code == _IOERR_WRITE:
        return StoreError(
            f"{where}: the system refused a write ({exc}: a disk error, or a limit on the "
            "size of files); nothing was written. Check the disk and the process's "
            "limits (ulimit -f), and retry.", code="store_write_failed")
    if primary in _UNAVAILABLE or isinstance(exc, sqlite3.OperationalError):
        return StoreError(
            f"Cannot use {where[:1].lower()}{where[1:]} ({exc}); nothing was written. "
            "Check that the path exists and this process may read and write it.",
            code="store_unavailable")
    return StoreError(f"{where} failed ({type(exc).__name__}: {exc}); nothing was "
                      "written.", code="store_error")


def handoff_stats(c: sqlite3.Connection, lo: float, hi: float
                  ) -> tuple[list[Any], list[Any], list[Any]]:
    """The `stores.stats` queries over the records of `[lo, hi)`, in one snapshot:
    routes, refusals, and each route's median time (from its middle rows)."""
    c.execute("BEGIN")
    try:
        routes = c.execute(stats.SQLITE_ROUTES, (lo, hi)).fetchall()
        refused = c.execute(stats.SQLITE_REFUSED, (lo, hi)).fetchall()
        medians = []
        for source, target, kind, *_, timed in routes:
            if timed:
                middle = c.execute(stats.SQLITE_MIDDLE, (
                    source, target, kind, lo, hi, 2 - timed % 2, (timed - 1) // 2)).fetchall()
                medians.append((source, target, kind, sum(r[0] for r in middle) / len(middle)))
    finally:
        c.execute("COMMIT")
    return routes, refused, medians


def wal(conn: sqlite3.Connection, tries: int = 100) -> None:
    """Put the database in WAL mode. Switching needs the file to itself, and SQLite
    answers `database is locked` at once (no busy wait) while another process writes, as
    when several processes open a new database together: it is retried for a few
    seconds; a database already in WAL mode needs nothing."""
    for i in range(tries):
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                return
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or i == tries - 1:
                raise
            time.sleep(0.05)
