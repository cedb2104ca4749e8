"""PostgreSQL: a session's lock lives on one connection, and that connection can go.

Real `handoffs serve` processes on one database; the faults come from the test: the lock
connection terminated (`pg_terminate_backend`), idle connections cut by the server
(`idle_session_timeout` on a database of the test's own), and a commit that a killed
process had already sent landing after another process took the session (a trigger
makes such commits slow, so the test can kill the process while one is in flight).
Design.md's rule holds through all of them: turns on one session never interleave
across processes, and no message is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.conftest import bearer
from stores.conftest import PG_DSN, drop_schema, require_pg

from .servers import pg_database, pg_schema_url, serve, sse, terminate_lock_holder


@pytest.fixture
async def schema_url() -> AsyncIterator[str]:
    await require_pg()
    schema = f"handoffs_lock_{uuid.uuid4().hex[:10]}"
    yield pg_schema_url(schema)
    await drop_schema(schema)


def _users_and_answers(exported: dict[str, Any]) -> tuple[list[str], list[str]]:
    msgs = exported["messages"]
    return ([m["text"] for m in msgs if m["kind"] == "user"],
            [m["text"] for m in msgs if m["kind"] == "assistant" and m["text"]])


def test_a_turn_whose_lock_connection_is_terminated_stops_with_session_lock_lost(
        schema_url: str, tmp_path: Path) -> None:
    with serve(schema_url, tmp_path) as server:
        sid, token = server.session()
        events: list[dict[str, Any]] = []
        started = threading.Event()

        def follow() -> None:
            with httpx.stream("POST", f"{server.url}/v1/sessions/{sid}/messages",
                              json={"text": "slow 3"}, timeout=30,
                              headers={**bearer(token), "Accept": "text/event-stream"}) as r:
                for event in sse(r):
                    events.append(event)
                    started.set()
                    if event["type"] in ("run_completed", "run_failed"):
                        return

        reader = threading.Thread(target=follow)
        reader.start()
        assert started.wait(10)
        cut = time.monotonic()
        assert terminate_lock_holder(sid, schema_url.rpartition("=")[2]) == 1
        reader.join(10)
        stopped = time.monotonic() - cut

        assert events[-1]["type"] == "run_failed", [e["type"] for e in events]
        assert events[-1]["code"] == "session_lock_lost"
        assert stopped < 2.5  # at once, not when the 3 s model call ends
        time.sleep(3.5)  # when the turn would have reached its tool
        marks = tmp_path / "marks"
        assert not marks.exists(), marks.read_text()
        assert httpx.get(f"{server.url}/v1/sessions/{sid}", headers=bearer(token)
                         ).json()["status"] == "interrupted"

        r = server.say(sid, token, "next")
        assert r.status_code == 200 and r.json()["status"] == "completed", r.text
        users, answers = _users_and_answers(server.export(sid))
        assert users == ["slow 3", "next"]
        assert answers == ["answer to next"]  # both answered once, by the next turn


async def test_turns_never_interleave_when_the_server_cuts_idle_connections(
        tmp_path: Path) -> None:
    """`idle_session_timeout = 1s`: the lock connection idles through a 3 s turn."""
    async with pg_database(idle_session_timeout="1s") as url:
        with serve(url, tmp_path) as a, serve(url, tmp_path) as b:
            sid, token = a.session()
            results: dict[str, httpx.Response] = {}

            def say(server: Any, text: str) -> None:
                results[text] = server.say(sid, token, text)

            first = threading.Thread(target=say, args=(a, "slow 3"))
            first.start()
            await asyncio.sleep(1.5)  # A's lock connection has idled past the timeout
            await asyncio.to_thread(say, b, "second")
            first.join(30)

            assert results["slow 3"].json()["status"] == "completed", results["slow 3"].text
            assert results["second"].json()["status"] == "completed", results["second"].text
            exported = a.export(sid)
            users, answers = _users_and_answers(exported)
            assert users == ["slow 3", "second"]
            assert answers == ["answer to slow 3", "answer to second"]
            kinds = [e["type"] for e in exported["events"]]
            assert "run_interrupted" not in kinds
            # B's turn started after A's ended.
            ends = [e["at"] for e in exported["events"] if e["type"] == "run_completed"]
            starts = [e["at"] for e in exported["events"] if e["type"] == "run_started"]
            assert starts[1] >= ends[0]
            assert (tmp_path / "marks").read_text().splitlines() == ["slow 3"]


def _slow_final_commits(url: str, seconds: float) -> None:
    """A trigger on the test's schema: a commit that ends a turn sleeps `seconds` in the
    server, so the test can kill its process while it is in flight."""
    base, _, schema = url.partition("?schema=")

    async def go() -> None:
        import asyncpg

        conn = await asyncpg.connect(base)
        try:
            await conn.execute(f"""
                CREATE FUNCTION "{schema}".slow_final() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF OLD.status = 'running' AND NEW.status = 'idle' THEN
                    PERFORM pg_sleep({seconds});
                  END IF;
                  RETURN NEW;
                END $$;
                CREATE TRIGGER slow_final BEFORE UPDATE ON "{schema}".sessions
                  FOR EACH ROW EXECUTE FUNCTION "{schema}".slow_final();""")
        finally:
            await conn.close()

    asyncio.run(go())


def _sleeping_commits(schema: str) -> int:
    async def go() -> int:
        import asyncpg

        conn = await asyncpg.connect(PG_DSN)
        try:
            n: int = await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep' "
                "AND query LIKE '%UPDATE sessions%' AND backend_type = 'client backend' "
                "AND pid IN (SELECT pid FROM pg_locks WHERE relation = $1::regclass)",
                f'"{schema}".sessions')
            return n
        finally:
            await conn.close()

    return asyncio.run(go())


def test_a_commit_a_killed_process_had_sent_never_costs_the_next_message(
        schema_url: str, tmp_path: Path) -> None:
    with serve(schema_url, tmp_path) as a, serve(schema_url, tmp_path) as b:
        sid, token = a.session()
        _slow_final_commits(schema_url, 1.5)
        threading.Thread(target=lambda: _ignore(a.say, sid, token, "m1"), daemon=True).start()
        deadline = time.monotonic() + 10
        while not _sleeping_commits(schema_url.rpartition("=")[2]):  # A's last commit
            # is in the server
            assert time.monotonic() < deadline, "A's commit never started"
            time.sleep(0.02)
        a.kill()  # its lock goes at once; the commit it sent lands 1.5 s later

        r = b.say(sid, token, "m2")

        assert r.status_code == 200 and r.json()["status"] == "completed", r.text
        users, answers = _users_and_answers(b.export(sid))
        assert users == ["m1", "m2"]
        assert answers == ["answer to m1", "answer to m2"]


def _ignore(fn: Any, *args: Any) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the server is killed under the request
        fn(*args)
