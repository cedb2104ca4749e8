"""Run handoffs and the peer frameworks side by side, interleaved, and write the report.

    .venv/bin/python bench/compare.py                 # everything (make bench-peers)
    .venv/bin/python bench/compare.py --smoke         # ours only, few reps, temp dir (CI)
    .venv/bin/python bench/compare.py --only handoffs,strands --rounds 2

Every figure is one subprocess printing one JSON line (bench/ours.py for us, under .venv;
bench/peers/peer_<name>.py for a peer, under .bench-venvs/<name>). Round r runs every figure,
and each figure's frameworks in an order rotated by r and by the figure, so that a noisy spell
on a shared machine lands on different frameworks in different rounds. A summary value is the
median over rounds of each run's own median; the range is min–max over rounds; our ratio to a
peer is peer / ours computed inside each round, then summarised the same way.

The timed figures (per_handoff, turn, persisted_turn, history, streamed, import) run every
round, streamed also under .bench-venvs/newer (a newer CPython) when it exists; memory runs
in the first round only (under tracemalloc it takes about 90 s for the OpenAI Agents SDK, and
it measures bytes, which machine noise does not move much).

After the rounds, (f) the model-traffic run: bench/traffic/run.py plays a six-turn
conversation in every framework (and Google ADK) against one local OpenAI-compatible server
and records what each sends to the model (its own results file; the summary is copied here).

Outputs: bench/results/<date>.json (every raw record plus the summary),
bench/results/traffic-<date>.json (+ -requests.json.gz), docs/benchmarks.md, and the charts
docs/img/bench_ab.png, bench_history.png and bench_traffic.png (drawn by bench/plot.py in the
.bench-venvs/plot venv).

Exit status: 0 when every run passed its checks, 1 otherwise (a failed check in any framework,
a crash, a timeout, or charts that could not be drawn in a full run).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from figures import (
    ALL,
    BENCH,
    FIG,
    FIGURES,
    FRAMEWORKS,
    MAIN_ROWS,
    OURS,
    PEERS,
    ROOT,
    TRAFFIC_ONLY,
    Figure,
    Framework,
)
from render import (
    main_table,
    ours_table,
    ratio_table,
    render_doc,
    stores_table,
    traffic_report,
    versions,
)

# -- running ---------------------------------------------------------------------------------


def turns_checked(figure: str, record: dict[str, Any], args: argparse.Namespace) -> int:
    """How many turns a successful run checked (answer, final agent, handoff count)."""
    per = args.warmup + args.reps
    if figure == "per_handoff":
        return 2 * per
    if figure in ("turn", "persisted_turn", "persisted_turn_pg", "streamed", "streamed_newer"):
        return 2 * per if figure.startswith("streamed") else per
    if figure == "history":
        return sum(1 for k in record if k.startswith("per_handoff_at_")) * 2 * per
    if figure in ("memory", "memory_rss"):
        return int(record.get("conversations", args.convs)) + 3
    return 0


def run_one(fw: Framework, fig: Figure, args: argparse.Namespace) -> dict[str, Any]:
    cmd = [str(fig.python or fw.python), str(fw.script), "--figure", fig.cli, *fig.extra,
           "--reps", str(args.reps), "--warmup", str(args.warmup),
           "--convs", str(args.convs), "--import-reps", str(args.import_reps)]
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "wall_s": time.perf_counter() - t0,
                "cmd": cmd[1:], "error": f"timed out after {args.timeout} s"}
    wall = time.perf_counter() - t0
    out: dict[str, Any] = {"cmd": [c.removeprefix(f"{ROOT}/") for c in cmd], "wall_s": wall,
                           "rc": proc.returncode}
    if proc.returncode == 0:
        try:
            out["record"] = json.loads(proc.stdout.strip().splitlines()[-1])
            out["status"] = "ok"
        except (ValueError, IndexError):
            out["status"] = "error"
            out["error"] = "no JSON on stdout: " + proc.stdout[-500:]
    else:
        out["status"] = {2: "check_failed", 3: "skipped"}.get(proc.returncode, "error")
        out["error"] = proc.stderr.strip()[-2000:]
    return out


def available(fw: Framework) -> bool:
    return fw.python.exists() and fw.script.exists()


def schedule(args: argparse.Namespace, frameworks: list[str]) -> list[tuple[int, str, str]]:
    """(round, figure, framework) in run order: frameworks rotated per round and figure."""
    plan = []
    figures = [f for f in FIGURES if f.key in args.figures
               and (f.python is None or f.python.exists())]
    for r in range(args.rounds):
        for i, fig in enumerate(figures):
            if not fig.every_round and r != 0:
                continue
            who = [n for n in frameworks if n in fig.who]
            if not who:
                continue
            k = (r + i) % len(who)
            plan += [(r + 1, fig.key, n) for n in who[k:] + who[:k]]
    return plan


def run_stores(args: argparse.Namespace) -> dict[str, Any] | None:
    """bench/stores.py --json (the durable-store benchmark), if it exists and has --json."""
    script = BENCH / "stores.py"
    py = str(FRAMEWORKS[OURS].python)
    if not script.exists():
        return None
    try:
        helptext = subprocess.run([py, str(script), "--help"], cwd=ROOT, capture_output=True,
                                  text=True, timeout=60).stdout
    except subprocess.TimeoutExpired:
        return None
    if "--json" not in helptext:
        return None
    cmd = [py, str(script), "--json"]
    if args.smoke and "--reps" in helptext and "--sessions" in helptext:
        cmd += ["--reps", "20", "--sessions", "100"]
    log("stores: bench/stores.py --json")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "error": f"timed out after {args.timeout} s"}
    out: dict[str, Any] = {"cmd": ["bench/stores.py", *cmd[2:]], "rc": proc.returncode,
                           "wall_s": time.perf_counter() - t0}
    if proc.returncode != 0:
        out.update(status="error", error=proc.stderr.strip()[-2000:])
        return out
    text = proc.stdout.strip()
    try:
        out["record"] = json.loads(text)
    except ValueError:
        lines = [json.loads(x) for x in text.splitlines() if x.strip().startswith(("{", "["))]
        out["record"] = lines
    out["status"] = "ok"
    return out


def run_traffic(args: argparse.Namespace, results_file: Path) -> dict[str, Any]:
    """(f): bench/traffic/run.py in a subprocess; its summary, and where its files are."""
    out = results_file.parent / f"traffic-{results_file.stem}.json"
    cmd = [str(FRAMEWORKS[OURS].python), str(BENCH / "traffic/run.py"), "--json", str(out),
           "--rounds", str(args.rounds), "--reps", str(args.traffic_reps),
           "--timeout", str(args.timeout)]
    if args.only:
        cmd += ["--only", ",".join(args.frameworks + args.traffic_only)]
    if args.smoke:
        cmd.append("--no-tokens")
    log("traffic: bench/traffic/run.py " + " ".join(cmd[2:]))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=None, text=True,
                              timeout=args.timeout * 10)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "error": "the traffic run timed out"}
    res: dict[str, Any] = {"cmd": [c.removeprefix(f"{ROOT}/") for c in cmd[1:]],
                           "rc": proc.returncode, "wall_s": time.perf_counter() - t0,
                           "results_file": rel(out),
                           "requests_file": rel(out.with_name(out.stem + "-requests.json.gz"))}
    if not out.exists():
        res.update(status="error", error=f"no results (exit {proc.returncode})")
        return res
    t = json.loads(out.read_text())
    res.update(meta=t["meta"], summary=t["summary"],
               status="ok" if proc.returncode == 0 else "failed")
    if proc.returncode != 0:
        res["error"] = "; ".join(f"{r['row']} round {r['round']}: {r['status']}"
                                 for r in t["runs"] if r["status"] != "ok")
    return res


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- summary ---------------------------------------------------------------------------------


def summarise(values: list[float]) -> dict[str, Any]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    vals: dict[str, dict[str, dict[str, list[float]]]] = {}
    by_round: dict[tuple[int, str, str, str], float] = {}
    for run in runs:
        if run["status"] != "ok":
            continue
        fig = FIG[run["figure"]]
        for m in fig.metrics:
            v = run["record"].get(m)
            if isinstance(v, int | float):
                vals.setdefault(fig.key, {}).setdefault(run["framework"], {}) \
                    .setdefault(m, []).append(float(v))
                by_round[(run["round"], fig.key, run["framework"], m)] = float(v)
    out: dict[str, Any] = {"figures": {}, "ratios": {}, "stream_ratio": {}, "pythons": {}}
    for f, per_fw in vals.items():
        out["figures"][f] = {fw: {m: summarise(v) for m, v in ms.items()}
                             for fw, ms in per_fw.items()}
    # runner.stream / runner.run, inside each run (one process), then over rounds.
    for run in runs:
        if run["status"] == "ok" and run["figure"].startswith("streamed"):
            rec = run["record"]
            if rec.get("median_run_s"):
                out["stream_ratio"].setdefault(run["figure"], []).append(
                    rec["median_s"] / rec["median_run_s"])
            out["pythons"][run["figure"]] = rec.get("python")
    out["stream_ratio"] = {f: summarise(v) for f, v in out["stream_ratio"].items()}
    # Our ratio to each peer (peer / ours), inside each round, then summarised over rounds.
    for _, f, m, _ in MAIN_ROWS:
        for peer in PEERS:
            ratios = []
            for (r, f2, fw, m2), ours in by_round.items():
                if (f2, fw, m2) != (f, OURS, m) or ours <= 0:
                    continue
                theirs = by_round.get((r, f, peer, m))
                if theirs is not None:
                    ratios.append(theirs / ours)
            if ratios:
                out["ratios"].setdefault(f"{f}.{m}", {})[peer] = summarise(ratios)
    return out


def machine() -> dict[str, Any]:
    info: dict[str, Any] = {"platform": platform.platform(), "machine": platform.machine(),
                            "cpus": os.cpu_count(), "python_driver": sys.version.split()[0]}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["mem_gb"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        info["git_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                            capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "src"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        info["src_dirty"] = bool(dirty)
    except OSError:
        pass
    return info


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    p.add_argument("--reps", type=int, default=30, help="timed reps per run (default 30)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--convs", type=int, default=1000, help="conversations for memory")
    p.add_argument("--import-reps", type=int, default=5)
    p.add_argument("--only", default="", help="comma-separated frameworks: "
                   + ",".join((*ALL, *TRAFFIC_ONLY)) + f" ({', '.join(TRAFFIC_ONLY)}: (f) only)")
    p.add_argument("--figures", default="",
                   help="comma-separated: " + ",".join(FIG) + ",traffic")
    p.add_argument("--smoke", action="store_true",
                   help="ours only, few reps, 1 round, writes to a temp dir (CI)")
    p.add_argument("--out", type=Path, default=None,
                   help="write results/doc/charts under this dir instead of bench/ and docs/")
    p.add_argument("--no-charts", action="store_true")
    p.add_argument("--no-traffic", action="store_true",
                   help="skip (f), the model-traffic run (bench/traffic/run.py)")
    p.add_argument("--traffic-reps", type=int, default=4,
                   help="(f): conversations per run (default 4; the first is not timed)")
    p.add_argument("--from-results", type=Path, default=None, metavar="JSON",
                   help="run nothing: redraw the doc and charts from a saved results file")
    p.add_argument("--timeout", type=float, default=900, help="seconds per subprocess")
    args = p.parse_args(argv)
    if args.smoke:
        args.rounds, args.reps, args.warmup = 1, 3, 1
        args.convs, args.import_reps = 50, 1
        args.traffic_reps = 2
        args.only = args.only or OURS
    frameworks = [n.strip() for n in (args.only or ",".join(ALL)).split(",") if n.strip()]
    unknown = [n for n in frameworks if n not in FRAMEWORKS and n not in TRAFFIC_ONLY]
    if unknown:
        p.error(f"unknown framework(s) {unknown}; choose from "
                f"{[*FRAMEWORKS, *TRAFFIC_ONLY]}")
    args.frameworks = [n for n in frameworks if n in FRAMEWORKS]
    args.traffic_only = [n for n in frameworks if n in TRAFFIC_ONLY]
    figs = [f.strip() for f in (args.figures or ",".join((*FIG, "traffic"))).split(",")
            if f.strip()]
    if [f for f in figs if f not in FIG and f != "traffic"]:
        p.error(f"unknown figure(s); choose from {[*FIG, 'traffic']}")
    args.traffic = "traffic" in figs and not args.no_traffic
    args.figures = [f for f in figs if f != "traffic"]
    return args


def plot_python() -> str | None:
    for py in (ROOT / ".bench-venvs/plot/bin/python", Path(sys.executable)):
        if py.exists() and subprocess.run([str(py), "-c", "import matplotlib"],
                                          capture_output=True).returncode == 0:
            return str(py)
    return None


def run_all(args: argparse.Namespace, results_file: Path) -> dict[str, Any]:
    started = time.perf_counter()
    plan = schedule(args, args.frameworks)
    log(f"compare: {len(plan)} runs, frameworks {args.frameworks}, {args.rounds} round(s)")
    load_before = loadavg()
    runs: list[dict[str, Any]] = []
    for i, (r, f, n) in enumerate(plan, 1):
        run = run_one(FRAMEWORKS[n], FIG[f], args)
        run.update(round=r, figure=f, framework=n)
        if run["status"] == "ok":
            run["turns_checked"] = turns_checked(f, run["record"], args)
        runs.append(run)
        log(f"[{i:3}/{len(plan)}] round {r} {f:<17} {n:<14} {run['status']:<12} "
            f"{run['wall_s']:6.1f} s")
        if run["status"] != "ok":
            log("    " + (run.get("error") or "").strip().replace("\n", "\n    ")[-800:])
    stores = run_stores(args) if OURS in args.frameworks else None
    traffic = run_traffic(args, results_file) if args.traffic else None
    res: dict[str, Any] = {
        "meta": {
            "date": dt.date.today().isoformat(),
            "args": {k: v for k, v in vars(args).items() if k not in ("out", "from_results")},
            "machine": machine(),
            "load_before": load_before,
            "load_after": loadavg(),
            "versions": versions(runs),
            "results_file": rel(results_file),
            "wall_s": time.perf_counter() - started,
        },
        "summary": summary(runs),
        "runs": runs,
    }
    if stores is not None:
        res["stores"] = stores
    if traffic is not None:
        res["traffic"] = traffic
    return res


def rel(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


KEPT = "<!-- Sections below are written by hand or by other bench/ scripts; " \
       "bench/compare.py keeps them when it writes the page again. -->"


def kept_sections(doc_file: Path) -> str:
    """What follows the KEPT marker in the page today (the other benchmarks' sections:
    routing on a real model, live events across processes, the speed guard, ...)."""
    text = doc_file.read_text() if doc_file.exists() else ""
    return "\n" + text[text.index(KEPT):] if KEPT in text else "\n" + KEPT + "\n"


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    today = dt.date.today().isoformat()
    if args.out is None and args.smoke:
        args.out = Path(tempfile.mkdtemp(prefix="bench-smoke-"))
    if args.out is not None:
        results_file = args.out / "results" / f"{today}.json"
        doc_file, img_dir = args.out / "benchmarks.md", args.out / "img"
    else:
        results_file = BENCH / "results" / f"{today}.json"
        doc_file, img_dir = ROOT / "docs/benchmarks.md", ROOT / "docs/img"

    if args.from_results is not None:
        # Re-render the doc and charts from a saved run; nothing is run.
        results_file = args.from_results
        res = json.loads(results_file.read_text())
        frameworks = res["meta"]["args"]["frameworks"]
    else:
        missing = [n for n in args.frameworks if not available(FRAMEWORKS[n])]
        if missing:
            log(f"compare: not installed: {missing} (run `bash bench/peers/install.sh`)")
            return 1
        res = run_all(args, results_file)
        frameworks = args.frameworks
        results_file.parent.mkdir(parents=True, exist_ok=True)
        results_file.write_text(json.dumps(res, indent=1) + "\n")

    charts_ok = False
    if not args.no_charts:
        py = plot_python()
        if py is None:
            log("compare: matplotlib not found (.bench-venvs/plot); no charts")
        else:
            img_dir.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run([py, str(BENCH / "plot.py"), str(results_file),
                                   "--out-dir", str(img_dir)], cwd=ROOT)
            charts_ok = proc.returncode == 0
    traffic_chart = charts_ok and bool((res.get("traffic") or {}).get("summary")) and \
        (img_dir / "bench_traffic.png").exists()
    doc_file.parent.mkdir(parents=True, exist_ok=True)
    doc_file.write_text(render_doc(res, frameworks, charts_ok, traffic_chart)
                        + kept_sections(doc_file))

    summ, stores = res["summary"], res.get("stores")
    print(main_table(summ, frameworks))
    print()
    rt = ratio_table(summ, frameworks)
    if rt:
        print(rt)
        print()
    print(ours_table(summ, "langgraph" in frameworks))
    print()
    if stores is not None:
        print(stores_table(stores))
        print()
    traffic = res.get("traffic")
    if traffic and traffic.get("summary"):
        report = traffic_report()
        print(report.table(traffic["summary"], report.tokens_note(traffic)))
        print()
    failed = [r for r in res["runs"] if r["status"] not in ("ok", "skipped")]
    if traffic is not None and traffic.get("status") != "ok":
        log(f"compare: the traffic run failed: {traffic.get('error', '')[-400:]}")
        failed.append(traffic)
    if stores is not None and stores.get("status") != "ok":
        log(f"compare: bench/stores.py failed: {stores.get('error', '')[-400:]}")
        failed.append(stores)
    charts = [img_dir / "bench_ab.png", img_dir / "bench_history.png"]
    if traffic_chart:
        charts.append(img_dir / "bench_traffic.png")
    print(f"results: {rel(results_file)}\ndoc:     {rel(doc_file)}"
          + (f"\ncharts:  {', '.join(rel(c) for c in charts)}" if charts_ok else ""))
    if failed:
        log(f"compare: {len(failed)} run(s) failed")
        return 1
    if not charts_ok and not args.no_charts and not args.smoke:
        log("compare: charts were not drawn")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
