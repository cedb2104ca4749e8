"""`store.handoff_stats()` on a million handoff records: SQLite and PostgreSQL.

    python bench/stats.py                         # 1,000,000 records, both stores
    python bench/stats.py --records 100000 --store sqlite

Fills a scratch database (a temp file; a scratch schema in PostgreSQL at
HANDOFFS_BENCH_PG_DSN, default postgresql://127.0.0.1:5432/test, dropped afterwards) with
records spread over 30 days, 10 per session, on 24 routes, 8% refused under five codes,
with turn outcomes and times, written as the stores write them (JSON body and stats
columns). Then times the query over everything, over the last day, and over everything
without the `records_routes` index. Prints one JSON line per store.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from handoffs.stores import PostgresStore, SQLiteStore
from handoffs.stores.rows import dumps

PG_DSN = os.environ.get("HANDOFFS_BENCH_PG_DSN", "postgresql://127.0.0.1:5432/test")
AGENTS = ("triage", "billing", "refunds", "tech", "sales", "operator")
CODES = ("loop_detected", "not_declared", "unknown_target", "too_many_handoffs",
         "invalid_payload")
DAY = 86400.0


def records(n: int, now: float, seed: int = 7) -> Iterator[tuple[Any, ...]]:
    """(session_id, seq, body, source, target, kind, accepted, rejection, at, turn,
    outcome, took) rows."""
    rng = random.Random(seed)
    routes = [(s, t) for s in AGENTS[:4] for t in AGENTS if t != s][:24]
    for i in range(n):
        source, target = routes[int(rng.paretovariate(1.2)) % len(routes)]
        kind = "escalation" if target == "operator" else rng.choice(
            ("llm", "llm", "llm", "programmatic", "error_recovery"))
        accepted = rng.random() > 0.08
        rejection = None if accepted else rng.choice(CODES)
        at = now - rng.random() * 30 * DAY
        turn = i % 10 // 2 + 1
        outcome = "waiting_for_human" if target == "operator" else (
            "failed" if rng.random() < 0.03 else "completed")
        took = rng.lognormvariate(0.5, 1.0) if accepted and target != "operator" else None
        body = dumps({"id": uuid.uuid4().hex[:18], "source": source, "target": target,
                      "reason": kind, "explanation": "The customer asks about a charge.",
                      "payload": None, "accepted": accepted, "rejection": rejection,
                      "message": "" if accepted else "Refused by the policy.", "at": at,
                      "turn": turn, "tool_name": f"transfer_to_{target}",
                      "call_id": f"call_{i}", "returns": False})
        yield (f"s{i // 10}", i % 10, body, source, target, kind, accepted, rejection, at,
               turn, outcome, took)


async def timed(query: Callable[[], Awaitable[Any]], reps: int) -> tuple[float, Any]:
    await query()  # warm the cache
    samples = []
    result = None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = await query()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples), result


async def bench_sqlite(n: int, reps: int) -> dict[str, Any]:
    import sqlite3

    now = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "stats.db"
        await SQLiteStore(path).close()  # the schema, migrated
        conn = sqlite3.connect(path, isolation_level=None)
        t0 = time.perf_counter()
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO records (session_id, seq, body, source, target, kind, accepted,"
            " rejection, at, turn, outcome, took) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            records(n, now))
        conn.execute("COMMIT")
        fill = time.perf_counter() - t0
        conn.execute("ANALYZE")
        store = SQLiteStore(path)
        whole, stats = await timed(lambda: store.handoff_stats(), reps)
        day, _ = await timed(lambda: store.handoff_stats(since=now - DAY), reps)
        await store.close()
        conn.execute("DROP INDEX records_routes")
        store = SQLiteStore(path)
        bare, _ = await timed(lambda: store.handoff_stats(), max(1, reps // 3))
        await store.close()
        conn.close()
        size = path.stat().st_size
    return {"store": "sqlite", "records": n, "routes": len(stats.routes),
            "counted": stats.requests, "fill_s": fill, "db_bytes": size,
            "query_all_s": whole, "query_last_day_s": day, "query_all_no_index_s": bare}


async def bench_postgres(n: int, reps: int) -> dict[str, Any]:
    import asyncpg

    now = time.time()
    schema = f"bench_stats_{uuid.uuid4().hex[:8]}"
    url = f"{PG_DSN}?schema={schema}"
    store = PostgresStore(url)
    await store.list_sessions(1)  # the schema, migrated
    conn = await asyncpg.connect(PG_DSN)
    try:
        t0 = time.perf_counter()
        await conn.copy_records_to_table(
            "records", schema_name=schema, records=records(n, now),
            columns=["session_id", "seq", "body", "source", "target", "kind", "accepted",
                     "rejection", "at", "turn", "outcome", "took"])
        fill = time.perf_counter() - t0
        await conn.execute(f'VACUUM ANALYZE "{schema}".records')
        whole, stats = await timed(lambda: store.handoff_stats(), reps)
        day, _ = await timed(lambda: store.handoff_stats(since=now - DAY), reps)
        await conn.execute(f'DROP INDEX "{schema}".records_routes')
        bare, _ = await timed(lambda: store.handoff_stats(), max(1, reps // 3))
    finally:
        await store.close()
        await conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await conn.close()
    return {"store": "postgresql", "records": n, "routes": len(stats.routes),
            "counted": stats.requests, "fill_s": fill, "query_all_s": whole,
            "query_last_day_s": day, "query_all_no_index_s": bare}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--store", choices=("sqlite", "postgres", "both"), default="both")
    a = p.parse_args()
    if a.store in ("sqlite", "both"):
        print(json.dumps(asyncio.run(bench_sqlite(a.records, a.reps))))
    if a.store in ("postgres", "both"):
        print(json.dumps(asyncio.run(bench_postgres(a.records, a.reps))))


if __name__ == "__main__":
    main()
