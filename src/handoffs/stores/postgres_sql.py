"""The PostgreSQL store's SQL, URL handling and error translation.

Each store operation is one statement, so one round trip: a load reads the header and
both row sets in one query; a commit is one statement whose CTEs update the header (only
if its version is still the expected one) and insert the new rows.
"""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from ..errors import HandoffsError, StoreError
from . import rows
from .migrations import POSTGRES, SCHEMA_VERSION, check_version

MIGRATION_LOCK = 0x68616E646F6666  # "handoff": serialises migrations across processes

HEAD = "SELECT version, messages, records FROM sessions WHERE id = $1"

EVENT_COUNT = "SELECT events FROM sessions WHERE id = $1"
"""The session's next event number: one past its last stored event (see `_ROWS`)."""

EVENTS_AFTER = """
SELECT seq, body FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3
"""

NOTIFY_CHANNEL = "handoffs_events"
"""A commit that stores events notifies this channel (in its transaction, so listeners
hear of it once it is visible) with a JSON object: `schema` (the schema its tables are
in, `current_schema()`: apps that share a database under different `?schema=` tell
their notifications apart), `session_id`, and `events`, the session's event count. A
wake-up, not data."""

LOAD = """
SELECT s.header,
  (SELECT string_agg(m.body, ',' ORDER BY m.seq) FROM messages m
    WHERE m.session_id = s.id AND m.seq < s.messages),
  (SELECT string_agg(r.body, ',' ORDER BY r.seq) FROM records r
    WHERE r.session_id = s.id AND r.seq < s.records),
  s.events
FROM sessions s WHERE s.id = $1
"""

EXPORT = """
SELECT s.header,
  (SELECT string_agg(m.body, ',' ORDER BY m.seq) FROM messages m
    WHERE m.session_id = s.id AND m.seq < s.messages),
  (SELECT string_agg(r.body, ',' ORDER BY r.seq) FROM records r
    WHERE r.session_id = s.id AND r.seq < s.records),
  (SELECT string_agg(e.body, ',' ORDER BY e.seq) FROM events e WHERE e.session_id = s.id),
  s.events
FROM sessions s WHERE s.id = $1
"""

_ROWS = """
, m AS (
  INSERT INTO messages (session_id, seq, body)
  SELECT $1, $13::bigint + u.o - 1, u.b FROM s, unnest($14::text[]) WITH ORDINALITY AS u(b, o)
), r AS (
  INSERT INTO records (session_id, seq, body, source, target, kind, accepted, rejection, at,
    turn, outcome, took)
  SELECT $1, $15::bigint + u.o - 1, u.b, u.src, u.dst, u.kind, u.ok, u.code, u.at, u.turn,
    u.outcome, u.took
  FROM s, unnest($16::text[], $22::text[], $23::text[], $24::text[], $25::boolean[],
    $26::text[], $27::float8[], $28::bigint[], $29::text[], $30::float8[])
    WITH ORDINALITY AS u(b, src, dst, kind, ok, code, at, turn, outcome, took, o)
), e AS (
  INSERT INTO events (session_id, seq, turn, type, at, body)
  SELECT $1, $31::bigint + u.o - 1, u.t, u.y, u.a, u.b
  FROM s, unnest($17::bigint[], $18::text[], $19::float8[], $20::text[])
    WITH ORDINALITY AS u(t, y, a, b, o)
)
SELECT s.events, CASE WHEN $12::bigint > 0
  THEN pg_notify('handoffs_events', json_build_object('schema', current_schema(),
    'session_id', $1::text, 'events', s.events)::text) END FROM s
"""

FINAL_OUTCOME = """
UPDATE records SET outcome = $1
WHERE session_id = $2 AND turn = $3 AND outcome = 'waiting_for_approval'"""
"""A turn that waited for approval has ended: its earlier records get its outcome."""

