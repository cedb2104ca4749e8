"""Charts for bench/compare.py's results (matplotlib, Agg backend; run in .bench-venvs/plot).

    .bench-venvs/plot/bin/python bench/plot.py bench/results/<date>.json --out-dir docs/img

Writes bench_ab.png (figures (a) and (b) per framework, log scale, min–max whiskers) and
bench_history.png (figure (e): our per-handoff time against earlier messages in the session,
and the H=1 turn run, streamed and persisted, with LangGraph's persisted turn for scale), and
bench_traffic.png when the results hold the traffic run (figure (f): request bytes per
conversation and per turn, per framework and per history view of ours).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter

LABELS = {
    "handoffs": "handoffs",
    "openai-agents": "OpenAI Agents SDK",
    "langgraph": "LangGraph + swarm",
    "autogen": "AutoGen Swarm",
    "strands": "Strands Swarm",
}
ORDER = list(LABELS)
OURS_COLOR = "#d62728"
PEER_COLOR = "#7f7f7f"


def us_label(v: float, _pos: Any = None) -> str:
    """Axis ticks (microseconds in, readable unit out)."""
    if v >= 1e3:
        return f"{v / 1e3:g} ms"
    return f"{v:g} µs"


def us_value(v: float) -> str:
    """Annotations: three significant digits."""
    if v >= 1e3:
        return f"{v / 1e3:.3g} ms"
    return f"{v:.3g} µs"


def get(summary: dict[str, Any], fig: str, fw: str, metric: str) -> dict[str, float] | None:
    value: dict[str, float] | None = summary["figures"].get(fig, {}).get(fw, {}).get(metric)
    return value


def chart_ab(res: dict[str, Any], out: Path) -> None:
    summary = res["summary"]
    panels = (("(a) per handoff", "per_handoff", "per_handoff_s"),
              ("(b) whole turn, H=1", "turn", "median_s"))
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.6))
    for ax, (title, f, m) in zip(axes, panels, strict=True):
        names, med, lo, hi = [], [], [], []
        for fw in ORDER:
            s = get(summary, f, fw, m)
            if s is None or s["median"] <= 0:
                continue
            names.append(fw)
            med.append(s["median"] * 1e6)
            lo.append(max(s["median"] - s["min"], 0) * 1e6)
            hi.append(max(s["max"] - s["median"], 0) * 1e6)
        y = range(len(names))
        colors = [OURS_COLOR if n == "handoffs" else PEER_COLOR for n in names]
        ax.barh(list(y), med, color=colors, xerr=[lo, hi], capsize=3,
                error_kw={"elinewidth": 1, "ecolor": "black"})
        ax.set_yticks(list(y), [LABELS[n] for n in names])
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(us_label))
        ax.set_title(title)
        ax.grid(axis="x", which="major", alpha=0.3)
        # The same ratios as the table: peer / ours within each round, median over rounds.
        ratios = summary.get("ratios", {}).get(f"{f}.{m}", {})
        for i, v in enumerate(med):
            text = us_value(v)
            r = ratios.get(names[i], {}).get("median")
            if r is not None:
                text += f"  (×{r:.0f})" if r >= 10 else f"  (×{r:.1f})"
            ax.text(v * 1.15 + hi[i], i, text, va="center", fontsize=8.5)
        if med:
            ax.set_xlim(min(med) / 3, max(m + h for m, h in zip(med, hi, strict=True)) * 30)
    rounds = res["meta"]["args"]["rounds"]
    fig.suptitle(f"Orchestration overhead per framework, zero-latency model "
                 f"(median of {rounds} round{'s' if rounds != 1 else ''}, whiskers min–max; "
                 "log scale)", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    plt.close(fig)


def chart_history(res: dict[str, Any], out: Path) -> None:
    summary = res["summary"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.6),
                                      gridspec_kw={"width_ratios": [1, 1.15]})
    # Left: per-handoff time against the number of earlier messages in the session.
    xs, ys, lo, hi = [], [], [], []
    for n in (10, 100, 1000, 10000):
        s = get(summary, "history", "handoffs", f"per_handoff_at_{n}_s")
        if s is not None:
            xs.append(n)
            ys.append(s["median"] * 1e6)
            lo.append(max(s["median"] - s["min"], 0) * 1e6)
            hi.append(max(s["max"] - s["median"], 0) * 1e6)
    if xs:
        left.errorbar(xs, ys, yerr=[lo, hi], marker="o", color=OURS_COLOR, capsize=3,
                      label="handoffs, per handoff")
        for x, y in zip(xs, ys, strict=True):
            left.annotate(us_value(y), (x, y), textcoords="offset points", xytext=(0, 8),
                          ha="center", fontsize=8.5)
        left.set_xscale("log")
        left.set_xticks(xs, [f"{x:,}" for x in xs])
        left.set_xlim(xs[0] / 2, xs[-1] * 2)
        left.set_ylim(0, max(y + h for y, h in zip(ys, hi, strict=True)) * 1.4)
        left.yaxis.set_major_formatter(FuncFormatter(us_label))
    left.set_xlabel("earlier messages in the session")
    left.set_ylabel("time per handoff")
    left.set_title("(e) handoffs: per handoff vs history length")
    left.grid(alpha=0.3)

    # Right: the H=1 turn, plain / streamed / persisted, and LangGraph persisted for scale.
    rows = (
        ("handoffs run", "streamed", "handoffs", "median_run_s", OURS_COLOR),
        ("handoffs stream", "streamed", "handoffs", "median_s", OURS_COLOR),
        ("handoffs SQLite", "persisted_turn", "handoffs", "median_s", OURS_COLOR),
        ("handoffs PostgreSQL", "persisted_turn_pg", "handoffs", "median_s", OURS_COLOR),
        ("LangGraph swarm\n+ AsyncSqliteSaver", "persisted_turn", "langgraph", "median_s",
         PEER_COLOR),
        ("LangGraph swarm\n(no checkpointer)", "turn", "langgraph", "median_s", PEER_COLOR),
    )
    names, med, lo2, hi2, colors = [], [], [], [], []
    for label, f, fw, m, color in rows:
        s = get(summary, f, fw, m)
        if s is None:
            continue
        names.append(label)
        med.append(s["median"] * 1e6)
        lo2.append(max(s["median"] - s["min"], 0) * 1e6)
        hi2.append(max(s["max"] - s["median"], 0) * 1e6)
        colors.append(color)
    y = list(range(len(names)))
    right.errorbar(med, y, xerr=[lo2, hi2], fmt="none", ecolor="black", capsize=3, zorder=2)
    right.scatter(med, y, c=colors, s=45, zorder=3)
    for i, v in enumerate(med):
        right.annotate(us_value(v), (v, i), textcoords="offset points", xytext=(8, 5),
                       fontsize=8.5)
    right.set_yticks(y, names)
    right.invert_yaxis()
    right.set_xscale("log")
    right.xaxis.set_major_formatter(FuncFormatter(us_label))
    if med:
        right.set_xlim(min(med) / 2, max(med) * 6)
    right.set_title("(e) one H=1 turn: run, streamed, persisted (log scale)")
    right.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    plt.close(fig)


def chart_traffic(res: dict[str, Any], out: Path) -> bool:
    """(f): request bytes per conversation (bars, calls annotated) and per turn (lines)."""
    summary = (res.get("traffic") or {}).get("summary") or {}
    rows = [(k, s) for k, s in summary.items() if s.get("bytes")]
    if not rows:
        return False
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5.4),
                                      gridspec_kw={"width_ratios": [1.1, 1]})
    y = list(range(len(rows)))
    kbs = [s["bytes"] / 1000 for _, s in rows]
    colors = [OURS_COLOR if k.startswith("handoffs") else PEER_COLOR for k, _ in rows]
    left.barh(y, kbs, color=colors)
    for i, (_, s) in enumerate(rows):
        tokens = f", {s['tokens'] / 1000:.1f}k tokens" if s.get("tokens") else ""
        left.text(kbs[i] + max(kbs) * 0.01, i, f"{kbs[i]:.1f} KB, {s['calls_range'][1]} calls"
                  f"{tokens}", va="center", fontsize=8.5)
    left.set_yticks(y, [s["label"] for _, s in rows])
    left.invert_yaxis()
    left.set_xlim(0, max(kbs) * 1.45)
    left.set_xlabel("request bytes sent to the model, whole conversation (KB)")
    left.set_title("(f) model traffic, six-turn conversation")
    left.grid(axis="x", alpha=0.3)
    turns = list(range(1, 7))
    palette = iter(["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf",
                    "#bcbd22", "#7f7f7f"])  # no red: red is ours
    for k, s in rows:
        ours = k.startswith("handoffs")
        style = {"own_tools": "-", "full": (0, (5, 1)), "conversation": "--",
                 "last_user": ":", "summary": "-."}
        right.plot(turns, [b / 1000 for b in s["turn_bytes"]], marker="o", markersize=3,
                   color=OURS_COLOR if ours else next(palette),
                   linestyle=style.get(k.split(":")[-1], "-") if ours else "-",
                   linewidth=2 if k == "handoffs:own_tools" else 1.2, label=s["label"])
    right.set_xticks(turns)
    right.set_xlabel("user turn")
    right.set_ylabel("request KB in the turn")
    right.set_title("(f) per turn (turn 3: billing → triage → shipping)")
    right.grid(alpha=0.3)
    right.legend(fontsize=7.5, ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.16))
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    plt.close(fig)
    return True


def main() -> None:
    p = argparse.ArgumentParser(description="Draw the benchmark charts from a results file.")
    p.add_argument("results", type=Path)
    p.add_argument("--out-dir", type=Path, default=Path("docs/img"))
    args = p.parse_args()
    res = json.loads(args.results.read_text())
    args.out_dir.mkdir(parents=True, exist_ok=True)
    chart_ab(res, args.out_dir / "bench_ab.png")
    chart_history(res, args.out_dir / "bench_history.png")
    wrote = [args.out_dir / "bench_ab.png", args.out_dir / "bench_history.png"]
    if chart_traffic(res, args.out_dir / "bench_traffic.png"):
        wrote.append(args.out_dir / "bench_traffic.png")
    print("plot: wrote " + ", ".join(str(w) for w in wrote))


if __name__ == "__main__":
    main()
