"""Live events across processes: from the moment server A emits an event of a running
turn to the moment an SSE subscriber on server B receives it, with many sessions at once.

    .venv/bin/python bench/live_events.py                  # 50 sessions, prints the figures
    .venv/bin/python bench/live_events.py --docs           # also bench/results/live-events.json
                                                           # and its section of docs/benchmarks.md
    .venv/bin/python bench/live_events.py --sessions 10 --turns 2 --rounds 1  # quicker
    .venv/bin/python bench/live_events.py --base /tmp/base/src  # before/after, one run

Two real `handoffs serve` processes (A, B) on one PostgreSQL database (127.0.0.1:5432,
database `test`, or HANDOFFS_BENCH_PG_DSN; a scratch schema dropped afterwards) serve
`bench/live/team.py`, whose model streams each answer in 20 pieces 25 ms apart. Each
session has one SSE subscriber on B; every session runs `--turns` turns on A (plus one
warm-up turn), all sessions at once; `--rounds` such runs, interleaved with the
same-process ones, are pooled (the machine's load moves between them). For each event
before the turn's end (`run_started`, `agent_started`, `text_delta`, `message`: emitted
mid-turn, before anything of the turn is stored) the latency is the subscriber's clock
at arrival minus the event's `at` (A's clock when it emitted it; one machine, one clock).
The same run with the subscribers on A gives the in-process figure beside it. The
client posts the turns and reads the streams on plain sockets: httpx would spend more
CPU per event than server B, CPU the servers on the same machine would wait for. Every
subscriber also checks it saw each number once and in order. `--base SRC` also runs
the cross-process rounds on a second pair of servers from another source tree (a
worktree of an earlier commit), interleaved with these, on a schema of their own in the
same database: a before/after in one run, on the same machine load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
from plain_http import Plain

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
TEAM = ROOT / "bench" / "live" / "team.py"
RESULTS = ROOT / "bench" / "results" / "live-events.json"
DOC = ROOT / "docs" / "benchmarks.md"
PG_DSN = os.environ.get("HANDOFFS_BENCH_PG_DSN", "postgresql://127.0.0.1:5432/test")
TERMINAL = ("run_completed", "run_failed")
BEGIN, END = "<!-- live-events: bench/live_events.py -->", "<!-- /live-events -->"
COMMAND = ".venv/bin/python bench/live_events.py --docs"


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def serve(store: str, cwd: str, src: Path = SRC) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(src), "HANDOFFS_OPERATOR_KEY": "bench"}
    proc = subprocess.Popen([sys.executable, "-m", "handoffs.cli", "serve", f"{TEAM}:runner",
                             "--store", store, "--port", str(port), "--log-level", "warning"],
                            cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(url + "/readyz", timeout=1).status_code == 200:
                return url, proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("handoffs serve did not start")
        time.sleep(0.05)


async def follow(url: str, sid: str, token: str, turns: int, ready: asyncio.Event,
                 out: dict[str, Any]) -> None:
    """One SSE subscriber: the latency of every mid-turn event after the warm-up turn.
    A plain socket and a few lines of parsing: a full HTTP client would spend more CPU
    than the servers it measures, on one machine."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(f"GET /v1/sessions/{sid}/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
                 f"Authorization: Bearer {token}\r\n\r\n".encode())
    status = await reader.readline()
    assert b" 200 " in status, status
    chunked = False
    while (line := await reader.readline()) not in (b"\r\n", b""):
        chunked |= line.lower().startswith(b"transfer-encoding:") and b"chunked" in line
    ended, last, buf = 0, -1, b""
    try:
        while True:
            if chunked:
                size = int((await reader.readline()).split(b";")[0], 16)
                if size == 0:
                    return
                buf += (await reader.readexactly(size + 2))[:-2]
            else:
                data = await reader.read(65536)
                if not data:
                    return
                buf += data
            got = time.time()
            while b"\n\n" in buf:
                frame, buf = buf.split(b"\n\n", 1)
                ready.set()  # `retry:` comes once the subscription is in place
                data_line = next((x for x in frame.split(b"\n") if x.startswith(b"data:")),
                                 None)
                if data_line is None:
                    continue
                event = json.loads(data_line[5:])
                if event["seq"] <= last:
                    out["repeated_or_out_of_order"] += 1
                last = event["seq"]
                if event["type"] in TERMINAL:
                    ended += 1
                    if ended == turns + 1:
                        return
                elif ended >= 1:
                    ms = (got - event["at"]) * 1e3
                    out["ms"].append(ms)
                    out["by_type"].setdefault(event["type"], []).append(ms)
    finally:
        writer.close()


