"""The report of a side-by-side run: docs/benchmarks.md and the tables printed at the end.

Everything here reads a results dict (bench/compare.py's, or a saved results file) and
runs nothing.
"""

from __future__ import annotations

import sys
from typing import Any

from figures import BENCH, CHECKS, FRAMEWORKS, MAIN_ROWS, OURS, OURS_ROWS, PG_DSN_ENV


def traffic_report() -> Any:
    """bench/traffic/report.py (stdlib only), imported on first use."""
    sys.path.insert(0, str(BENCH / "traffic"))
    import report

    return report


def live_events_md() -> str:
    """The section of bench/live_events.py's last saved run (bench/results/live-events.json),
    kept as it is when the peers are rerun; empty when it never ran."""
    import json

    saved = BENCH / "results" / "live-events.json"
    if not saved.exists():
        return ""
    sys.path.insert(0, str(BENCH))
    import live_events

    return str(live_events.section(json.loads(saved.read_text(encoding="utf-8")))) + "\n"


# -- formatting ------------------------------------------------------------------------------


def fmt(v: float | None, unit: str) -> str:
    if v is None:
        return "n/a"
    if unit == "s":
        a = abs(v)
        if a >= 1:
            return f"{v:.2f} s"
        if a >= 1e-3:
            return f"{v * 1e3:.3g} ms"
        return f"{v * 1e6:.3g} µs"
    if unit == "B":
        a = abs(v)
        if a >= 1e6:
            return f"{v / 1e6:.3g} MB"
        if a >= 1e3:
            return f"{v / 1e3:.3g} KB"
        return f"{v:.0f} B"
    return f"{v:.3g}"


def fmt_ratio(r: float) -> str:
    return f"×{r:.0f}" if r >= 10 else f"×{r:.1f}"


def cell(summ: dict[str, Any], f: str, fw: str, m: str, unit: str) -> str:
    s = summ["figures"].get(f, {}).get(fw, {}).get(m)
    if s is None:
        return "—"
    text = fmt(s["median"], unit)
    if s["n"] > 1:
        lo, hi = fmt(s["min"], unit), fmt(s["max"], unit)
        u = text.split()[-1]
        if lo.split()[-1] == u and hi.split()[-1] == u:  # one unit for the three numbers
            lo, hi = lo.split()[0], hi.split()[0]
        text += f" ({lo}–{hi})"
    return text


def main_table(summ: dict[str, Any], frameworks: list[str]) -> str:
    head = "| figure | " + " | ".join(FRAMEWORKS[n].label for n in frameworks) + " |"
    lines = [head, "|" + " --- |" * (len(frameworks) + 1)]
    for label, f, m, unit in MAIN_ROWS:
        if f not in summ["figures"]:
            continue
        cells = []
        for n in frameworks:
            c = cell(summ, f, n, m, unit)
            r = summ["ratios"].get(f"{f}.{m}", {}).get(n)
            if r is not None:
                c = f"{c} **{fmt_ratio(r['median'])}**"
            cells.append(c)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_table(summ: dict[str, Any], frameworks: list[str]) -> str:
    peers = [n for n in frameworks if n != OURS]
    if not peers:
        return ""
    lines = ["| peer / handoffs | " + " | ".join(FRAMEWORKS[n].label for n in peers) + " |",
             "|" + " --- |" * (len(peers) + 1)]
    for label, f, m, _ in MAIN_ROWS:
        rs = summ["ratios"].get(f"{f}.{m}")
        if not rs:
            continue
        cells = []
        for n in peers:
            r = rs.get(n)
            if r is None:
                cells.append("—")
            elif r["n"] > 1:
                cells.append(f"{fmt_ratio(r['median'])} ({fmt_ratio(r['min'])}–"
                             f"{fmt_ratio(r['max'])})")
            else:
                cells.append(fmt_ratio(r["median"]))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ours_table(summ: dict[str, Any], langgraph: bool) -> str:
    lines = ["| handoffs figure (e) | median (min–max) |", "| --- | --- |"]
    for label, f, m, unit in OURS_ROWS:
        c = cell(summ, f, OURS, m, unit)
        if c == "—":
            c = "n/a" + (f" (no server at `{PG_DSN_ENV}`)" if f == "persisted_turn_pg" else "")
        lines.append(f"| {label} | {c} |")
        if (f, m) == ("streamed", "median_s"):
            lines += stream_rows(summ)
    if langgraph:
        c = cell(summ, "persisted_turn", "langgraph", "median_s", "s")
        lines.append(f"| for scale: LangGraph swarm turn H=1, `AsyncSqliteSaver` | {c} |")
    return "\n".join(lines)


