"""A full disk is its own error, and `/readyz` says so until writes work again.

SQLite: the server's database lives on a small tmpfs the test fills (or, where the test
may not mount one, under a file-size limit the test lowers: `disk.py`). PostgreSQL: the
test's schema lives in a tablespace on a small tmpfs (needs root and a local server).
A message that cannot be stored answers 503 with `store_full` (`store_write_failed`
under a file-size limit), not `store_unavailable`; `/readyz` answers the same while a
write still fails, and 200 again once there is room; nothing stored is lost.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import os
import pwd
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from stores.conftest import PG_DSN, drop_schema, require_pg

from .disk import Disk, small_disk
from .servers import Server, serve


def _text(n: int) -> str:
    """Text that does not compress (PostgreSQL compresses large values)."""
    return base64.b64encode(os.urandom(n * 3 // 4)).decode()[:n]


def _fills_and_recovers(server: Server, disk: Disk, code: str) -> None:
    sid, token = server.session()
    assert server.say(sid, token, "hello").status_code == 200
    disk.fill(server.proc.pid)

    r = server.say(sid, token, _text(90_000))
    ready = httpx.get(f"{server.url}/readyz", timeout=20)

    assert r.status_code == 503, r.text
    assert r.json()["error"]["code"] == code
    assert ready.status_code == 503 and ready.json()["error"]["code"] == code
    assert httpx.get(f"{server.url}/readyz", timeout=20).status_code == 503  # still

    disk.free(server.proc.pid)
    assert httpx.get(f"{server.url}/readyz", timeout=20).status_code == 200
    r = server.say(sid, token, "there is room again")
    assert r.status_code == 200 and r.json()["status"] == "completed", r.text
    users = [m["text"] for m in server.export(sid)["messages"] if m["kind"] == "user"]
    assert users == ["hello", "there is room again"]


def test_a_full_disk_under_sqlite_is_store_full_and_readiness_says_so(tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        url = f"sqlite:///{disk.path / 'sessions.db'}"
        with serve(url, tmp_path, preexec=disk.preexec) as server:
            _fills_and_recovers(server, disk, disk.code)


@contextlib.contextmanager
def _tablespace_on_tmpfs() -> Iterator[tuple[str, Disk]]:
    """A tablespace on a 16 MB tmpfs of its own; its name and the disk."""
    if os.geteuid() != 0:
        pytest.skip("a tablespace on a tmpfs needs root to mount it")
    try:
        owner = pwd.getpwnam("postgres")
    except KeyError:
        pytest.skip("no local 'postgres' user: the server is not on this machine")
    top = Path(tempfile.mkdtemp(prefix="handoffs-space-"))
    top.chmod(0o755)
    name = f"handoffs_space_{uuid.uuid4().hex[:8]}"
    try:
        with small_disk(top / "space", "16m") as disk:
            if not disk.tmpfs:
                pytest.skip("could not mount a tmpfs")
            os.chown(disk.path, owner.pw_uid, owner.pw_gid)
            _admin(f"CREATE TABLESPACE {name} LOCATION '{disk.path}'")
            try:
                yield name, disk
            finally:
                _admin(f"DROP TABLESPACE IF EXISTS {name}")
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=False)


def _admin(statement: str) -> None:
    async def go() -> None:
        import asyncpg

        conn = await asyncpg.connect(PG_DSN)
        try:
            await conn.execute(statement)
        finally:
            await conn.close()

    asyncio.run(go())


def test_a_full_disk_under_postgresql_is_store_full_and_readiness_says_so(
        tmp_path: Path) -> None:
    asyncio.run(require_pg())
    schema = f"handoffs_full_{uuid.uuid4().hex[:10]}"
    with _tablespace_on_tmpfs() as (space, disk):
        url = f"{PG_DSN}?schema={schema}&default_tablespace={space}"
        try:
            with serve(url, tmp_path) as server:
                _fills_and_recovers(server, disk, "store_full")
        finally:
            asyncio.run(drop_schema(schema))