async def run(watch: str, post: str, sessions: int, turns: int,
              pids: dict[str, int]) -> dict[str, Any]:
    out: dict[str, Any] = {"ms": [], "repeated_or_out_of_order": 0, "by_type": {}}
    conns = [await Plain.open(post) for _ in range(sessions)]
    try:
        made = []
        for conn in conns:
            status, s = await conn.post("/v1/sessions", {})
            assert status in (200, 201), s
            made.append(s)
        readies = [asyncio.Event() for _ in made]
        followers = [asyncio.create_task(follow(watch, s["id"], s["token"], turns, ready,
                                                out))
                     for s, ready in zip(made, readies, strict=True)]
        await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 30)

        async def talk(conn: Plain, s: dict[str, Any]) -> None:
            for i in range(turns + 1):
                status, r = await conn.post(f"/v1/sessions/{s['id']}/messages",
                                            {"text": f"question {i}"}, s["token"])
                assert status == 200 and r["status"] == "completed", r

        t0, c0 = time.perf_counter(), time.process_time()
        cpu0 = {k: cpu_s(p) for k, p in pids.items()}
        await asyncio.gather(*(talk(c, s) for c, s in zip(conns, made, strict=True)))
        await asyncio.wait_for(asyncio.gather(*followers), 60)
        wall = time.perf_counter() - t0
        cpu = {k: cpu_s(p) - cpu0[k] for k, p in pids.items()}
        cpu["client"] = time.process_time() - c0
    finally:
        for conn in conns:
            conn.close()
    return {**out, "cpu_s": cpu, "wall_s": wall}


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The rounds of one configuration, pooled."""
    ms = [x for r in runs for x in r["ms"]]
    wall = sum(r["wall_s"] for r in runs)
    by_type: dict[str, list[float]] = {}
    for r in runs:
        for k, v in r["by_type"].items():
            by_type.setdefault(k, []).extend(v)
    return {"events": len(ms), "p50_ms": pct(ms, 50), "p99_ms": pct(ms, 99),
            "max_ms": max(ms), "events_per_s": len(ms) / wall,
            "repeated_or_out_of_order": sum(r["repeated_or_out_of_order"] for r in runs),
            "cpu_s": {k: sum(r["cpu_s"][k] for r in runs) for k in runs[0]["cpu_s"]},
            "wall_s": wall,
            "rounds_p99_ms": [pct(r["ms"], 99) for r in runs],
            "by_type": {k: {"n": len(v), "p50_ms": pct(v, 50), "p99_ms": pct(v, 99)}
                        for k, v in by_type.items()}}


async def drop(schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(PG_DSN)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


async def pg_version() -> str:
    import asyncpg

    conn = await asyncpg.connect(PG_DSN)
    try:
        return str(await conn.fetchval("SHOW server_version")).split()[0]
    finally:
        await conn.close()


def section(res: dict[str, Any]) -> str:
    """The docs/benchmarks.md section for a saved result (also used by bench/render.py)."""
    a = res["args"]

    def row(label: str, f: dict[str, Any]) -> str:
        return (f"| {label} | {f['events']:,} | {f['p50_ms']:.2f} ms | {f['p99_ms']:.2f} ms "
                f"| {f['max_ms']:.1f} ms | {f['events_per_s']:,.0f} "
                f"| {f['repeated_or_out_of_order']} |")

    o = res["other_process"]
    b_us = o["cpu_s"]["B"] / o["events"] * 1e6
    a_us = o["cpu_s"]["A"] / o["events"] * 1e6
    c_us = o["cpu_s"]["client"] / o["events"] * 1e6

    load = res.get("load_average") or ["?", "?"]
    rounds = a.get("rounds", 1)
    verdict = (f"met (p99 {o['p99_ms']:.1f} ms)" if o["p99_ms"] <= 20 else
               f"**not met in this run** (p99 {o['p99_ms']:.1f} ms)")
    per_round = ", ".join(f"{x:.1f} ms" for x in o.get("rounds_p99_ms", [o["p99_ms"]]))

    return f"""{BEGIN}
## Live events across processes