_UPDATE_HEAD = """
WITH s AS (
  UPDATE sessions SET version = $3, active_agent = $4, status = $5, turn = $6, channel = $7,
    updated_at = $8, header = $9, messages = $10, records = $11,
    events = $31::bigint + $12::bigint, created_at = $21
  WHERE id = $1 AND version = $2 AND ($32::bigint IS NULL OR lease = $32::bigint)
  RETURNING events
)"""
_MARK = """
  ON CONFLICT (session_id, turn) DO UPDATE SET messages = excluded.messages,
    records = excluded.records, events = excluded.events, header = excluded.header
)"""
UPDATE_ROWS = _UPDATE_HEAD + _ROWS
"""A commit within a turn: the header and the new rows."""
UPDATE = _UPDATE_HEAD + """
, k AS (
  INSERT INTO turns (session_id, turn, messages, records, events, header)
  SELECT o.id, $6, o.messages, o.records, o.events, o.header FROM sessions o, s
  WHERE o.id = $1 AND o.turn < $6::bigint""" + _MARK + _ROWS
"""The version must still be the expected one, and, when this process holds the
session's lock, its lease ($32) must still be the one taken with the lock: a process
that lost the lock (a dropped connection) can no longer write, even a commit already on
its way when another process took the session (`PostgresStore.lock`)."""

_INSERT_HEAD = """
WITH s AS (
  INSERT INTO sessions (id, version, active_agent, status, turn, channel, created_at,
    updated_at, header, messages, records, events, lease)
  SELECT $1, $3, $4, $5, $6, $7, $21, $8, $9, $10, $11, $31::bigint + $12::bigint,
    coalesce($32::bigint, 0)
  WHERE $2::bigint = 0
  ON CONFLICT (id) DO NOTHING RETURNING events
)"""
INSERT = _INSERT_HEAD + _ROWS
"""An import: a new session with its rows, and no turn mark."""
CREATE = _INSERT_HEAD + """
, k AS (
  INSERT INTO turns (session_id, turn, messages, records, events, header)
  SELECT $1, $6, 0, 0, 0, NULL FROM s WHERE $6::bigint > 0""" + _MARK + _ROWS
"""A commit that creates the session; in its first turn, with that turn's (empty) mark
(`stores.marks`). `UPDATE` keeps the mark of a turn it starts: the row as it stood."""

DELETE = """
WITH a AS (DELETE FROM messages WHERE session_id = $1),
     b AS (DELETE FROM records WHERE session_id = $1),
     c AS (DELETE FROM events WHERE session_id = $1),
     d AS (DELETE FROM turns WHERE session_id = $1),
     s AS (DELETE FROM sessions WHERE id = $1 RETURNING 1)
SELECT count(*) FROM s
"""

_LIST = """
SELECT id, active_agent, turn, status, created_at, updated_at, messages FROM sessions
{} ORDER BY updated_at DESC, id LIMIT $1 OFFSET $2
"""
LIST_ALL = _LIST.format("")
LIST_STATUS = _LIST.format("WHERE status = $3")
LIST_LIVE = _LIST.format("WHERE status IN ('running', 'interrupted')")

LEASE = "SELECT lease FROM sessions WHERE id = $1"

BUMP = "UPDATE sessions SET lease = lease + 1 WHERE id = $1 RETURNING lease"

WRITE_PROBE = """
INSERT INTO events (session_id, seq, turn, type, at, body) VALUES ('', -1, 0, 'probe', 0, $1)
"""
"""A row no session owns (a session id is never empty), written and rolled back to see
whether the database has room again after a write failed for lack of it."""

PROBE = ("SELECT CASE WHEN pg_try_advisory_lock($1) THEN pg_advisory_unlock($1) "
          "ELSE false END")

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")