def stream_rows(summ: dict[str, Any]) -> list[str]:
    """`runner.stream` / `runner.run` per process (the budget is ×1.3), and the same H=1
    turn under a newer CPython when it ran (its task starts eagerly there)."""
    rows = []
    pythons = summ.get("pythons", {})
    for f in ("streamed", "streamed_newer"):
        r = summ.get("stream_ratio", {}).get(f)
        if r is None:
            continue
        py = f"Python {pythons.get(f) or '?'}"
        if f == "streamed_newer":
            rows.append(f"| turn H=1, `runner.run`, {py} | "
                        f"{cell(summ, f, OURS, 'median_run_s', 's')} |")
            rows.append(f"| turn H=1, `runner.stream`, {py} | "
                        f"{cell(summ, f, OURS, 'median_s', 's')} |")
        rng = f" ({r['min']:.2f}–{r['max']:.2f})" if r["n"] > 1 else ""
        rows.append(f"| `runner.stream` / `runner.run`, same process, {py} | "
                    f"×{r['median']:.2f}{rng} |")
    return rows


def stores_table(stores: dict[str, Any] | None) -> str:
    """bench/stores.py --json: {"figures": [{"store", "turn_ms_median", ...}], "notes": [...]}."""
    if not stores:
        return ""
    if stores.get("status") != "ok":
        return f"bench/stores.py failed: `{(stores.get('error') or '').splitlines()[-1:]}`"
    rec = stores.get("record")
    figs = rec.get("figures") if isinstance(rec, dict) else None
    if not isinstance(figs, list) or not all(isinstance(f, dict) and "store" in f
                                              for f in figs):
        return "bench/stores.py output (raw, in the results file): " + ", ".join(
            f"{k} {fmt(v, 's')}" for k, v in store_points(stores))
    n = figs[0].get("sessions", "?") if figs else "?"
    lines = [f"| store (bench/stores.py) | H=1 turn, median | same, on a 10,000-message "
             f"session | turns/s, {n} sessions at once | retained / session | peak / session |",
             "| --- | --- | --- | --- | --- | --- |"]
    for f in figs:
        ms = f.get("turn_ms_median")
        long_ms = f.get("turn_ms_at_10000_messages")
        lines.append(f"| {f['store']} | {fmt(ms / 1e3 if ms is not None else None, 's')} | "
                     f"{fmt(long_ms / 1e3 if long_ms is not None else None, 's')} | "
                     f"{f.get('turns_per_s', 'n/a')} | "
                     f"{fmt(f.get('retained_bytes_per_session'), 'B')} | "
                     f"{fmt(f.get('peak_bytes_per_session'), 'B')} |")
    notes = rec.get("notes") or []
    return "\n".join(lines + ([""] + [f"- {x}" for x in notes] if notes else []))


def store_points(stores: dict[str, Any]) -> list[tuple[str, float]]:
    """(label, seconds) pairs found in bench/stores.py --json output (format-tolerant)."""
    found: list[tuple[str, float]] = []

    def walk(obj: Any, path: str) -> None:
        if isinstance(obj, dict):
            for k, v in obj.items():
                walk(v, f"{path}.{k}" if path else str(k))
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                name = v.get("name") or v.get("store") or v.get("figure") or str(i) \
                    if isinstance(v, dict) else str(i)
                walk(v, f"{path}.{name}" if path else str(name))
        elif isinstance(obj, int | float) and not isinstance(obj, bool) \
                and path.endswith(("median_s", "_median_s")):
            found.append((path, float(obj)))

    walk(stores.get("record"), "")
    return found


def versions(runs: list[dict[str, Any]]) -> dict[str, str]:
    out = {}
    for run in runs:
        if run["status"] == "ok" and run["framework"] not in out:
            rec = run["record"]
            out[run["framework"]] = f"{rec.get('version', '?')} (Python {rec.get('python')})"
    return out


def traffic_checks(traffic: dict[str, Any] | None) -> str:
    if not traffic:
        return ""
    summary = traffic.get("summary") or {}
    if not summary:
        return f"- **(f) model traffic**: **FAILED**: `{traffic.get('error', '')}`"
    runs = sum(s["runs"] for s in summary.values())
    ok = sum(s["ok"] for s in summary.values())
    reps = (traffic.get("meta") or {}).get("reps", 0)
    status = "passed" if ok == runs and traffic.get("status") == "ok" else \
        f"**{runs - ok} run(s) FAILED** ({traffic.get('error', '')})"
    return (f"- **(f) model traffic** (every row, ours per history view): {status}; "
            f"{ok}/{runs} runs, {ok * reps * 6:,} turns checked: the answer and the answering "
            "agent of every turn, from each framework's own result; and the server saw no "
            "request outside the script.")


