"""Going back in a long session: a fork costs what its prefix costs (issue 31).

    python bench/timetravel.py                 # table
    python bench/timetravel.py --turns 2000    # a longer session

A session of `--turns` turns (each a user message, a handoff and an answer: 4 messages, 1
record, about 9 events) on the memory store and a SQLite file; then, median of `--reps`:
a fork before turn 2, a fork before the middle turn, a fork before the last turn, and
the start of a turn (the commit that keeps its mark) on the long session. Stdlib and
handoffs only.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from handoffs import Agent, HandoffPolicy, Runner, Team
from handoffs.core.messages import ToolCall
from handoffs.models import ModelRequest, ModelResponse
from handoffs.stores import MemoryStore, SessionStore, open_store


class TriageBilling:
    """triage hands off to billing; billing answers and hands back. No latency."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        target = "billing" if request.agent == "triage" else "triage"
        if request.messages and request.messages[-1].kind == "user":
            return ModelResponse("", (ToolCall("c", f"transfer_to_{target}",
                                               '{"reason": "bench"}'),))
        return ModelResponse("Answered.")


def team() -> Team:
    return Team([Agent("triage", handoffs=["billing"]), Agent("billing", handoffs=["triage"])],
                policy=HandoffPolicy(loop_limit=0))


async def measure(store: SessionStore, turns: int, reps: int) -> dict[str, float]:
    runner = Runner(team(), model=TriageBilling(), store=store)
    for i in range(turns):
        await runner.run("long", f"question {i}")
    out: dict[str, float] = {}
    for label, turn in (("fork before turn 2", 2), ("fork before the middle", turns // 2),
                        ("fork before the last", turns)):
        times = []
        for r in range(reps):
            t = time.perf_counter()
            await runner.fork("long", turn, new_id=f"f-{turn}-{r}")
            times.append(time.perf_counter() - t)
        out[label] = statistics.median(times) * 1000
    times = []
    for i in range(reps):
        t = time.perf_counter()
        await runner.run("long", f"more {i}")
        times.append(time.perf_counter() - t)
    out["a turn on the long session"] = statistics.median(times) * 1000
    return out


async def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--turns", type=int, default=500)
    p.add_argument("--reps", type=int, default=15)
    args = p.parse_args()
    rows: dict[str, dict[str, float]] = {}
    rows["memory"] = await measure(MemoryStore(), args.turns, args.reps)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(f"sqlite:///{Path(tmp) / 'bench.db'}")
        try:
            rows["sqlite"] = await measure(store, args.turns, args.reps)
        finally:
            await store.close()
    labels = list(next(iter(rows.values())))
    print(f"{args.turns} turns; median ms of {args.reps}")
    print(f"{'':28}" + "".join(f"{k:>10}" for k in rows))
    for label in labels:
        print(f"{label:28}" + "".join(f"{rows[k][label]:>10.2f}" for k in rows))


if __name__ == "__main__":
    asyncio.run(main())
