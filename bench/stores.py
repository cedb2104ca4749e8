"""Persisted turns: what each session store adds to the H=1 turn, and what it holds.

    python bench/stores.py                 # table
    python bench/stores.py --json          # the same figures as JSON on stdout
    python bench/stores.py --reps 300 --sessions 1000

(1) The H=1 turn (triage -> billing -> answer) with a zero-latency model, persisted:
    lock, load, commit of the user's message, commit of the rest. Median of `--reps` turns
    after a warm-up, each on a new session. (2) `--sessions` concurrent sessions with one
    such turn each: throughput, and Python memory (tracemalloc) per session, both held
    after the turns (retained) and at the peak while they ran. (3) The same turn on one
    session that already holds 10,000 messages: it must cost what a short session's does.

PostgreSQL: 127.0.0.1:5432, database `test` (or HANDOFFS_BENCH_PG_DSN), in a scratch
schema dropped afterwards; skipped when no server answers. Stdlib and handoffs only
(asyncpg for PostgreSQL).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import tempfile
import time
import tracemalloc
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from handoffs import Agent, Runner, Team
from handoffs.core.messages import ToolCall
from handoffs.models import ModelRequest, ModelResponse
from handoffs.stores import MemoryStore, SessionStore, open_store

PG_DSN = os.environ.get("HANDOFFS_BENCH_PG_DSN", "postgresql://127.0.0.1:5432/test")


class TriageBilling:
    """triage hands off to billing; billing answers. Stateless, no latency."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        if request.agent == "triage":
            return ModelResponse("", (ToolCall("call_1", "transfer_to_billing",
                                               '{"reason": "duplicate charge"}'),))
        return ModelResponse("Refunded the duplicate charge.")


def team() -> Team:
    return Team([Agent("triage", instructions="Route.", handoffs=["billing"]),
                 Agent("billing", instructions="Handle billing.", handoffs=["triage"])])


async def turn_latency(store: SessionStore, reps: int, warmup: int = 30) -> float:
    runner = Runner(team(), model=TriageBilling(), store=store)
    times: list[float] = []
    for i in range(warmup + reps):
        t = time.perf_counter()
        result = await runner.run(f"lat-{i}", "I was charged twice")
        times.append(time.perf_counter() - t)
        assert result.agent == "billing", result
    return statistics.median(times[warmup:]) * 1000


async def long_session_latency(store: SessionStore, reps: int, size: int = 10_000) -> float:
    """The H=1 turn on a session preloaded with `size` messages (median ms)."""
    from handoffs import HandoffPolicy
    from handoffs.core.messages import AssistantMessage, UserMessage
    from handoffs.core.session import SessionState

    # The same route on every turn of one session: the loop rule would (rightly) refuse it.
    looping = Team(team().agents, policy=HandoffPolicy(loop_limit=0))
    runner = Runner(looping, model=TriageBilling(), store=store)
    state = SessionState("long", active_agent="triage")
    for i in range(size // 2):
        state.messages += [UserMessage(f"question {i}", "triage"),
                           AssistantMessage(f"answer {i}", "triage")]
    await store.commit(state, state.checkpoint().__class__(0, 0, 0))
    times: list[float] = []
    for _ in range(5 + reps):
        await runner.select_agent("long", "triage")
        t = time.perf_counter()
        result = await runner.run("long", "I was charged twice")
        times.append(time.perf_counter() - t)
        assert result.agent == "billing", result
    return statistics.median(times[5:]) * 1000


async def concurrent(store: SessionStore, n: int, prefix: str) -> float:
    runner = Runner(team(), model=TriageBilling(), store=store)
    t = time.perf_counter()
    results = await asyncio.gather(*(runner.run(f"{prefix}-{i}", "I was charged twice")
                                     for i in range(n)))
    elapsed = time.perf_counter() - t
    assert all(r.agent == "billing" for r in results)
    return n / elapsed


async def _turns(runner: Runner, n: int, prefix: str) -> None:
    """One turn on each of `n` sessions at once; nothing of them is kept here."""
    results = await asyncio.gather(*(runner.run(f"{prefix}-{i}", "I was charged twice")
                                     for i in range(n)))
    assert all(r.agent == "billing" for r in results)


async def memory_per_session(store: SessionStore, n: int, prefix: str) -> tuple[float, float]:
    runner = Runner(team(), model=TriageBilling(), store=store)
    await runner.run(f"{prefix}-warm", "hi")  # pools, statement caches, lazy imports
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    await _turns(runner, n, prefix)
    await asyncio.sleep(0)  # let finished tasks go
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return (current - base) / n, (peak - base) / n


async def pg_reachable(dsn: str = PG_DSN) -> str | None:
    """None when PostgreSQL answers at `dsn`, else why not."""
    try:
        import asyncpg

        conn = await asyncio.wait_for(asyncpg.connect(dsn), 5)
        await conn.close()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return None


async def drop_schema(schema: str, dsn: str = PG_DSN) -> None:
    import asyncpg

    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


async def measure(name: str, make: Callable[[], SessionStore], reps: int, sessions: int
                  ) -> dict[str, Any]:
    store = make()
    try:
        latency = await turn_latency(store, reps)
        long_latency = await long_session_latency(store, max(10, reps // 10))
        throughput = await concurrent(store, sessions, "tput")
    finally:
        await store.close()
    store = make()
    try:
        retained, peak = await memory_per_session(store, sessions, "mem")
    finally:
        await store.close()
    return {"store": name, "turn_ms_median": round(latency, 3),
            "turn_ms_at_10000_messages": round(long_latency, 3),
            "sessions": sessions, "turns_per_s": round(throughput),
            "retained_bytes_per_session": round(retained),
            "peak_bytes_per_session": round(peak)}


async def main(reps: int, sessions: int) -> tuple[list[dict[str, Any]], list[str]]:
    figures: list[dict[str, Any]] = []
    notes: list[str] = []
    figures.append(await measure("memory", MemoryStore, reps, sessions))
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        # One store object per phase, all on the same file (the file persists between).
        figures.append(await measure("sqlite", lambda: open_store(f"sqlite:///{db}"),
                                     reps, sessions))
    problem = await pg_reachable()
    if problem is None:
        schema = f"handoffs_bench_{uuid.uuid4().hex[:8]}"
        try:
            figures.append(await measure(
                "postgres", lambda: open_store(f"{PG_DSN}?schema={schema}"), reps, sessions))
        finally:
            await drop_schema(schema)
    else:
        notes.append(f"postgres skipped: not reachable at {PG_DSN}: {problem}")
    return figures, notes


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures, notes = asyncio.run(main(args.reps, args.sessions))
    if args.json:
        print(json.dumps({"figures": figures, "notes": notes}, indent=2))
    else:
        print(f"{'store':10} {'H=1 turn, median':>17} {'at 10k messages':>16} "
              f"{'turns/s @' + str(args.sessions):>15} "
              f"{'retained B/session':>19} {'peak B/session':>15}")
        for f in figures:
            print(f"{f['store']:10} {f['turn_ms_median']:>14.3f} ms "
                  f"{f['turn_ms_at_10000_messages']:>13.3f} ms {f['turns_per_s']:>15} "
                  f"{f['retained_bytes_per_session']:>19} {f['peak_bytes_per_session']:>15}")
        for n in notes:
            print(n)
