"""The HTTP service's speed: a turn with one handoff through the API on loopback, with
the zero-latency offline model, against the same turn in process; live-event latency on
the same and on another process; memory per idle SSE subscriber.

    PYTHONPATH=src python bench/server/run.py [--store memory|sqlite|postgres|all] [--quick]
    PYTHONPATH=src python bench/server/run.py --store memory --base /tmp/base/src  # before/after

Servers are real `handoffs serve` processes (uvicorn, one worker) on 127.0.0.1. The
HTTP turn's overhead (`overhead_p50_ms`) is the p50 of a turn through the API with one
client (the client's own HTTP work included) minus the p50 of the same turn in process.
`client_floor` is the p50 of `GET /healthz` through the same client: what any request
costs before the server does anything of its own (httpx spends most of it). The rows
with 10 and 100 clients at once use plain-socket clients (`bench/plain_http.py`): with
a hundred connections httpx's own pool stalls for seconds, which measured the client.
`http_1_client_raw` is the turn through a minimal keep-alive HTTP/1.1 client (a plain
socket, as `bench/live_events.py` uses), so `raw_overhead_p50_ms` is the server's share
(with `--base`, also the server process's CPU per session created and turn run).
The memory store lives in one process, so its row has no other-process figure.
`--base SRC` also serves the turn from another source tree (a worktree of an earlier
commit) beside this one and measures both in alternating rounds: a before/after in one
run (printed, not written to `results.json`).
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from plain_http import Plain

SRC = Path(__file__).resolve().parents[2] / "src"
PG = os.environ.get("HANDOFFS_BENCH_PG", "postgresql://127.0.0.1:5432/test")
TEXT = "I was charged twice on my invoice"  # triage hands off to billing, billing answers


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def cpu_s(pid: int) -> float:
    """CPU seconds a process has used (Linux, to the nanosecond: `/proc/PID/schedstat`;
    `/proc/PID/stat` counts 10 ms ticks, too coarse for 50 turns)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


def start(store: str, cwd: str, port: int, src: Path = SRC) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(src), "HANDOFFS_OPERATOR_KEY": "bench"}
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


async def raw_turns(port: int, n: int) -> list[float]:
    """Seconds per turn through one kept-alive connection, a plain socket: the client's
    own work is a few microseconds, so what is left is loopback and the server."""
    c = await Plain.open(f"http://127.0.0.1:{port}")
    lat = []
    try:
        for _ in range(n):
            _, s = await c.post("/v1/sessions", {})
            t0 = time.perf_counter()
            _, r = await c.post(f"/v1/sessions/{s['id']}/messages", {"text": TEXT}, s["token"])
            lat.append(time.perf_counter() - t0)
            assert r["agent"] == "billing", r
    finally:
        c.close()
    return lat


async def plain_turns(url: str, clients: int, turns: int) -> dict[str, float]:
    """`clients` plain-socket clients at once, each a kept-alive connection creating a
    session and running a turn `turns` times: the server's throughput, not httpx's
    (whose pool, at 100 connections, stalls for seconds: 52 turns/s and a 5.8 s p99
    where these clients get 551 turns/s and 177 ms from the same server)."""
    lat: list[float] = []

    async def one() -> None:
        c = await Plain.open(url)
        try:
            for _ in range(turns):
                _, s = await c.post("/v1/sessions", {})
                t0 = time.perf_counter()
                _, r = await c.post(f"/v1/sessions/{s['id']}/messages", {"text": TEXT},
                                    s["token"])
                lat.append(time.perf_counter() - t0)
                assert r["agent"] == "billing", r
        finally:
            c.close()

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(clients)))
    wall = time.perf_counter() - t0
    return {"p50_ms": pct(lat, 50) * 1e3, "p99_ms": pct(lat, 99) * 1e3,
            "turns_per_s": len(lat) / wall}


async def floor(url: str, n: int) -> list[float]:
    """Seconds per `GET /healthz` through httpx: the client's and the framework's share."""
    lat = []
    async with httpx.AsyncClient(base_url=url, timeout=60) as c:
        for _ in range(n):
            t0 = time.perf_counter()
            r = await c.get("/healthz")
            lat.append(time.perf_counter() - t0)
            assert r.status_code == 200
    return lat


