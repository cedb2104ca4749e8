"""handoffs on the shared benchmark scenario (see bench/peers/common.py), plus our own figures.

    python bench/ours.py --figure per_handoff      # (a) same contract as the peers
    python bench/ours.py --figure turn             # (b)
    python bench/ours.py --figure memory           # (c)
    python bench/ours.py --figure import           # (d) handoffs.runtime.runner (build + run)
    python bench/ours.py --figure import_bare      # (d) bare `import handoffs`
    python bench/ours.py --figure persisted_turn   # (e) the H=1 turn on a SQLite store
    python bench/ours.py --figure persisted_turn_pg  # (e) same on PostgreSQL (exit 3 if no
                                                   #     server at HANDOFFS_BENCH_PG_DSN)
    python bench/ours.py --figure history          # (e) per handoff at 10 vs 10,000 messages
    python bench/ours.py --figure streamed         # (e) the H=1 turn through runner.stream
    python bench/ours.py --summary                 # everything above, as a table (make bench)

The model is a zero-latency `Model` that returns the handoff call to the next agent, built
per call like the peers' scripted models.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))

import common

import handoffs
import stores  # bench/stores.py: the PostgreSQL helpers
from handoffs import Agent, Runner, Team
from handoffs.core.messages import AssistantMessage, ToolCall, UserMessage
from handoffs.core.session import SessionState, ViewSpec
from handoffs.models import ModelRequest, ModelResponse, TextDelta


class ChainModel:
    """agent_i calls transfer_to_agent_{i+1}; the last agent answers `done`."""

    def __init__(self, hops: int) -> None:
        self.hops = hops
        self.calls = 0

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        i = int(request.agent[6:])
        if i < self.hops:
            call = ToolCall(f"call_{self.calls}", f"transfer_to_agent_{i + 1}",
                            '{"reason": "next"}')
            return ModelResponse("", (call,))
        return ModelResponse(common.ANSWER)

    async def stream(self, request: ModelRequest) -> Any:
        response = await self.complete(request)
        if response.text:
            yield TextDelta(response.text)
        yield response


def chain_team(hops: int) -> Team:
    agents = [
        Agent(common.agent_name(i), instructions=f"You are agent {i}.",
              handoffs=[common.agent_name(i + 1)] if i < hops else ())
        for i in range(hops + 1)
    ]
    # The scenario is a chain longer than our default per-turn handoff limit.
    policy = handoffs.HandoffPolicy(max_handoffs_per_turn=max(hops, 5))
    return Team(agents, policy=policy)


class HandoffsAdapter(common.Adapter):
    framework = "handoffs"
    version = handoffs.__version__
    # What a user imports to build and run a team: the package and the runtime. Bare
    # `import handoffs` is lazy (PEP 562); the `import_bare` figure times that separately.
    import_module = "handoffs.runtime.runner"

    def __init__(self, store: Any = None) -> None:
        self.store = store

    async def build(self, hops: int, persisted: str | None = None) -> Any:
        store = self.store
        if persisted is not None:
            store = f"sqlite:///{persisted}"
        return Runner(chain_team(hops), model=ChainModel(hops), store=store,
                      max_steps=hops + 5)

    async def turn(self, team: Any, conv: int) -> Any:
        return await team.run(f"conv-{conv}", "go")

    async def inspect(self, team: Any, result: Any, conv: int) -> common.Turn:
        return common.Turn(result.output, result.agent,
                           sum(1 for r in result.handoffs if r.accepted))


HISTORY_SIZES = (10, 100, 1_000, 10_000)


async def fig_history(args: argparse.Namespace) -> dict[str, Any]:
    """Per-handoff time with 10 and with 10,000 earlier messages in the session."""
    hops = args.hops
    out: dict[str, Any] = {"hops": hops}
    for size in HISTORY_SIZES:
        medians = {}
        for h in (0, hops):
            runner = Runner(chain_team(h), model=ChainModel(h), max_steps=h + 5)
            state = SessionState("long", active_agent="agent_0")
            for i in range(size // 2):
                state.messages.append(UserMessage(f"question {i}", "agent_0"))
                state.messages.append(AssistantMessage(f"answer {i}", "agent_0"))
            store = runner.store
            await store.commit(state, state.checkpoint())
            samples = []
            for rep in range(args.warmup + args.reps):
                state.active_agent = "agent_0"
                state.view = ViewSpec()
                t0 = time.perf_counter()
                result = await runner.run("long", "go")
                dt = time.perf_counter() - t0
                common.check_turn(common.Turn(result.output, result.agent, sum(
                    1 for r in result.handoffs if r.accepted)), h, f"history {size}")
                if rep >= args.warmup:
                    samples.append(dt)
            medians[h] = statistics.median(samples)
        out[f"per_handoff_at_{size}_s"] = (medians[hops] - medians[0]) / hops
    out["ratio_10000_vs_10"] = out["per_handoff_at_10000_s"] / out["per_handoff_at_10_s"]
    out["samples_s"] = []
    out["median_s"] = out["per_handoff_at_10000_s"]
    return out


async def fig_streamed(args: argparse.Namespace) -> dict[str, Any]:
    """The H=1 turn through `runner.stream` (every event consumed) beside `runner.run`."""
    runner = Runner(chain_team(1), model=ChainModel(1))
    run_s: list[float] = []
    stream_s: list[float] = []
    for rep in range(args.warmup + args.reps):
        t0 = time.perf_counter()
        result = await runner.run(f"r{rep}", "go")
        t1 = time.perf_counter()
        events = [e async for e in runner.stream(f"s{rep}", "go")]
        t2 = time.perf_counter()
        assert result.output == common.ANSWER and events[-1].result.output == common.ANSWER
        if rep >= args.warmup:
            run_s.append(t1 - t0)
            stream_s.append(t2 - t1)
    return {"samples_s": stream_s, "median_s": statistics.median(stream_s),
            "median_run_s": statistics.median(run_s)}


PG_DSN_ENV = "HANDOFFS_BENCH_PG_DSN"


class PostgresAdapter(HandoffsAdapter):
    """The H=1 turn on a PostgresStore, in a fresh schema dropped afterwards."""

    def __init__(self, dsn: str) -> None:
        self.schema = f"bench_{os.getpid()}_{int(time.time())}"
        sep = "&" if "?" in dsn else "?"
        super().__init__(store=f"{dsn}{sep}schema={self.schema}")
        self.dsn = dsn

    async def build(self, hops: int, persisted: str | None = None) -> Any:
        return await super().build(hops)

    async def close(self, team: Any) -> None:
        await team.store.close()
        await stores.drop_schema(self.schema, self.dsn)


def persisted_turn_pg(argv: list[str]) -> None:
    """Exit 3 (not a failed check) when no PostgreSQL server answers at the DSN."""
    dsn = stores.PG_DSN
    problem = asyncio.run(stores.pg_reachable(dsn))
    if problem is not None:
        print(f"persisted_turn_pg: no PostgreSQL at {dsn} (set {PG_DSN_ENV}): {problem}",
              file=sys.stderr)
        sys.exit(3)
    args = common.parse_args(argv, ("persisted_turn_pg",))
    adapter = PostgresAdapter(dsn)
    try:
        body = asyncio.run(common.fig_turn(adapter, args, persisted=False))
    except common.CheckFailed as exc:
        print(f"handoffs: check failed: {exc}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"framework": "handoffs", "version": handoffs.__version__,
                      "figure": "persisted_turn_pg", "python": sys.version.split()[0],
                      "store": "postgresql", **body}))


def summary(args: argparse.Namespace) -> None:
    """Every figure of ours, as a table (`make bench`)."""
    rows = []
    for figure in ("per_handoff", "turn", "memory", "import", "history", "streamed"):
        argv = ["--figure", figure, "--reps", str(args.reps), "--warmup", str(args.warmup),
                "--convs", str(args.convs)]
        import subprocess

        out = subprocess.run([sys.executable, __file__, *argv], capture_output=True,
                             text=True, check=True).stdout
        rows.append(json.loads(out))
    by = {r["figure"]: r for r in rows}
    us = 1e6
    print("handoffs benchmark (zero-latency model, in-memory store; medians)")
    print(f"  per handoff (H=20 vs H=0)        {by['per_handoff']['per_handoff_s'] * us:8.1f} µs"
          "   budget 20 µs")
    print(f"  whole turn, H=1                  {by['turn']['median_s'] * us:8.1f} µs"
          "   budget 60 µs")
    print(f"  streamed turn, H=1               {by['streamed']['median_s'] * us:8.1f} µs")
    print(f"  retained per conversation        {by['memory']['retained_per_conv_bytes']:8.0f} B"
          "    budget 8 KB")
    print(f"  peak per conversation            {by['memory']['peak_per_conv_bytes']:8.0f} B")
    print(f"  import handoffs                  {by['import']['median_s'] * 1e3:8.1f} ms"
          "   budget 100 ms")
    h = by["history"]
    print(f"  per handoff at 10 messages       {h['per_handoff_at_10_s'] * us:8.1f} µs")
    print(f"  per handoff at 10,000 messages   {h['per_handoff_at_10000_s'] * us:8.1f} µs"
          f"   ratio {h['ratio_10000_vs_10']:.2f}")
    if args.json:
        print(json.dumps(rows))


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--summary" in argv or not argv:
        p = argparse.ArgumentParser()
        p.add_argument("--summary", action="store_true")
        p.add_argument("--reps", type=int, default=30)
        p.add_argument("--warmup", type=int, default=5)
        p.add_argument("--convs", type=int, default=1000)
        p.add_argument("--json", action="store_true")
        summary(p.parse_args(argv))
        return
    if "import_bare" in argv:
        args = common.parse_args(argv, ("import_bare",))
        bare = HandoffsAdapter()
        bare.import_module = "handoffs"
        print(json.dumps({"framework": "handoffs", "version": handoffs.__version__,
                          "figure": "import_bare", "python": sys.version.split()[0],
                          **common.fig_import(bare, args)}))
        return
    if "persisted_turn_pg" in argv:
        persisted_turn_pg(argv)
        return
    if "history" in argv or "streamed" in argv:
        args = common.parse_args(argv, ("history", "streamed"))
        body = asyncio.run(fig_history(args) if args.figure == "history"
                           else fig_streamed(args))
        print(json.dumps({"framework": "handoffs", "version": handoffs.__version__,
                          "figure": args.figure, "python": sys.version.split()[0], **body}))
        return
    common.main(HandoffsAdapter, argv,
                figures=("per_handoff", "turn", "memory", "import", "persisted_turn"))


if __name__ == "__main__":
    main()
