"""The SQL schema of the durable stores, as a list of forward migrations.

Migration `n` (1-based) takes a database from version `n - 1` to `n`. A store applies
the missing ones when it opens the database, in one transaction, while holding a lock
that keeps other processes from migrating at the same time. A database whose version is
newer than `SCHEMA_VERSION` is refused with `schema_too_new`: an older library must not
write rows it does not understand.

Version 1: sessions, messages, records. Version 2: events, and the recency index that
`list_sessions` reads. Version 3: each record's route and fate as plain columns (filled
from the JSON bodies of records already stored; `outcome` and `took` only for records
written from then on) and the index `handoff_stats` reads (see `stores.stats`).
Version 4: PostgreSQL's `sessions.lease`, the fencing token a process takes with a
session's lock and every commit checks (`PostgresStore.lock`); nothing on SQLite, whose
locks cannot be lost while their process lives.
Version 5: `turns`, one row per user turn: the session's header and row counts as they
stood when the turn began (what `runner.fork` and `runner.rewind` go back to, see
`stores.marks`).
"""

from __future__ import annotations

from ..errors import HandoffsError

SQLITE: list[tuple[str, ...]] = [
    (
        """CREATE TABLE IF NOT EXISTS handoffs_schema (
             id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)""",
        """CREATE TABLE sessions (
             id TEXT PRIMARY KEY, version INTEGER NOT NULL, active_agent TEXT,
             status TEXT NOT NULL, turn INTEGER NOT NULL, channel TEXT,
             created_at REAL NOT NULL, updated_at REAL NOT NULL, header TEXT NOT NULL,
             messages INTEGER NOT NULL, records INTEGER NOT NULL)""",
        """CREATE TABLE messages (
             session_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
             PRIMARY KEY (session_id, seq)) WITHOUT ROWID""",
        """CREATE TABLE records (
             session_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
             PRIMARY KEY (session_id, seq)) WITHOUT ROWID""",
    ),
    (
        "ALTER TABLE sessions ADD COLUMN events INTEGER NOT NULL DEFAULT 0",
        """CREATE TABLE events (
             session_id TEXT NOT NULL, seq INTEGER NOT NULL, turn INTEGER NOT NULL,
             type TEXT NOT NULL, at REAL NOT NULL, body TEXT NOT NULL,
             PRIMARY KEY (session_id, seq)) WITHOUT ROWID""",
        "CREATE INDEX sessions_recency ON sessions (updated_at DESC, id)",
    ),
    (
        *(f"ALTER TABLE records ADD COLUMN {c}" for c in (
            "source TEXT", "target TEXT", "kind TEXT", "accepted INTEGER", "rejection TEXT",
            "at REAL", "turn INTEGER", "outcome TEXT", "took REAL")),
        """UPDATE records SET source = json_extract(body, '$.source'),
             target = json_extract(body, '$.target'), kind = json_extract(body, '$.reason'),
             accepted = json_extract(body, '$.accepted'),
             rejection = json_extract(body, '$.rejection'), at = json_extract(body, '$.at'),
             turn = json_extract(body, '$.turn')""",
        """CREATE INDEX records_routes ON records
             (source, target, kind, took, at, accepted, outcome, rejection)""",
    ),
    (),
    (
        """CREATE TABLE turns (
             session_id TEXT NOT NULL, turn INTEGER NOT NULL, messages INTEGER NOT NULL,
             records INTEGER NOT NULL, events INTEGER NOT NULL, header TEXT,
             PRIMARY KEY (session_id, turn)) WITHOUT ROWID""",
    ),
]

POSTGRES: list[tuple[str, ...]] = [
    (
        """CREATE TABLE IF NOT EXISTS handoffs_schema (
             id int PRIMARY KEY CHECK (id = 1), version int NOT NULL)""",
        """CREATE TABLE sessions (
             id text PRIMARY KEY, version bigint NOT NULL, active_agent text,
             status text NOT NULL, turn bigint NOT NULL, channel text,
             created_at double precision NOT NULL, updated_at double precision NOT NULL,
             header text NOT NULL, messages bigint NOT NULL, records bigint NOT NULL)""",
        """CREATE TABLE messages (
             session_id text NOT NULL, seq bigint NOT NULL, body text NOT NULL,
             PRIMARY KEY (session_id, seq))""",
        """CREATE TABLE records (
             session_id text NOT NULL, seq bigint NOT NULL, body text NOT NULL,
             PRIMARY KEY (session_id, seq))""",
    ),
    (
        "ALTER TABLE sessions ADD COLUMN events bigint NOT NULL DEFAULT 0",
        """CREATE TABLE events (
             session_id text NOT NULL, seq bigint NOT NULL, turn bigint NOT NULL,
             type text NOT NULL, at double precision NOT NULL, body text NOT NULL,
             PRIMARY KEY (session_id, seq))""",
        "CREATE INDEX sessions_recency ON sessions (updated_at DESC, id)",
    ),
    (
        """ALTER TABLE records ADD COLUMN source text, ADD COLUMN target text,
             ADD COLUMN kind text, ADD COLUMN accepted boolean, ADD COLUMN rejection text,
             ADD COLUMN at double precision, ADD COLUMN turn bigint, ADD COLUMN outcome text,
             ADD COLUMN took double precision""",
        """UPDATE records SET source = j ->> 'source', target = j ->> 'target',
             kind = j ->> 'reason', accepted = (j ->> 'accepted')::boolean,
             rejection = j ->> 'rejection', at = (j ->> 'at')::double precision,
             turn = (j ->> 'turn')::bigint
           FROM (SELECT session_id AS sid, seq AS n, body::jsonb AS j FROM records) AS b
           WHERE records.session_id = b.sid AND records.seq = b.n""",
        """CREATE INDEX records_routes ON records
             (source, target, kind, took, at, accepted, outcome, rejection)""",
    ),
    (
        "ALTER TABLE sessions ADD COLUMN lease bigint NOT NULL DEFAULT 0",
    ),
    (
        """CREATE TABLE turns (
             session_id text NOT NULL, turn bigint NOT NULL, messages bigint NOT NULL,
             records bigint NOT NULL, events bigint NOT NULL, header text,
             PRIMARY KEY (session_id, turn))""",
    ),
]

SCHEMA_VERSION = len(SQLITE)
"""The schema version this library writes."""

assert len(POSTGRES) == SCHEMA_VERSION


def check_version(found: int, where: str) -> None:
    """Refuse a database written by a newer library."""
    if found > SCHEMA_VERSION:
        raise HandoffsError(
            f"{where} has schema version {found}, newer than this handoffs library "
            f"understands ({SCHEMA_VERSION}). Upgrade handoffs to open it; do not write "
            "to it with this version.",
            code="schema_too_new",
        )
