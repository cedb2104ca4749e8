"""Model traffic: every framework plays the same conversation against the same local server.

    .venv/bin/python bench/traffic/run.py                 # all rows, 3 rounds (make bench-traffic)
    .venv/bin/python bench/traffic/run.py --only handoffs --rounds 1 --reps 2
    .venv/bin/python bench/traffic/run.py --json out.json # where the results go

One row per framework, and one per history view of ours (`handoffs:own_tools`, the default,
`:full`, `:conversation`, `:last_user`, `:summary`). A run is one driver process
(bench/traffic/drive_<name>.py, in the framework's venv: ours in this interpreter, a peer in
.bench-venvs/<name>) playing the six-turn conversation ``--reps`` times against its own
:class:`server.TrafficServer` (127.0.0.1, ephemeral port, bounded in requests and time).
Round r runs every row, in an order rotated by r. The server's records give the traffic (model
calls, request bytes, per turn); the driver's give the wall time of each turn (HTTP hop
included) and its checks (answer and answering agent of every turn). Tokens: the first run of
each row's first conversation is counted by bench/traffic/tokens.py in .bench-venvs/tokens
(tiktoken o200k_base, offline); without that venv the figures are bytes only, and say so.

Writes the results JSON (default bench/results/traffic-<date>.json) and the request bodies of
one conversation per row (``<results>-requests.json.gz``), and prints the tables. Exit
status 0 when every run passed its checks and the server saw nothing unscripted, else 1.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report
import scenario
from server import TrafficServer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

VENVS = ROOT / ".bench-venvs"
TOKENS_PY = VENVS / "tokens/bin/python"


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    python: Path
    script: str
    extra: tuple[str, ...] = ()


ROWS = (
    *(Row(f"handoffs:{v}", f"handoffs ({v})", Path(sys.executable), "drive_handoffs.py",
          ("--view", v)) for v in ("own_tools", "full", "conversation", "last_user",
                                   "summary")),
    Row("openai-agents", "OpenAI Agents SDK", VENVS / "openai-agents/bin/python",
        "drive_openai_agents.py"),
    Row("langgraph", "LangGraph + swarm", VENVS / "langgraph/bin/python", "drive_langgraph.py"),
    Row("autogen", "AutoGen Swarm", VENVS / "autogen/bin/python", "drive_autogen.py"),
    Row("strands", "Strands Swarm", VENVS / "strands/bin/python", "drive_strands.py"),
    Row("adk", "Google ADK", VENVS / "adk/bin/python", "drive_adk.py"),
)
ROW = {r.key: r for r in ROWS}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def tokenizer() -> dict[str, Any]:
    if not TOKENS_PY.exists():
        return {"ok": False, "why": "no .bench-venvs/tokens venv; `make bench-peers` makes it"}
    proc = subprocess.run([str(TOKENS_PY), str(HERE / "tokens.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        return {"ok": False, "why": (proc.stderr.strip().splitlines() or ["failed"])[-1]}
    return {"ok": True, **json.loads(proc.stdout)}


def count_tokens(bodies: list[dict[str, Any]]) -> list[int] | None:
    proc = subprocess.run([str(TOKENS_PY), str(HERE / "tokens.py")], input=json.dumps(bodies),
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        log("tokens.py failed: " + proc.stderr[-500:])
        return None
    counts: list[int] = json.loads(proc.stdout)["tokens"]
    return counts


def conversation_stats(records: list[dict[str, Any]]) -> dict[str, Any]:
    turn_calls = [0] * len(scenario.USER)
    turn_bytes = [0] * len(scenario.USER)
    for r in records:
        if r["turn"] is not None:
            turn_calls[r["turn"]] += 1
            turn_bytes[r["turn"]] += r["bytes"]
    kinds = [r["decision"] for r in records]
    return {
        "calls": len(records),
        "bytes": sum(r["bytes"] for r in records),
        "compact_bytes": sum(r["compact_bytes"] for r in records),
        # Where the bytes go (compact JSON): system text, tool definitions, the other messages,
        # and the rest of the body (model name, settings).
        "parts": {
            "system": sum(r["system_bytes"] for r in records),
            "tools": sum(r["tools_bytes"] for r in records),
            "messages": sum(r["messages_bytes"] - r["system_bytes"] for r in records),
            "other": sum(r["other_bytes"] for r in records),
        },
        "max_request_bytes": max((r["bytes"] for r in records), default=0),
        "handoffs": kinds.count("handoff"),
        "handed_off": kinds.count("handed_off"),
        "summaries": kinds.count("summary"),
        "tool_calls": kinds.count("tool"),
        "big_result_copies": sum(r["big_result_copies"] for r in records),
        "turn_calls": turn_calls,
        "turn_bytes": turn_bytes,
    }


def run_row(row: Row, rnd: int, args: argparse.Namespace) -> tuple[dict[str, Any], list[Any]]:
    """One driver process against a fresh server: (the run's record, its server records)."""
    budget = args.reps * 100 + 50
    server = TrafficServer(max_requests=budget, max_seconds=args.timeout + 30).start()
    url = f"http://127.0.0.1:{server.port}/c{{conv}}/v1"
    cmd = [str(row.python), str(HERE / row.script), "--base-url", url, "--reps", str(args.reps),
           *row.extra]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p)}
    env.pop("OPENAI_BASE_URL", None)
    env.pop("OPENAI_API_KEY", None)
    run: dict[str, Any] = {"row": row.key, "round": rnd,
                           "cmd": [c.removeprefix(f"{ROOT}/") for c in cmd]}
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        proc = None
    finally:
        server.stop()
    run["wall_s"] = time.perf_counter() - t0
    records = server.records
    if proc is None:
        run.update(status="timeout", error=f"timed out after {args.timeout} s")
    elif proc.returncode != 0:
        run.update(status="check_failed" if proc.returncode == 2 else "error",
                   error=proc.stderr.strip()[-2000:])
    elif server.errors:
        run.update(status="server_error", error="; ".join(server.errors[:5]))
    else:
        try:
            run["driver"] = json.loads(proc.stdout.strip().splitlines()[-1])
            run["status"] = "ok"
        except (ValueError, IndexError):
            run.update(status="error", error="no JSON on stdout: " + proc.stdout[-500:])
    by_conv: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        by_conv.setdefault(r["conversation"], []).append(r)
    run["conversations"] = [{"conversation": c, **conversation_stats(rs)}
                            for c, rs in sorted(by_conv.items())]
    if run["status"] == "ok":
        calls = {c["calls"] for c in run["conversations"]}
        if len(run["conversations"]) != args.reps:
            run.update(status="error", error=f"server saw {len(run['conversations'])} "
                       f"conversations, the driver played {args.reps}")
        elif len(calls) != 1:
            log(f"    note: {row.key}: model calls vary between conversations: {sorted(calls)}")
        turns = run["driver"].pop("turns")
        timed = [t["wall_s"] for t in turns if t["conversation"] >= 1] or \
            [t["wall_s"] for t in turns]
        run["turn_median_s"] = statistics.median(timed)
        run["turn_samples_s"] = timed
    return run, by_conv.get(0, [])


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    started = time.perf_counter()
    rows = [ROW[k] for k in args.rows]
    missing = [r.key for r in rows if not r.python.exists()]
    rows = [r for r in rows if r.python.exists()]
    if missing:
        log(f"traffic: not installed, left out: {missing} (bash bench/peers/install.sh)")
    tok = tokenizer() if not args.no_tokens else {"ok": False, "why": "--no-tokens"}
    log(f"traffic: {len(rows)} rows x {args.rounds} round(s), {args.reps} conversations each; "
        f"tokens: {'o200k_base' if tok['ok'] else tok['why']}")
    runs: list[dict[str, Any]] = []
    bodies: dict[str, list[dict[str, Any]]] = {}
    plan = [(r + 1, rows[(i + r) % len(rows)]) for r in range(args.rounds)
            for i in range(len(rows))]
    for i, (rnd, row) in enumerate(plan, 1):
        run, first = run_row(row, rnd, args)
        runs.append(run)
        log(f"[{i:3}/{len(plan)}] round {rnd} {row.key:<22} {run['status']:<12} "
            f"{run['wall_s']:6.1f} s")
        if run["status"] != "ok":
            log("    " + (run.get("error") or "").replace("\n", "\n    ")[-1500:])
            continue
        if row.key not in bodies:
            bodies[row.key] = [{k: r[k] for k in ("n", "agent", "turn", "decision", "bytes",
                                                  "body")} for r in first]
            if tok["ok"]:
                counts = count_tokens([r["body"] for r in first])
                if counts is not None:
                    per_turn = [0] * len(scenario.USER)
                    for r, n in zip(first, counts, strict=True):
                        if r["turn"] is not None:
                            per_turn[r["turn"]] += n
                    run["tokens"] = {"total": sum(counts), "calls": len(counts),
                                     "per_call": counts, "per_turn": per_turn}
    res: dict[str, Any] = {
        "meta": {"date": dt.date.today().isoformat(), "rounds": args.rounds,
                 "reps": args.reps, "tokenizer": tok, "model": scenario.MODEL,
                 "left_out": missing, "wall_s": time.perf_counter() - started,
                 "python": sys.version.split()[0]},
        "rows": [{"key": r.key, "label": r.label} for r in rows],
        "runs": runs,
    }
    res["summary"] = report.summarise(res)
    res["_bodies"] = bodies
    return res