def checks_section(runs: list[dict[str, Any]], frameworks: list[str]) -> str:
    lines = []
    for n in frameworks:
        mine = [r for r in runs if r["framework"] == n]
        ok = [r for r in mine if r["status"] == "ok"]
        bad = [r for r in mine if r["status"] not in ("ok", "skipped")]
        skipped = sorted({r["figure"] for r in mine if r["status"] == "skipped"})
        turns = sum(r.get("turns_checked", 0) for r in ok)
        status = "passed" if not bad else f"**{len(bad)} run(s) FAILED**"
        lines.append(f"- **{FRAMEWORKS[n].label}**: {status}; {len(ok)}/{len(mine)} runs, "
                     f"{turns:,} turns checked: {CHECKS[n]}."
                     + (f" Skipped (not available here): {', '.join(skipped)}." if skipped
                        else ""))
        for r in bad:
            err = (r.get("error") or "").strip().splitlines()
            lines.append(f"  - round {r['round']} `{r['figure']}`: {r['status']}: "
                         f"`{err[-1] if err else ''}`")
    return "\n".join(lines)


def verdict(summ: dict[str, Any], frameworks: list[str]) -> str:
    """One sentence per headline figure, from the numbers (not asserted in advance)."""
    out = []
    for label, key in (("per handoff (a)", "per_handoff.per_handoff_s"),
                       ("whole H=1 turn (b)", "turn.median_s")):
        rs = {p: r["median"] for p, r in summ["ratios"].get(key, {}).items() if p in frameworks}
        if not rs:
            continue
        lo, hi = min(rs, key=rs.__getitem__), max(rs, key=rs.__getitem__)
        out.append(f"- {label}: the peers take {fmt_ratio(rs[lo])} ({FRAMEWORKS[lo].label}) to "
                   f"{fmt_ratio(rs[hi])} ({FRAMEWORKS[hi].label}) our time; "
                   f"{sum(v >= 100 for v in rs.values())} of {len(rs)} peers at ×100 or more.")
    return ("In this run:\n\n" + "\n".join(out)) if out else ""


def traffic_verdict(res: dict[str, Any]) -> str:
    summary = (res.get("traffic") or {}).get("summary")
    text = traffic_report().verdict(summary) if summary else ""
    return f"- (f) {text}" if text else ""