def split_dsn(dsn: str, schema: str | None
              ) -> tuple[str, str | None, dict[str, float | None]]:
    """Take `schema=`, `connect_timeout=` and `statement_timeout=` out of the URL's query
    (asyncpg would send them as settings), and refuse (`invalid_store`) a URL whose port,
    `sslmode` or timeouts no connection could use. Returns the URL, the schema and the
    timeouts found (in seconds; None: not given; 0 in the URL: no limit, as in libpq)."""
    parts = urlsplit(dsn)
    _check_ports(dsn, parts.netloc)
    query = parse_qsl(parts.query, keep_blank_values=True)
    timeouts: dict[str, float | None] = {}
    for k, v in query:
        if k == "sslmode" and v not in SSLMODES:
            raise _bad_url(dsn, f"sslmode={v!r} is not one of {', '.join(SSLMODES)}")
        if k in TIMEOUTS:
            timeouts[k] = _seconds(dsn, k, v)
    kept = [(k, v) for k, v in query if k != "schema" and k not in TIMEOUTS]
    for k, v in query:
        if k == "schema" and schema is None:
            schema = v
    if schema is not None and not _IDENT.match(schema):
        raise HandoffsError(f"Invalid schema name {schema!r}: use letters, digits and _.",
                            code="invalid_store")
    return urlunsplit(parts._replace(query=urlencode(kept))), schema, timeouts


TIMEOUTS = ("connect_timeout", "statement_timeout")
"""URL parameters read by the store: `connect_timeout` in seconds (as libpq reads it),
`statement_timeout` as PostgreSQL reads it (a number is milliseconds; or `500ms`, `3s`,
`1min`)."""

_UNITS = {"ms": 0.001, "s": 1.0, "min": 60.0, "h": 3600.0}


def _seconds(dsn: str, name: str, value: str) -> float | None:
    text = value.strip()
    number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = text[len(number):] or ("s" if name == "connect_timeout" else "ms")
    try:
        seconds = float(number) * _UNITS[unit]
    except (KeyError, ValueError):
        seconds = -1.0
    if not seconds >= 0 or seconds == float("inf"):
        raise _bad_url(dsn, f"{name}={value!r} is not a duration (a number of "
                       f"{'seconds' if name == 'connect_timeout' else 'milliseconds'}, "
                       "or with a unit: 500ms, 3s, 1min)")
    return seconds or None


def limit(given: float | None, found: dict[str, float | None], name: str,
           default: float) -> float | None:
    """A timeout in seconds: given, else the URL's, else the default; 0: no limit."""
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, int | float) or given < 0:
            raise HandoffsError(f"{name} must be a number of seconds (0: no limit), not "
                                f"{given!r}.", code="invalid_argument")
        return float(given) or None
    return found.get(name, default)


def milliseconds(seconds: float) -> str:
    """A duration as a PostgreSQL setting's value."""
    return str(max(1, round(seconds * 1000)))


def settings(dsn: str, schema: str | None, statement_timeout: float | None) -> dict[str, str]:
    """The server settings of a store's connections: its schema first on the search
    path, this process as the application (unless the URL names one), its timeouts."""
    found = {"search_path": schema} if schema else {}
    if "application_name=" not in dsn:  # which process a connection serves
        found["application_name"] = f"handoffs {os.getpid()}"
    if statement_timeout is not None:
        found["statement_timeout"] = found["lock_timeout"] = milliseconds(statement_timeout)
    return found


SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")


def _check_ports(dsn: str, netloc: str) -> None:
    for host in netloc.rpartition("@")[2].split(","):
        port = host.partition("]")[2] if host.startswith("[") else host
        port = port.partition(":")[2]
        if port and not (port.isdigit() and 0 < int(port) < 65536):
            raise _bad_url(dsn, f"port {port!r} is not a number from 1 to 65535")


def _bad_url(dsn: str, why: str) -> HandoffsError:
    return HandoffsError(f"Invalid PostgreSQL URL {redact(dsn)!r}: {why}. The form is "
                         "postgresql://user@host:5432/database?schema=name.",
                         code="invalid_store")