def write(res: dict[str, Any], path: Path) -> Path:
    """The results JSON at `path`, the request bodies beside it (gzip); returns the latter."""
    bodies = res.pop("_bodies", {})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1) + "\n")
    side = path.with_name(path.stem + "-requests.json.gz")
    with gzip.open(side, "wt") as f:
        json.dump(bodies, f)
    return side


def failed(res: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in res["runs"] if r["status"] != "ok"]


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=4,
                   help="conversations per run (the first one's turns are not timed)")
    p.add_argument("--only", default="",
                   help="comma-separated rows or frameworks: handoffs (all five views), "
                        "handoffs:own_tools, openai-agents, langgraph, autogen, strands, adk")
    p.add_argument("--json", type=Path, default=None, help="results file (default "
                   "bench/results/traffic-<date>.json)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per driver run")
    p.add_argument("--no-tokens", action="store_true")
    args = p.parse_args(argv)
    wanted = [w.strip() for w in args.only.split(",") if w.strip()]
    rows = [r.key for r in ROWS
            if not wanted or any(r.key == w or r.key.split(":")[0] == w for w in wanted)]
    unknown = [w for w in wanted if not any(r.key == w or r.key.split(":")[0] == w
                                            for r in ROWS)]
    if unknown or not rows:
        p.error(f"unknown rows {unknown}; choose from {[r.key for r in ROWS]}")
    args.rows = rows
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    res = run_all(args)
    path = args.json or ROOT / "bench/results" / f"traffic-{res['meta']['date']}.json"
    side = write(res, path)
    note = report.tokens_note(res)
    print(report.table(res["summary"], note))
    print()
    print(report.turn_table(res["summary"]))
    if note:
        print("\n" + note)
    print(f"\nresults:  {path}\nrequests: {side}")
    bad = failed(res)
    if bad:
        log(f"traffic: {len(bad)} run(s) failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
