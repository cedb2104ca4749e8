"""The HTTP service's speed: a turn with one handoff through the API on loopback, with
the zero-latency offline model, against the same turn in process; live-event latency on
the same and on another process; memory per idle SSE subscriber.

    PYTHONPATH=src python bench/server/run.py [--store sqlite|postgres|all] [--quick]

Servers are real `handoffs serve` processes (uvicorn, one worker) on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

SRC = Path(__file__).resolve().parents[2] / "src"
PG = os.environ.get("HANDOFFS_BENCH_PG", "postgresql://127.0.0.1:5432/test")
TEXT = "I was charged twice on my invoice"  # triage hands off to billing, billing answers


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def start(store: str, cwd: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "HANDOFFS_OPERATOR_KEY": "bench"}
    proc = subprocess.Popen([sys.executable, "-m", "handoffs.cli", "serve", "--demo",
                             "--store", store, "--port", str(port), "--log-level", "error"],
                            cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    for _ in range(200):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz").status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.05)
    raise RuntimeError("server did not start")


async def http_turns(url: str, clients: int, turns: int) -> dict[str, float]:
    lat: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=60,
                                 limits=httpx.Limits(max_connections=clients + 5)) as c:
        async def one(_: int) -> None:
            for _ in range(turns):
                s = (await c.post("/v1/sessions", json={})).json()
                t0 = time.perf_counter()
                r = await c.post(f"/v1/sessions/{s['id']}/messages", json={"text": TEXT},
                                 headers={"Authorization": f"Bearer {s['token']}"})
                lat.append(time.perf_counter() - t0)
                assert r.json()["agent"] == "billing", r.text
        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(clients)))
        wall = time.perf_counter() - t0
    return {"p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3,
            "turns_per_s": len(lat) / wall}


async def in_process(store: str, n: int) -> dict[str, float]:
    from handoffs import Runner
    from handoffs.cli.offline import offline_model
    from handoffs.examples.support import build_team

    team = build_team()
    runner = Runner(team, model=offline_model(team), store=store)
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = await runner.run(f"bench-{uuid.uuid4().hex}", TEXT)
        lat.append(time.perf_counter() - t0)
        assert r.agent == "billing"
    await runner.store.close()
    return {"p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3}


async def live_latency(post_url: str, watch_url: str, n: int) -> dict[str, float]:
    """From the terminal event's commit (approximated by its `at`, taken just before the
    commit) to its arrival at an SSE subscriber."""
    lat: list[float] = []
    async with httpx.AsyncClient(timeout=60) as c:
        s = (await c.post(post_url + "/v1/sessions", json={})).json()
        h = {"Authorization": f"Bearer {s['token']}"}
        async with c.stream("GET", f"{watch_url}/v1/sessions/{s['id']}/events",
                            headers=h) as r:
            lines = r.aiter_lines()
            for _ in range(n):
                post = asyncio.ensure_future(c.post(
                    f"{post_url}/v1/sessions/{s['id']}/messages", json={"text": TEXT},
                    headers=h))
                async for line in lines:
                    if line.startswith("data:") and '"run_completed"' in line:
                        lat.append(time.time() - json.loads(line[5:])["at"])
                        break
                await post
    return {"p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3}


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def idle_memory(url: str, pid: int, n: int) -> float:
    async with httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=n + 10)) as c:
        s = (await c.post(url + "/v1/sessions", json={})).json()
        h = {"Authorization": f"Bearer {s['token']}"}
        before = rss_kb(pid)
        streams = []
        for _ in range(n):
            cm = c.stream("GET", f"{url}/v1/sessions/{s['id']}/events", headers=h)
            streams.append(cm)
            await cm.__aenter__()
        await asyncio.sleep(1)
        after = rss_kb(pid)
        for cm in streams:
            await cm.__aexit__(None, None, None)
    return (after - before) / n


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", default="all")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    kinds = ["sqlite", "postgres"] if args.store == "all" else [args.store]
    turns = {1: 200, 10: 30, 100: 4} if not args.quick else {1: 50, 10: 10, 100: 2}
    out: dict[str, Any] = {}
    for kind in kinds:
        tmp = tempfile.mkdtemp()
        store = (f"sqlite:///{tmp}/bench.db" if kind == "sqlite"
                 else f"{PG}?schema=bench_{uuid.uuid4().hex[:8]}")
        a = start(store, tmp, 18701)
        b = start(store, tmp, 18702)
        try:
            ua, ub = "http://127.0.0.1:18701", "http://127.0.0.1:18702"
            await http_turns(ua, 4, 10)  # warm-up
            res: dict[str, Any] = {"in_process": await in_process(store, 200)}
            for clients, n in turns.items():
                res[f"http_{clients}_clients"] = await http_turns(ua, clients, n)
            res["live_same_process"] = await live_latency(ua, ua, 50)
            res["live_other_process"] = await live_latency(ua, ub, 50)
            res["idle_sse_kb_per_subscriber"] = await idle_memory(ua, a.pid, 1000)
            out[kind] = res
        finally:
            for p in (a, b):
                p.terminate()
                p.wait()
        print(json.dumps({kind: out[kind]}, indent=1), flush=True)
    Path(__file__).with_name("results.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
