"""Schema versions: an older database is migrated forward on open; a newer one is refused."""

from __future__ import annotations

import json
import sqlite3
import uuid
from pathlib import Path

import pytest

from handoffs import HandoffsError, Runner
from handoffs.core.messages import UserMessage
from handoffs.core.session import SessionState
from handoffs.stores.migrations import POSTGRES, SCHEMA_VERSION
from handoffs.stores.postgres import PostgresStore
from handoffs.stores.sqlite import SQLiteStore, migrate
from handoffs.testing import ScriptedModel, reply

from .conftest import PG_DSN, drop_schema, require_pg, support_team


def _v1_session() -> tuple[SessionState, tuple[object, ...]]:
    state = SessionState("old", active_agent="billing", turn=1, version=2,
                         shared={"order": "A-1"})
    state.messages.append(UserMessage("refund A-1", "triage"))
    header = state.header()
    row = ("old", 2, "billing", "idle", 1, None, state.created_at, state.updated_at,
           json.dumps(header), 1, 0)
    return state, row


async def _check_upgraded(store: SQLiteStore | PostgresStore) -> None:
    state = await store.load("old")
    assert state is not None
    assert (state.active_agent, state.shared, [m.text for m in state.messages]) == (
        "billing", {"order": "A-1"}, ["refund A-1"])
    model = ScriptedModel([reply("Done.")])
    result = await Runner(support_team(), model=model, store=store).run("old", "thanks")
    assert result.agent == "billing"
    exported = await store.export_session("old")
    assert exported is not None and exported["events"]  # the v2 events table is in use


async def test_sqlite_database_at_version_1_is_migrated_on_open(tmp_path: Path) -> None:
    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, target=1)
    _, row = _v1_session()
    conn.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?,?,?,?,?,?)", row)
    conn.execute("INSERT INTO messages VALUES ('old', 0, ?)",
                 (json.dumps(UserMessage("refund A-1", "triage").to_dict()),))
    conn.close()

    store = SQLiteStore(path)
    try:
        await _check_upgraded(store)
    finally:
        await store.close()
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT version FROM handoffs_schema").fetchone() == (SCHEMA_VERSION,)
    conn.close()


async def test_sqlite_database_newer_than_the_library_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn)
    conn.execute("UPDATE handoffs_schema SET version = ?", (SCHEMA_VERSION + 1,))
    conn.close()

    with pytest.raises(HandoffsError) as err:
        SQLiteStore(path)

    assert err.value.code == "schema_too_new"
    assert "Upgrade handoffs" in str(err.value)


async def test_postgres_schema_at_version_1_is_migrated_on_first_use() -> None:
    await require_pg()
    import asyncpg

    schema = f"handoffs_test_v1_{uuid.uuid4().hex[:8]}"
    await drop_schema(schema)
    conn = await asyncpg.connect(PG_DSN)
    try:
        await conn.execute(f"CREATE SCHEMA {schema}; SET search_path TO {schema}")
        for statement in POSTGRES[0]:
            await conn.execute(statement)
        await conn.execute("INSERT INTO handoffs_schema VALUES (1, 1)")
        _, row = _v1_session()
        await conn.execute("INSERT INTO sessions VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)",
                           *row)
        await conn.execute("INSERT INTO messages VALUES ('old', 0, $1)",
                           json.dumps(UserMessage("refund A-1", "triage").to_dict()))
    finally:
        await conn.close()

    store = PostgresStore(PG_DSN, schema=schema)
    try:
        await _check_upgraded(store)
    finally:
        await store.close()
        await drop_schema(schema)


async def test_postgres_schema_newer_than_the_library_is_refused() -> None:
    await require_pg()
    import asyncpg

    schema = f"handoffs_test_new_{uuid.uuid4().hex[:8]}"
    await drop_schema(schema)
    conn = await asyncpg.connect(PG_DSN)
    try:
        await conn.execute(f"CREATE SCHEMA {schema}; SET search_path TO {schema}")
        await conn.execute(POSTGRES[0][0])
        await conn.execute("INSERT INTO handoffs_schema VALUES (1, $1)", SCHEMA_VERSION + 1)
    finally:
        await conn.close()

    store = PostgresStore(PG_DSN, schema=schema)
    try:
        with pytest.raises(HandoffsError) as err:
            await store.load("anything")
        assert err.value.code == "schema_too_new"
    finally:
        await store.close()
        await drop_schema(schema)
