"""Shared helpers for the peer benchmarks (stdlib only: imported inside every peer's venv).

Each peer script defines its scenario through a small adapter and calls :func:`main`, which
parses the CLI, runs the requested figure and prints exactly one JSON object on stdout.

The scenario, identical for every framework: agents ``agent_0 .. agent_H``; within one user turn
``agent_i`` hands off to ``agent_{i+1}`` through the framework's own LLM-driven handoff (a
scripted, zero-latency model emits the framework's handoff tool call) and ``agent_H`` answers
``done``. After every timed turn, outside the timing, ``Adapter.check`` verifies the answer, the
final agent and the number of handoffs from the framework's own result.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

ANSWER = "done"


def agent_name(i: int) -> str:
    return f"agent_{i}"


class CheckFailed(Exception):
    """A turn did not do what the scenario says (wrong answer, agent or handoff count)."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def rss_bytes() -> int:
    """Resident set size from /proc (Linux); 0 where unavailable."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def median(xs: list[float]) -> float:
    return statistics.median(xs)


@dataclass
class Turn:
    """What a peer returns from one turn, read from the framework's own result or events."""

    answer: str
    last_agent: str
    handoffs: int


def check_turn(turn: Turn, hops: int, where: str) -> None:
    expect(turn.answer.strip() == ANSWER, f"{where}: answer {turn.answer!r} != {ANSWER!r}")
    expect(
        turn.last_agent == agent_name(hops),
        f"{where}: last agent {turn.last_agent!r} != {agent_name(hops)!r}",
    )
    expect(turn.handoffs == hops, f"{where}: {turn.handoffs} handoffs != {hops}")


class Adapter:
    """One framework's side of the scenario. Subclasses implement the async hooks.

    ``build(hops)`` returns a team object; ``turn(team, conv)`` runs one user turn on it and returns
    an opaque result (timed); ``inspect(team, result, conv)`` turns that result into a
    :class:`Turn` (not timed); ``reset(team)`` clears per-turn state of stateful teams (not
    timed). ``conversation(hops, conv)`` builds whatever one concurrent conversation needs
    (defaults to a shared team); the memory figure keeps its return value and the result alive.
    """

    framework: str = ""
    version: str = ""
    # What ``import`` times: the module(s) the scenario needs to build its team, comma-separated.
    import_module: str = ""

    async def build(self, hops: int, persisted: str | None = None) -> Any:
        raise NotImplementedError

    async def turn(self, team: Any, conv: int) -> Any:
        raise NotImplementedError

    async def inspect(self, team: Any, result: Any, conv: int) -> Turn:
        raise NotImplementedError

    async def reset(self, team: Any) -> None:
        return None

    async def conversation(self, shared: Any, hops: int, conv: int) -> Any:
        return shared

    async def close(self, team: Any) -> None:
        return None


async def _timed_turn(adapter: Adapter, team: Any, hops: int, conv: int, where: str) -> float:
    await adapter.reset(team)
    t0 = time.perf_counter()
    result = await adapter.turn(team, conv)
    dt = time.perf_counter() - t0
    check_turn(await adapter.inspect(team, result, conv), hops, where)
    return dt


async def fig_per_handoff(adapter: Adapter, args: argparse.Namespace) -> dict[str, Any]:
    hmax = args.hops
    team0 = await adapter.build(0)
    teamh = await adapter.build(hmax)
    conv = 0
    s0: list[float] = []
    sh: list[float] = []
    for rep in range(args.warmup + args.reps):
        for hops, team, out in ((0, team0, s0), (hmax, teamh, sh)):
            conv += 1
            dt = await _timed_turn(adapter, team, hops, conv, f"per_handoff H={hops} rep {rep}")
            if rep >= args.warmup:
                out.append(dt)
    await adapter.close(team0)
    await adapter.close(teamh)
    m0, mh = median(s0), median(sh)
    return {
        "hops": hmax,
        "samples_s": sh,
        "median_s": mh,
        "samples_h0_s": s0,
        "median_h0_s": m0,
        "per_handoff_s": (mh - m0) / hmax,
    }


async def fig_turn(adapter: Adapter, args: argparse.Namespace, persisted: bool) -> dict[str, Any]:
    samples: list[float] = []
    extra: dict[str, Any] = {"hops": 1}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoints.sqlite") if persisted else None
        team = await adapter.build(1, persisted=path)
        for rep in range(args.warmup + args.reps):
            dt = await _timed_turn(adapter, team, 1, rep + 1, f"turn rep {rep}")
            if rep >= args.warmup:
                samples.append(dt)
        await adapter.close(team)
        if path is not None:
            extra["db_bytes"] = os.path.getsize(path)
    return {"samples_s": samples, "median_s": median(samples), **extra}