Measured {res["date"]}: from the moment server A emits an event of a running turn to its
arrival at an SSE subscriber on server B (PostgreSQL `NOTIFY`, see
[serving](serving.md#events)), mid-turn, with {a["sessions"]} sessions at once, each running
{a["turns"]} turns of a model that streams 20 pieces 25 ms apart; two `handoffs serve`
processes and the client (the turns posted and the 50 streams read on plain sockets, so
the client takes as little of the machine's CPU as it can) on one machine; {rounds}
round(s) of each row, interleaved, pooled (p99 of each round on B: {per_round}).

| subscriber | events | p50 | p99 | max | events/s | seen twice or out of order |
| --- | --- | --- | --- | --- | --- | --- |
{row("on B (the turn runs on A)", o)}
{row("on A (same process)", res["same_process"])}

Target: p99 ≤ 20 ms on B: {verdict}. PostgreSQL {res["postgres"]}, Python
{res["python"]}, {res["cpus"]} logical CPUs, load average {load[0]} before the run and
{load[1]} after. On a machine with more runnable processes than CPUs, latency is mostly
waiting for a CPU (the same-process row shows how much), and an event crossing processes
waits more often: A's sending PostgreSQL backend, B's listening backend and B each have
to be woken for it, where a subscriber on A needs none of them. CPU per event in the
cross-process run: {b_us:.0f} µs on B (hearing it and sending it to its subscriber),
{a_us:.0f} µs on A (running the turn, storing it, sending it on), {c_us:.0f} µs in the
client. Rerun: `{COMMAND}`
(writes `bench/results/live-events.json` and this section).
{END}
"""


def write_docs(res: dict[str, Any]) -> None:
    text = DOC.read_text(encoding="utf-8")
    block = section(res)
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n", re.S)
    if pattern.search(text):
        text = pattern.sub(lambda _: block, text)
    else:
        marker = "## What each figure is"
        text = text.replace(marker, block + "\n" + marker, 1) if marker in text \
            else text + "\n" + block
    DOC.write_text(text, encoding="utf-8")


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--turns", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3,
                    help="runs of each configuration, interleaved, pooled")
    ap.add_argument("--base", type=Path, default=None, metavar="SRC",
                    help="also run the cross-process rounds on servers from this source "
                    "tree, interleaved (not written to the docs)")
    ap.add_argument("--docs", action="store_true",
                    help="write bench/results/live-events.json and docs/benchmarks.md")
    args = ap.parse_args()
    try:
        version = await pg_version()
    except Exception as exc:
        sys.exit(f"PostgreSQL not reachable at {PG_DSN}: {exc}")
    load_before = os.getloadavg()[0]
    schema = f"bench_live_{uuid.uuid4().hex[:8]}"
    store = f"{PG_DSN}?schema={schema}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            a, pa = serve(store, tmp)
            procs.append(pa)
            b, pb = serve(store, tmp)
            procs.append(pb)
            pids = {"A": pa.pid, "B": pb.pid}
            runs: dict[str, list[dict[str, Any]]] = {"other": [], "same": [], "base": []}
            kinds = ["other", "same"]
            if args.base is not None:
                # A schema of their own: they hear only each other, as A and B do.
                base_store = f"{PG_DSN}?schema={schema}_base"
                a0, pa0 = serve(base_store, tmp, args.base.resolve())
                procs.append(pa0)
                b0, pb0 = serve(base_store, tmp, args.base.resolve())
                procs.append(pb0)
                kinds.append("base")
            for i in range(args.rounds):
                for kind in (kinds if i % 2 == 0 else kinds[::-1]):
                    if kind == "base":
                        runs[kind].append(await run(b0, a0, args.sessions, args.turns,
                                                    {"A": pa0.pid, "B": pb0.pid}))
                    else:
                        watch = b if kind == "other" else a
                        runs[kind].append(await run(watch, a, args.sessions, args.turns,
                                                    pids))
            other, same = summary(runs["other"]), summary(runs["same"])
            base = summary(runs["base"]) if runs["base"] else None
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)
        await drop(schema)
        if args.base is not None:
            await drop(f"{schema}_base")
    res = {"date": time.strftime("%Y-%m-%d"),
           "args": vars(args) | {"docs": None, "base": None},
           "other_process": other, "same_process": same, "postgres": version,
           "python": platform.python_version(), "cpus": os.cpu_count(),
           "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)]}
    if base is not None:
        res["base_other_process"] = base | {"src": str(args.base)}
    print(json.dumps({k: v for k, v in res.items() if k != "args"}, indent=1))
    if args.docs:
        RESULTS.write_text(json.dumps(res, indent=1) + "\n", encoding="utf-8")
        write_docs(res)


if __name__ == "__main__":
    asyncio.run(main())
