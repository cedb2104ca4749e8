"""Real `handoffs serve` processes for the fault tests, and what the tests do to them.

`serve()` starts one on a real port with `fault_team.py` (or another team), waits until
it is ready, and stops it (SIGKILL if it does not stop) when the test is done with it.
`pg_database()` makes a PostgreSQL database of the test's own (a fault a test sets on a
database, such as `idle_session_timeout`, touches nobody else). `Proxy` is a TCP proxy
the test runs between a server and PostgreSQL: it forwards, black-holes (holds every
byte, answers nothing, resets nothing) or cuts connections on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

import handoffs
from service.conftest import OPERATOR_KEY, bearer, free_port
from stores.conftest import PG_DSN, require_pg

SRC = Path(handoffs.__file__).resolve().parents[1]
"""The source the servers run: the one this test imported."""
TEAM = Path(__file__).with_name("fault_team.py")


@dataclass
class Server:
    """A running `handoffs serve`: its URL, process and output file."""

    url: str
    proc: subprocess.Popen[bytes]
    out: Path

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def output(self) -> str:
        return self.out.read_text(errors="replace") if self.out.exists() else ""

    def session(self) -> tuple[str, str]:
        r = httpx.post(self.url + "/v1/sessions", json={}, timeout=20)
        assert r.status_code == 201, r.text
        return r.json()["id"], r.json()["token"]

    def say(self, sid: str, token: str, text: str, timeout: float = 30,
            **headers: str) -> httpx.Response:
        return httpx.post(f"{self.url}/v1/sessions/{sid}/messages", json={"text": text},
                          headers={**bearer(token), **headers}, timeout=timeout)

    def export(self, sid: str) -> dict[str, Any]:
        r = httpx.get(f"{self.url}/v1/sessions/{sid}/export", headers=bearer(OPERATOR_KEY),
                      timeout=20)
        assert r.status_code == 200, r.text
        found: dict[str, Any] = r.json()
        return found


@contextlib.contextmanager
def serve(store: str, cwd: Path, team: str = f"{TEAM}:runner", ready: bool = True,
          env: dict[str, str] | None = None,
          preexec: Callable[[], None] | None = None) -> Iterator[Server]:
    """`handoffs serve TEAM --store STORE` on a free port; yields once `/readyz` answers
    200 (or, `ready=False`, once it answers at all)."""
    port = free_port()
    full_env = {**os.environ, "PYTHONPATH": str(SRC), "HANDOFFS_OPERATOR_KEY": OPERATOR_KEY,
                "FAULT_MARKS": str(cwd / "marks"), **(env or {})}
    full_env.pop("HANDOFFS_MODEL", None)
    out = cwd / f"server-{port}.log"
    with out.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "handoffs.cli", "serve", team, "--store", store,
             "--port", str(port), "--log-level", "warning"],
            cwd=cwd, env=full_env, stdout=log, stderr=subprocess.STDOUT,
            preexec_fn=preexec)
    server = Server(f"http://127.0.0.1:{port}", proc, out)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.get(server.url + "/readyz", timeout=2)
                if r.status_code == 200 or not ready:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"handoffs serve did not start:\n{server.output()}")
            time.sleep(0.05)
        yield server
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def sse(response: httpx.Response) -> Iterator[dict[str, Any]]:
    """The events of an SSE response as they arrive (comments skipped); each keeps its
    SSE id as `_id`."""
    current: dict[str, str] = {}
    for line in response.iter_lines():
        if line == "":
            if "data" in current:
                event = json.loads(current["data"])
                event["_id"] = current.get("id")
                yield event
            current = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            current[name] = value.removeprefix(" ")


def hold_writes(url: str, session_id: str, seconds: float) -> threading.Thread:
    """Another writer holds the store for `seconds`, from a thread: SQLite's write lock
    (`BEGIN IMMEDIATE`), or on PostgreSQL the session's row (`FOR UPDATE`)."""
    started = threading.Event()

    def sqlite() -> None:
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"), isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        started.set()
        time.sleep(seconds)
        conn.execute("ROLLBACK")
        conn.close()

    async def postgres() -> None:
        import asyncpg

        base, _, schema = url.partition("?schema=")
        conn = await asyncpg.connect(base, server_settings={"search_path": schema})
        try:
            async with conn.transaction():
                await conn.fetchval("SELECT 1 FROM sessions WHERE id = $1 FOR UPDATE",
                                    session_id)
                started.set()
                await asyncio.sleep(seconds)
        finally:
            await conn.close()

    target = sqlite if url.startswith("sqlite") else (lambda: asyncio.run(postgres()))
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    assert started.wait(10), "could not take the store's write lock"
    return thread