async def compare(base: Path, rounds: int) -> dict[str, Any]:
    """The 1-client turn on the memory store, on a server from this tree and one from
    `base`, in alternating rounds."""
    tmp = tempfile.mkdtemp()
    servers = {"after": start("memory://", tmp, 18703),
               "before": start("memory://", tmp, 18704, base.resolve())}
    ports = {"after": 18703, "before": 18704}
    lat: dict[str, dict[str, list[float]]] = {k: {"http": [], "raw": [], "floor": []}
                                              for k in servers}
    cpu: dict[str, list[float]] = {k: [] for k in servers}
    try:
        for port in ports.values():  # warm-up
            await http_turns(f"http://127.0.0.1:{port}", 1, 50)
            await raw_turns(port, 50)
        for i in range(rounds):
            for k in (list(ports) if i % 2 == 0 else list(ports)[::-1]):
                url = f"http://127.0.0.1:{ports[k]}"
                async with httpx.AsyncClient(base_url=url, timeout=60) as c:
                    for _ in range(50):
                        s = (await c.post("/v1/sessions", json={})).json()
                        t0 = time.perf_counter()
                        await c.post(f"/v1/sessions/{s['id']}/messages", json={"text": TEXT},
                                     headers={"Authorization": f"Bearer {s['token']}"})
                        lat[k]["http"].append(time.perf_counter() - t0)
                c0 = cpu_s(servers[k].pid)
                lat[k]["raw"] += await raw_turns(ports[k], 50)
                cpu[k].append((cpu_s(servers[k].pid) - c0) / 50)
                lat[k]["floor"] += await floor(url, 50)
    finally:
        for p in servers.values():
            p.terminate()
            p.wait()
    inproc = await in_process("memory://", 300)
    out: dict[str, Any] = {"in_process_p50_ms": inproc["p50_ms"], "base": str(base)}
    for k, d in lat.items():
        out[k] = {f"{name}_p50_ms": pct(xs, 50) * 1e3 for name, xs in d.items()}
        out[k]["overhead_p50_ms"] = out[k]["http_p50_ms"] - inproc["p50_ms"]
        out[k]["raw_overhead_p50_ms"] = out[k]["raw_p50_ms"] - inproc["p50_ms"]
        # The median round: a round with a full garbage collection, or another
        # program's burst, moves a sum.
        out[k]["server_cpu_us_per_session_and_turn"] = pct(cpu[k], 50) * 1e6
    return out


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
    ap.add_argument("--base", type=Path, default=None, metavar="SRC",
                    help="only compare the 1-client memory-store turn with a server "
                    "from this source tree")
    ap.add_argument("--rounds", type=int, default=10, help="rounds of --base")
    args = ap.parse_args()
    if args.base is not None:
        res = await compare(args.base, args.rounds)
        print(json.dumps(res, indent=1))
        return
    kinds = ["memory", "sqlite", "postgres"] if args.store == "all" else [args.store]
    turns = {1: 200, 10: 30, 100: 4} if not args.quick else {1: 50, 10: 10, 100: 2}
    out: dict[str, Any] = {}
    for kind in kinds:
        tmp = tempfile.mkdtemp()
        store = ("memory://" if kind == "memory" else f"sqlite:///{tmp}/bench.db"
                 if kind == "sqlite" else f"{PG}?schema=bench_{uuid.uuid4().hex[:8]}")
        a = start(store, tmp, 18701)
        b = start(store, tmp, 18702) if kind != "memory" else None
        try:
            ua, ub = "http://127.0.0.1:18701", "http://127.0.0.1:18702"
            await http_turns(ua, 4, 10)  # warm-up
            res: dict[str, Any] = {"in_process": await in_process(store, 200)}
            for clients, n in turns.items():  # one client: httpx (its floor is below)
                row = http_turns if clients == 1 else plain_turns
                res[f"http_{clients}_clients"] = await row(ua, clients, n)
            res["overhead_p50_ms"] = (res["http_1_clients"]["p50_ms"]
                                      - res["in_process"]["p50_ms"])
            res["client_floor"] = {"p50_ms": pct(await floor(ua, 200), 50) * 1e3}
            raw = await raw_turns(18701, 200 if not args.quick else 50)
            res["http_1_client_raw"] = {"p50_ms": pct(raw, 50) * 1e3,
                                        "p99_ms": pct(raw, 99) * 1e3}
            res["raw_overhead_p50_ms"] = (res["http_1_client_raw"]["p50_ms"]
                                          - res["in_process"]["p50_ms"])
            res["live_same_process"] = await live_latency(ua, ua, 50)
            if b is not None:
                res["live_other_process"] = await live_latency(ua, ub, 50)
            res["idle_sse_kb_per_subscriber"] = await idle_memory(ua, a.pid, 1000)
            out[kind] = res
        finally:
            for p in (a, b):
                if p is None:
                    continue
                p.terminate()
                p.wait()
        print(json.dumps({kind: out[kind]}, indent=1), flush=True)
    Path(__file__).with_name("results.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