async def fig_memory(adapter: Adapter, args: argparse.Namespace) -> dict[str, Any]:
    n = args.convs
    # Warm up every code path (lazy imports, caches) before measuring.
    shared_warm = await adapter.build(1)
    for c in range(3):
        conv = await adapter.conversation(shared_warm, 1, -1 - c)
        res = await adapter.turn(conv, -1 - c)
        check_turn(await adapter.inspect(conv, res, -1 - c), 1, "memory warm-up")
    del shared_warm, conv, res
    gc.collect()

    # --rss: the same run without tracemalloc, reading RSS instead. RSS also sees native
    # allocations that tracemalloc cannot (e.g. sqlite's own heap), plus allocator slack.
    traced = not args.rss
    if traced:
        tracemalloc.start()
    shared = await adapter.build(1)
    gc.collect()
    rss_base = rss_bytes()
    base = tracemalloc.get_traced_memory()[0] if traced else 0
    if traced:
        tracemalloc.reset_peak()
    convs = [await adapter.conversation(shared, 1, c) for c in range(n)]
    results = await asyncio.gather(*(adapter.turn(convs[c], c) for c in range(n)))
    peak = tracemalloc.get_traced_memory()[1] if traced else 0
    # One pass of the event loop before counting: until this coroutine next awaits, the
    # loop still holds gather's future, and through it the benchmark's own n finished
    # tasks (about 450 B each, whatever the framework), which no framework retains.
    await asyncio.sleep(0)
    gc.collect()
    retained = tracemalloc.get_traced_memory()[0] if traced else 0
    rss_retained = rss_bytes() - rss_base
    if traced:
        tracemalloc.stop()
    # The conversations' state (convs, results, shared checkpointer) is still referenced here.
    for c in range(n):
        check_turn(await adapter.inspect(convs[c], results[c], c), 1, f"memory conv {c}")
    out: dict[str, Any] = {"conversations": n, "hops": 1, "samples_s": [], "median_s": None}
    if traced:
        out["peak_per_conv_bytes"] = (peak - base) / n
        out["retained_per_conv_bytes"] = (retained - base) / n
    else:
        out["rss_retained_per_conv_bytes"] = rss_retained / n
    del convs, results, shared
    return out


def fig_import(adapter: Adapter, args: argparse.Namespace) -> dict[str, Any]:
    """A fresh interpreter importing what builds and runs a team, from compiled bytecode.

    An installed package loads `.pyc` files (pip compiles them at install), so every
    framework is timed that way: one untimed import first, with bytecode writing on, so
    that the modules of an editable install (ours, from `src/`) or a package installed
    with `--no-compile` are cached too. (PYTHONDONTWRITEBYTECODE=1, set on some machines,
    made our figure compile every module from source while the peers loaded bytecode.)
    """
    code = (
        "import time; t=time.perf_counter(); "
        f"import {adapter.import_module}; print(time.perf_counter()-t)"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env)
    samples = []
    for _ in range(args.import_reps):
        out = subprocess.run(
            [sys.executable, "-c", code], check=True, capture_output=True, text=True
        ).stdout
        samples.append(float(out.strip().splitlines()[-1]))
    return {"module": adapter.import_module, "samples_s": samples, "median_s": median(samples)}


FIGURES = ("per_handoff", "turn", "memory", "import", "persisted_turn")


def parse_args(argv: list[str] | None, figures: tuple[str, ...]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Peer handoff benchmark; prints one JSON object.")
    p.add_argument("--figure", choices=figures, required=True)
    p.add_argument("--reps", type=int, default=30, help="timed reps (after warm-up)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--hops", type=int, default=20, help="H for per_handoff (vs H=0)")
    p.add_argument("--convs", type=int, default=1000, help="conversations for memory")
    p.add_argument("--import-reps", type=int, default=5)
    p.add_argument("--rss", action="store_true", help="memory: RSS delta, no tracemalloc")
    return p.parse_args(argv)


def main(
    make_adapter: Callable[[], Adapter],
    argv: list[str] | None = None,
    figures: tuple[str, ...] = ("per_handoff", "turn", "memory", "import"),
    run: Callable[[Awaitable[Any]], Any] = asyncio.run,
) -> None:
    args = parse_args(argv, figures)
    adapter = make_adapter()
    try:
        if args.figure == "import":
            body = fig_import(adapter, args)
        elif args.figure == "per_handoff":
            body = run(fig_per_handoff(adapter, args))
        elif args.figure == "memory":
            body = run(fig_memory(adapter, args))
        else:
            body = run(fig_turn(adapter, args, persisted=args.figure == "persisted_turn"))
    except CheckFailed as exc:
        print(f"{adapter.framework}: check failed: {exc}", file=sys.stderr)
        sys.exit(2)
    record = {
        "framework": adapter.framework,
        "version": adapter.version,
        "figure": args.figure,
        "python": sys.version.split()[0],
        **body,
    }
    print(json.dumps(record))
