"""`/readyz` answers within 2 s whatever the store is doing, and says what is down;
`/healthz` never touches the store (issue 39).

A real `handoffs serve` on PostgreSQL reaches it through a TCP proxy the test runs, with
the store's default timeouts (5 s to connect, 10 s per statement): the proxy black-holes
every connection (bytes held, nothing answered, nothing reset), stops listening
(connections refused), or forwards every piece 5 s late. A real server on SQLite meets a
database whose write lock another process holds. In each state `/readyz` must
answer 503 within 2 s with a JSON body naming the store and the reason, `/healthz` 200
at once, and once the fault is gone `/readyz` answers 200 again. Each measured latency
is printed (`pytest -s`)."""

from __future__ import annotations

import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from stores.conftest import PG_DSN, drop_schema, require_pg

from .servers import Proxy, Server, serve

WITHIN = 2.0
"""Seconds `/readyz` has to answer, in every state."""


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    parts = urlsplit(PG_DSN)
    p = Proxy((parts.hostname or "127.0.0.1", parts.port or 5432)).start()
    yield p
    p.close()


def probe(server: Server, state: str) -> dict[str, Any]:
    """`/readyz` and `/healthz` in `state`: asserts both answered in time; the body."""
    t0 = time.monotonic()
    ready = httpx.get(server.url + "/readyz", timeout=30)
    took = time.monotonic() - t0
    t0 = time.monotonic()
    health = httpx.get(server.url + "/healthz", timeout=30)
    health_took = time.monotonic() - t0
    print(f"{state}: /readyz {ready.status_code} in {took:.2f} s, /healthz "
          f"{health.status_code} in {health_took:.3f} s: {ready.text}")
    assert health.status_code == 200 and health_took < 0.5
    assert ready.status_code == 503, ready.text
    assert took < WITHIN, f"{state}: /readyz took {took:.2f} s"
    body: dict[str, Any] = ready.json()
    assert body["ok"] is False
    assert body["error"]["code"].startswith("store_")
    return body


def ready_again(server: Server) -> None:
    deadline = time.monotonic() + 60
    while httpx.get(server.url + "/readyz", timeout=30).status_code != 200:
        assert time.monotonic() < deadline, "the server never became ready again"
        time.sleep(0.2)


async def test_readyz_answers_within_2_s_whatever_postgresql_does(
        proxy: Proxy, tmp_path: Path) -> None:
    await require_pg()
    schema = f"handoffs_ready_{uuid.uuid4().hex[:10]}"
    path = urlsplit(PG_DSN).path
    url = f"postgresql://127.0.0.1:{proxy.port}{path}?schema={schema}"
    try:
        with serve(url, tmp_path) as server:
            sid, token = server.session()
            assert server.say(sid, token, "hello").status_code == 200

            proxy.mode = "hole"
            body = probe(server, "postgresql black-holed")
            assert body["kind"] == "postgresql"
            assert "did not answer" in body["reason"]
            body = probe(server, "postgresql black-holed, asked again")
            proxy.mode = "pass"
            proxy.cut()
            ready_again(server)

            proxy.down()
            body = probe(server, "postgresql refusing connections")
            assert body["kind"] == "postgresql"
            proxy.up()
            ready_again(server)

            proxy.mode = "slow"
            proxy.cut()  # the pool's connections are new ones, each piece 5 s late
            body = probe(server, "postgresql slow (5 s a piece)")
            assert body["kind"] == "postgresql"
            proxy.mode = "pass"
            proxy.cut()
            ready_again(server)
            r = server.say(sid, token, "back again")
            assert r.status_code == 200 and r.json()["status"] == "completed", r.text
    finally:
        await drop_schema(schema)


def test_readyz_answers_within_2_s_while_sqlite_is_locked(tmp_path: Path) -> None:
    db = tmp_path / "handoffs.db"
    with serve(f"sqlite:///{db}", tmp_path) as server:
        sid, token = server.session()
        assert server.say(sid, token, "hello").status_code == 200
        holder = sqlite3.connect(db, isolation_level=None, timeout=20)
        try:
            holder.execute("BEGIN IMMEDIATE")  # another writer holds the write lock
            body = probe(server, "sqlite locked")
            assert body["kind"] == "sqlite" and body["error"]["code"] == "store_busy"
            waiting = threading.Thread(  # a turn waits for the lock on the store's thread
                target=lambda: server.say(sid, token, "while locked", timeout=60))
            waiting.start()
            time.sleep(0.5)
            probe(server, "sqlite locked, a turn waiting for the lock")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        waiting.join(60)
        ready_again(server)
