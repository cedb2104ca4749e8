"""The store backends every behaviour test runs against: memory, SQLite, PostgreSQL.

SQLite uses a real file in the test's temp dir. PostgreSQL uses 127.0.0.1:5432,
database `test`, a fresh schema per test (dropped afterwards); where no server answers
those tests are skipped, except under CI=true, where they fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from handoffs import Agent, Team
from handoffs.stores import MemoryStore, SessionStore, open_store

PG_DSN = os.environ.get("HANDOFFS_TEST_PG", "postgresql://127.0.0.1:5432/test")
_pg_problem: list[str | None] = []


async def _pg_reachable() -> str | None:
    """None when PostgreSQL answers, else why not (checked once per test run)."""
    if not _pg_problem:
        try:
            import asyncpg

            conn = await asyncio.wait_for(asyncpg.connect(PG_DSN), 5)
            await conn.close()
            _pg_problem.append(None)
        except Exception as exc:
            _pg_problem.append(f"{type(exc).__name__}: {exc}")
    return _pg_problem[0]


async def require_pg() -> None:
    problem = await _pg_reachable()
    if problem is not None:
        message = f"PostgreSQL not reachable at {PG_DSN}: {problem}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


async def drop_schema(schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_DSN)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


@dataclass
class Backend:
    """One kind of store; `open()` gives a new store object on the same data."""

    kind: str
    url: str | None = None
    """How another process opens the same data (None: memory, not shareable)."""
    memory: MemoryStore | None = None
    opened: list[SessionStore] = field(default_factory=list)

    @property
    def durable(self) -> bool:
        return self.url is not None

    def open(self) -> SessionStore:
        if self.memory is not None:
            return self.memory
        assert self.url is not None
        store = open_store(self.url)
        self.opened.append(store)
        return store

    def require_processes(self) -> None:
        if not self.durable:
            pytest.skip("MemoryStore lives in one process: cross-process cases do not apply.")


@contextlib.asynccontextmanager
async def backend_for(kind: str, tmp_path: Path) -> AsyncIterator[Backend]:
    """A fresh backend of `kind`: `memory`, `sqlite` (a file in tmp_path) or `postgres`
    (its own schema, dropped afterwards)."""
    schema = None
    if kind == "memory":
        b = Backend(kind, memory=MemoryStore())
    elif kind == "sqlite":
        b = Backend(kind, url=f"sqlite:///{tmp_path / 'sessions.db'}")
    else:
        await require_pg()
        schema = f"handoffs_test_{uuid.uuid4().hex[:12]}"
        b = Backend(kind, url=f"{PG_DSN}?schema={schema}")
    try:
        yield b
    finally:
        for store in b.opened:
            await store.close()
        if schema is not None:
            await drop_schema(schema)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    async with backend_for(request.param, tmp_path) as b:
        yield b


def support_team(**agent_kwargs: object) -> Team:
    """triage -> billing (and back); the shape of the issue's H=1 turn."""
    return Team([Agent("triage", handoffs=["billing"], **agent_kwargs),  # type: ignore[arg-type]
                 Agent("billing", handoffs=["triage"])])
