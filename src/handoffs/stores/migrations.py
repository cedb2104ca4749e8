"""The SQL schema of the durable stores, as a list of forward migrations.

Migration `n` (1-based) takes a database from version `n - 1` to `n`. A store applies
the missing ones when it opens the database, in one transaction, while holding a lock
that keeps other processes from migrating at the same time. A database whose version is
newer than `SCHEMA_VERSION` is refused with `schema_too_new`: an older library must not
write rows it does not understand.

Version 1: sessions, messages, records. Version 2: events, and the recency index that
`list_sessions` reads.
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
