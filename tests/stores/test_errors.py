"""Every failure a store meets is a `HandoffsError` with a stable code and what to do.

Bad session ids, bad store URLs, a file that is no database, a database that cannot be
written: the same code on every store, and nothing stored changes.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from handoffs import HandoffsError, Runner
from handoffs.core.messages import UserMessage
from handoffs.core.session import Checkpoint, SessionState
from handoffs.stores import SessionStore, open_store
from handoffs.testing import ScriptedModel, reply

from .conftest import PG_DSN, Backend, require_pg, support_team

BAD_IDS: list[Any] = [None, 123, "", "a\x00b", "x" * 257, "a\ud800b", b"s1"]


def _ops(store: SessionStore, sid: Any) -> list[tuple[str, Callable[[], Awaitable[Any]]]]:
    async def lock() -> None:
        async with store.lock(sid):
            pass

    async def commit() -> None:
        state = SessionState("ok", active_agent="triage")
        state.id = sid
        state.messages.append(UserMessage("hi", "triage"))
        await store.commit(state, Checkpoint(0, 0, 0))

    async def import_() -> None:
        await store.import_session({"id": sid, "messages": []})

    return [("lock", lock), ("load", lambda: store.load(sid)), ("commit", commit),
            ("delete", lambda: store.delete(sid)),
            ("export", lambda: store.export_session(sid)), ("import", import_)]


@pytest.mark.parametrize("sid", BAD_IDS, ids=repr)
async def test_a_bad_session_id_is_refused_by_every_operation(
    backend: Backend, sid: Any,
) -> None:
    store = backend.open()
    for name, op in _ops(store, sid):
        with pytest.raises(HandoffsError) as err:
            await op()
        assert err.value.code == "invalid_argument", name
        assert "session id" in str(err.value), name
    assert await store.list_sessions() == []


async def test_a_numeric_id_is_not_the_same_session_as_its_text(backend: Backend) -> None:
    store = backend.open()
    await Runner(support_team(), model=ScriptedModel([reply("x")]), store=store).run(
        "123", "hi")
    with pytest.raises(HandoffsError) as err:
        await store.load(123)  # type: ignore[arg-type]
    assert err.value.code == "invalid_argument"


async def test_the_longest_allowed_session_id_works(backend: Backend) -> None:
    store = backend.open()
    sid = "é" * 256
    await Runner(support_team(), model=ScriptedModel([reply("x")]), store=store).run(sid, "hi")
    state = await backend.open().load(sid)
    assert state is not None and state.id == sid


@pytest.mark.parametrize("limit, offset", [(-1, 0), (10, -1), (True, 0), ("5", 0)])
async def test_bad_listing_bounds_are_refused(backend: Backend, limit: Any,
                                               offset: Any) -> None:
    with pytest.raises(HandoffsError) as err:
        await backend.open().list_sessions(limit, offset)
    assert err.value.code == "invalid_argument"


# -- store URLs ----------------------------------------------------------------------


@pytest.mark.parametrize("url", ["sqlite:", "sqlite://", "sqlite:///", "sqlite:////"])
def test_a_sqlite_url_without_a_path_is_refused(url: str) -> None:
    with pytest.raises(HandoffsError) as err:
        open_store(url)
    assert err.value.code == "invalid_store"
    assert "sqlite:///path/to/file.db" in str(err.value)
    assert "sqlite:///:memory:" in str(err.value)


@pytest.mark.parametrize("url", ["sqlite:///:memory:", "sqlite://:memory:"])
async def test_in_memory_sqlite_is_given_only_when_asked(url: str) -> None:
    store = open_store(url)
    try:
        await Runner(support_team(), model=ScriptedModel([reply("x")]), store=store).run(
            "s1", "hi")
        state = await store.load("s1")
        assert state is not None and len(state.messages) == 2
    finally:
        await store.close()


@pytest.mark.parametrize("url", [
    "postgresql://127.0.0.1:99999/test",
    "postgresql://127.0.0.1:5432/test?sslmode=sometimes",
    "postgresql://127.0.0.1:notaport/test",
    "postgresql://127.0.0.1/test?schema=no-dashes",
    "postgresql://127.0.0.1/test?connect_timeout=soon",
    "postgresql://127.0.0.1/test?statement_timeout=-5",
])
async def test_a_malformed_postgresql_url_is_refused(url: str) -> None:
    with pytest.raises(HandoffsError) as err:
        store = open_store(url)
        try:
            await store.load("s1")
        finally:
            await store.close()
    assert err.value.code == "invalid_store"


def test_postgresql_timeouts_have_defaults_and_come_from_the_url_or_the_arguments() -> None:
    from handoffs.stores import PostgresStore

    default = PostgresStore("postgresql://127.0.0.1/test")
    assert (default.connect_timeout, default.statement_timeout) == (5.0, 10.0)
    url = PostgresStore("postgresql://127.0.0.1/test?connect_timeout=2&statement_timeout=1500")
    assert (url.connect_timeout, url.statement_timeout) == (2.0, 1.5)
    assert "timeout" not in url.dsn  # not sent to the server as settings of their own
    units = PostgresStore("postgresql://127.0.0.1/test?statement_timeout=3s")
    assert units.statement_timeout == 3.0
    given = PostgresStore("postgresql://127.0.0.1/test?statement_timeout=3s",
                          statement_timeout=7, connect_timeout=0)
    assert (given.connect_timeout, given.statement_timeout) == (None, 7.0)  # 0: no limit


async def test_an_unreachable_postgresql_server_is_store_unavailable() -> None:
    store = open_store("postgresql://127.0.0.1:1/test")
    try:
        with pytest.raises(HandoffsError) as err:
            await store.load("s1")
        assert err.value.code == "store_unavailable"
    finally:
        await store.close()


# -- SQLite files ----------------------------------------------------------------------


def test_a_file_that_is_not_a_sqlite_database_is_refused_and_left_alone(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"These are my notes, not a database.\n" * 200)
    before = path.read_bytes()

    with pytest.raises(HandoffsError) as err:
        open_store(f"sqlite:///{path}")

    assert err.value.code == "store_corrupt"
    assert str(path) in str(err.value)
    assert path.read_bytes() == before


def test_a_sqlite_file_in_a_missing_directory_is_store_unavailable(tmp_path: Path) -> None:
    with pytest.raises(HandoffsError) as err:
        open_store(f"sqlite:///{tmp_path / 'missing' / 'sessions.db'}")
    assert err.value.code == "store_unavailable"
    assert str(err.value).startswith("Cannot use the SQLite database ")  # one sentence


async def test_a_read_only_sqlite_database_refuses_writes_and_keeps_its_data(
    tmp_path: Path,
) -> None:
    path = tmp_path / "sessions.db"
    writable = open_store(f"sqlite:///{path}")
    await Runner(support_team(), model=ScriptedModel([reply("x")]), store=writable).run(
        "s1", "hi")
    await writable.close()

    store = open_store(f"sqlite:///file:{path}?mode=ro")
    try:
        state = await store.load("s1")
        assert state is not None
        runner = Runner(support_team(), model=ScriptedModel([reply("y")]), store=store)
        with pytest.raises(HandoffsError) as err:
            await runner.run("s1", "again")
        assert err.value.code == "store_read_only"
        assert "read-only" in str(err.value)
        with pytest.raises(HandoffsError) as err:
            await store.delete("s1")
        assert err.value.code == "store_read_only"
        again = await store.load("s1")
        assert again is not None
        assert [m.text for m in again.messages] == ["hi", "x"]
        assert again.status == "idle"
    finally:
        await store.close()


async def test_a_nul_byte_in_a_postgresql_session_id_is_invalid_argument() -> None:
    await require_pg()
    store = open_store(PG_DSN)
    try:
        with pytest.raises(HandoffsError) as err:
            await store.load("a\x00b")
        assert err.value.code == "invalid_argument"
    finally:
        await store.close()


# -- the package's names ---------------------------------------------------------------


def test_every_store_is_importable_from_the_package_without_loading_asyncpg() -> None:
    code = (
        "import sys\n"
        "from handoffs.stores import (MemoryStore, PostgresStore, SessionStore, SQLiteStore,"
        " open_store)\n"
        "assert 'asyncpg' not in sys.modules\n"
        "assert isinstance(MemoryStore(), SessionStore)\n"
        "print(SQLiteStore.__name__, PostgresStore.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["SQLiteStore", "PostgresStore"]