def redact(dsn: str) -> str:
    """The URL without its password (`user:***@`, and `password=***` in the query)."""
    parts = urlsplit(dsn)
    if parts.password is not None:
        user, _, hosts = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{user.partition(':')[0]}:***@{hosts}")
    if "password" in parts.query.lower():
        query = parse_qsl(parts.query, keep_blank_values=True)
        parts = parts._replace(query=urlencode(
            [(k, "***" if k.lower() == "password" else v) for k, v in query], safe="*"))
    return urlunsplit(parts)


def store_error(exc: BaseException, where: str) -> HandoffsError:
    """What asyncpg (or the network) raised, as a `StoreError` with a stable code."""
    state = str(getattr(exc, "sqlstate", "") or "")
    what = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, TimeoutError):
        what = ("no answer within the store's connect_timeout or statement_timeout: the "
                "server or the network between stalls")
    if state in ("25006", "42501"):  # read_only_sql_transaction, insufficient_privilege
        return StoreError(
            f"{where} refuses writes ({what}); nothing was written. Connect to a primary "
            "server as a role that may write the store's tables.", code="store_read_only")
    if state == "53100":  # disk_full
        return StoreError(
            f"{where} has no space left for this write ({what}); nothing was written. "
            "Free some space on the database server's disk, or give it more.",
            code="store_full")
    if state in ("58000", "58030"):  # system_error, io_error: the server's disk
        return StoreError(f"{where} could not write to its disk ({what}); nothing was "
                          "written. Ask its administrator to check the server's disk.",
                          code="store_write_failed")
    if state.startswith(("08", "53", "57P")) or isinstance(exc, OSError | TimeoutError) \
            or type(exc).__name__ in ("InterfaceError", "ConnectionDoesNotExistError"):
        return StoreError(
            f"Cannot use {where} ({what}); nothing was written. Check that the server is "
            "up and reachable, and retry.", code="store_unavailable")
    if state in ("40001", "40P01", "55P03"):
        return StoreError(f"{where} was busy ({what}); nothing was written. Retry.",
                          code="store_busy")
    if state.startswith("XX"):
        return StoreError(f"{where} reports damaged data ({what}). Ask its administrator "
                          "to check the server.", code="store_corrupt")
    return StoreError(f"{where} failed ({what}); nothing was written.", code="store_error")


async def no_reset(conn: Any) -> None:
    """Pooled connections keep no state between uses (every call is one statement, the
    only transaction is scoped), so skip asyncpg's reset round trip on each release."""


def params(w: rows.Write, lease: int | None = None) -> tuple[Any, ...]:
    """The parameters of `INSERT` / `UPDATE` for a write; `lease`: the session's lease
    when this process holds its lock (None: not checked)."""
    ev = w.events
    return (
        w.id, w.expected, w.version, w.active_agent, w.status, w.turn, w.channel,
        w.updated_at, w.header, w.message_count, w.record_count, len(ev),
        w.first_message, w.messages, w.first_record, w.records,
        [e[0] for e in ev], [e[1] for e in ev], [e[2] for e in ev], [e[3] for e in ev],
        w.created_at, *_columns(w.stats), w.first_event, lease,
    )


def _columns(rows_: list[Any]) -> list[list[Any]]:
    """The records' stats columns as one array each (`stores.stats.COLUMNS`)."""
    return [[r[i] for r in rows_] for i in range(9)]


async def migrate(conn: Any, schema: str | None, target: int = SCHEMA_VERSION) -> int:
    """Bring the schema to version `target` (under an advisory lock, so processes that
    open the store at once migrate it once); returns the version found."""
    where = f"The PostgreSQL schema {schema or 'public'!r}"
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock($1)", MIGRATION_LOCK)
        if schema:
            await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
            await conn.execute(f'SET LOCAL search_path TO "{schema}"')
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