def terminate_lock_holder(session_id: str, schema: str) -> int:
    """`pg_terminate_backend` the connection holding the session's advisory lock (how
    many it found)."""
    from handoffs.stores.locks import lock_key

    key = lock_key(session_id, schema) & 0xFFFFFFFFFFFFFFFF

    async def go() -> int:
        import asyncpg

        conn = await asyncpg.connect(PG_DSN)
        try:
            n: int = await conn.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_locks WHERE locktype = "
                "'advisory' AND granted AND classid::bigint = $1 AND objid::bigint = $2 "
                "AND objsubid = 1", key >> 32, key & 0xFFFFFFFF)
            return n
        finally:
            await conn.close()

    return asyncio.run(go())


def pg_schema_url(schema: str, base: str = PG_DSN, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"schema": schema, **params}.items())
    return f"{base}{'&' if '?' in base else '?'}{query}"


@contextlib.asynccontextmanager
async def pg_database(**settings: str) -> AsyncIterator[str]:
    """A new database (with these `ALTER DATABASE ... SET` settings), dropped after; its
    URL."""
    import asyncpg

    await require_pg()
    name = f"handoffs_fault_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(PG_DSN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        for key, value in settings.items():
            await admin.execute(f"ALTER DATABASE \"{name}\" SET {key} = '{value}'")
    finally:
        await admin.close()
    try:
        yield PG_DSN.rsplit("/", 1)[0] + f"/{name}"
    finally:
        admin = await asyncpg.connect(PG_DSN)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@dataclass
class Proxy:
    """A TCP proxy on 127.0.0.1 to `target`, in a thread: `mode` is `pass` (forward),
    `hole` (accept and hold everything: a black hole, no reset), `refuse` (new
    connections are closed at once) or `slow` (every piece waits `delay` seconds before
    it is forwarded); `cut()` closes every open connection; `down()` stops listening
    (a connection is refused, as by a host with nothing on the port) and cuts, `up()`
    listens again on the same port."""

    target: tuple[str, int]
    mode: str = "pass"
    port: int = 0
    delay: float = 5.0
    _sockets: list[socket.socket] = field(default_factory=list)
    _server: socket.socket | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> Proxy:
        self._server = socket.create_server(("127.0.0.1", self.port))
        self.port = self._server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def down(self) -> None:
        if self._server is not None:
            with contextlib.suppress(OSError):  # wakes the accepting thread: it returns
                self._server.shutdown(socket.SHUT_RDWR)
            self._server.close()
            self._server = None
        self.cut()

    def up(self) -> None:
        self.start()

    def _accept(self) -> None:
        listener = self._server
        assert listener is not None
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            if self.mode == "refuse":
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)  # a black hole holds for as long as it takes
            with self._lock:
                self._sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                while self.mode == "hole":  # hold it: nothing goes through, nothing closes
                    time.sleep(0.05)
                if self.mode == "slow":
                    time.sleep(self.delay)
                dst.sendall(data)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def cut(self) -> None:
        with self._lock:
            found, self._sockets = self._sockets, []
        for s in found:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self.cut()