def render_doc(res: dict[str, Any], frameworks: list[str], charts: bool,
               traffic_chart: bool = False) -> str:
    summ, meta = res["summary"], res["meta"]
    m = meta["machine"]
    a = meta["args"]
    vers = "\n".join(f"- {FRAMEWORKS[n].label}: {v}" for n, v in meta["versions"].items())
    charts_md = (
        "![(a) per handoff and (b) whole turn, per framework, log scale](img/bench_ab.png)\n\n"
        "![(e) handoffs: per handoff vs history length; turn variants]"
        "(img/bench_history.png)\n"
        if charts else "_Charts were not drawn in this run (no matplotlib)._\n"
    )
    rounds = f"{a['rounds']} interleaved round{'s' if a['rounds'] != 1 else ''}"
    tv = traffic_verdict(res)
    head = verdict(summ, frameworks)
    if tv:
        head = (head + "\n" + tv) if head else "In this run:\n\n" + tv
    traffic_md = traffic_report().section(res.get("traffic"), traffic_chart) \
        if res.get("traffic") else ""
    rt = ratio_table(summ, frameworks)
    ratios_md = ("Our ratio to each peer (peer / ours), per round: median and min–max over "
                 f"rounds.\n\n{rt}\n\n" if rt else "")
    return f"""# Benchmarks

<!-- Generated by bench/compare.py ({meta["date"]}); edit the script, not this file. -->

The claim under test: the handoff runtime's own overhead is negligible, about two orders of
magnitude below the frameworks users would otherwise pick. Every framework below runs the same
scenario in the same run, with a zero-latency scripted model driving each framework's own
LLM-driven handoff tool, and every timed turn is checked (answer, final agent, handoff count)
from the framework's own result. Figures are medians over rounds of each run's median; brackets
are min–max over the {rounds}; **×N** is the peer's figure divided by ours, computed within
each round and then taken as the median over rounds. The traffic figures (f) are the other
side of the cost: what each framework sends to the model for the same conversation.

{head}

## Results ({meta["date"]})

{main_table(summ, frameworks)}

{ratios_md}{charts_md}
### handoffs only (e)

{ours_table(summ, "langgraph" in frameworks)}

{stores_table(res.get("stores"))}

{traffic_md}
{live_events_md()}## What each figure is

- (a) per handoff: (median T(H=20) − median T(H=0)) / 20; {a["reps"]} reps of each after
  {a["warmup"]} warm-up, H=0 and H=20 alternating, in process.
- (b) one whole user turn with H=1 (one handoff), {a["reps"]} reps after warm-up.
- (c) {a["convs"]:,} concurrent conversations, one H=1 turn each, all at once with
  `asyncio.gather`; peak and retained bytes per conversation from `tracemalloc`; the RSS row is
  the same run without `tracemalloc` (it also sees native heaps, e.g. SQLite's, and allocator
  slack, so it is noisier).
- (d) median of {a["import_reps"]} fresh interpreter(s) importing what the scenario needs to
  build and run a team (ours: `handoffs.runtime.runner`; bare `import handoffs` is in the
  handoffs-only table), from compiled bytecode for everyone: one untimed import first with
  bytecode writing on, as an installed package has its `.pyc` files (this machine sets
  `PYTHONDONTWRITEBYTECODE=1`, which once made our editable `src/` compile on every import).
- (e) persisted turn (H=1, new session per rep): ours on `SqliteStore` (`store="sqlite:///…"`,
  temp file) and on `PostgresStore` when a server answers at `{PG_DSN_ENV}` (default
  `postgresql://127.0.0.1:5432/test`, scratch schema dropped afterwards); LangGraph's swarm
  with `AsyncSqliteSaver`, for scale. History: one session preloaded with N messages (in-memory
  store), per-handoff time computed as in (a). Streamed: the same H=1 turn through
  `runner.stream`, every event consumed, beside `runner.run` in the same process; also under
  the newest CPython 3.12+ on PATH when `make bench-peers` found one (`.bench-venvs/newer`:
  there the streamed turn's task starts eagerly, which 3.11 cannot do). The store table
  comes from `bench/stores.py --json` (run once, after the rounds: its own triage → billing
  H=1 turn, throughput and memory per session for each store).
- (f) model traffic: see its section; `bench/traffic/` (server, scenario, one driver per
  framework) and `bench/traffic/run.py`, run after the rounds, {rounds}, rows interleaved.

Schedule: each round runs every figure, and each figure's frameworks in an order rotated by
round and figure. (a), (b), (d) and (e) run in all {rounds}; (c) runs once, in the
first round (tracemalloc makes the OpenAI Agents SDK memory run take about 90 s; memory is
measured in bytes, which machine noise barely moves). Total wall time of this run:
{meta["wall_s"] / 60:.1f} min.

## Rerun

```sh
make bench-peers     # installs the pinned peer venvs (.bench-venvs/), the plot venv, runs all
make bench-smoke     # ours only, a few reps, temp dir: what CI runs so the scripts never rot
make bench-traffic   # (f) only: prints the traffic tables, writes bench/results/traffic-<date>.json
make bench-instructions TREES="/tmp/old/src src"   # ours in CPU instructions, trees side by side
.venv/bin/python bench/compare.py --help   # --rounds, --reps, --convs, --only handoffs,strands
```

Raw records and the summary: `{meta["results_file"]}`. The peer scripts, their scenario and the
exact framework calls are described in `bench/peers/README.md`.

## Checks passed

{checks_section(res["runs"], frameworks)}
{traffic_checks(res.get("traffic"))}

## Machine

- {m.get("cpu", "?")}, {m.get("cpus")} logical CPUs, {m.get("mem_gb", "?")} GB RAM;
  {m.get("platform")}
- commit {m.get("git_commit", "?")}{" (with uncommitted changes under src/)"
                                    if m.get("src_dirty") else ""}
- load average (1, 5, 15 min) before {meta["load_before"]}, after {meta["load_after"]}.
  This is a shared 2-core machine where other work (test suites) runs at the same time, which
  is why frameworks are interleaved and ranges are reported; treat single-digit-percent
  differences as noise. Its speed swings by ×1.5 and more between quiet and busy spells, so
  our absolute times move between runs while the ratios hold; to compare two commits of ours,
  `make bench-instructions` counts CPU instructions under valgrind (`bench/instructions.py`),
  which that noise does not move.

Versions:

{vers}

## Caveats

- The model is a scripted zero-latency test double in each framework's native response types:
  these figures are each framework's orchestration overhead, not what a real LLM call costs
  (hundreds of milliseconds, which dwarfs all of them).
- Strands needs one more model call per handoff than the others (an agent ends its turn after
  the handoff tool result before the Swarm moves on); that is how its Swarm works and is
  counted.
- AutoGen AgentChat keeps state in agents and teams: timed figures `reset()` the team before
  each turn (not timed) and the memory figure builds one team per conversation; Strands builds
  one Swarm per conversation for memory, too.
- `tracemalloc` sees only Python allocations: the OpenAI Agents SDK's per-conversation
  `SQLiteSession` (in-memory SQLite) lives in SQLite's heap, so compare it on the RSS row.
- Timed figures run without persistence except the persisted-turn rows.
- Sub-100 µs figures move by tens of percent from one process to the next on this machine
  (ours are one process per round; see the ranges), which the per-round ratio ranges carry.
"""
