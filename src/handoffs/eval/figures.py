"""The figures an evaluation report sets side by side, one column per run: defined once
here, rendered by the text report and the HTML page alike. A new figure (a money cost) is
one more row in `side_by_side`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from ..models.prices import dollars
from .reliability import shown_ks
from .symptoms import SYMPTOMS

if TYPE_CHECKING:
    from .results import EvalRun

NOT_APPLICABLE = "n/a"
"""What a figure shows for a run it does not apply to (routing, for the single agent)."""

Row = tuple[str, list[str]]
"""A figure's name and its value in each run, as text."""


def side_by_side(runs: Sequence[EvalRun]) -> list[Row]:
    """Every figure of `runs`, in report order (rows about repeated plays only when the
    cases were played more than once, the answer's accuracy only beside a baseline)."""
    def row(name: str, value: Callable[[EvalRun], str]) -> Row:
        return name, [value(r) for r in runs]

    repeat = max(r.repeat for r in runs)
    baseline = any(r.baseline is not None for r in runs)
    rows = [
        row("turn accuracy", lambda r: frac(sum(t.passed for t in r.turns), len(r.turns))),
        row("routing accuracy", lambda r: frac(sum(t.routed for t in r.turns), len(r.turns))
            if r.routes_apply else NOT_APPLICABLE),
    ]
    if baseline:
        rows.append(row("answer accuracy", lambda r: frac(
            sum(t.answered_right for t in r.turns), len(r.turns))))
    rows.append(row("case accuracy", lambda r: frac(
        sum(all(t.passed for t in c) for c in r.conversations), len(r.conversations))))
    if repeat > 1:
        for k in shown_ks(repeat):
            rows.append((f"pass^{k}", [pct(r.pass_k(k)) if k <= r.repeat
                                       else NOT_APPLICABLE for r in runs]))
        rows.append(row("turn accuracy by play: min / median / max", lambda r: " / ".join(
            pct(v) for v in (r.spread().low, r.spread().median, r.spread().high))))
        rows.append(row("turn accuracy by play: stdev", lambda r: pct(r.spread().stdev)))
    rows += [
        row("failed turns", lambda r: str(sum(r.failures().values()))),
        row("refusals", lambda r: str(sum(r.refusals().values()))),
    ]
    for key, name, _ in SYMPTOMS:
        rows.append((name, [_symptom(r, key) for r in runs]))
    rows += [
        row("model calls / conversation",
            lambda r: f"{r.totals()['model_calls_per_conversation']:.1f}"),
        row("model calls / resolved conversation",
            lambda r: _per(r.resolved()["model_calls_per_resolved"])),
        row("prompt kB / conversation",
            lambda r: f"{r.totals()['prompt_bytes_per_conversation'] / 1000:.1f}"),
        row("tokens in / out", tokens),
        row("tokens / resolved conversation",
            lambda r: _per(r.resolved()["tokens_per_resolved"], 0)),
        row("latency p50 / p95 per turn", lambda r: f"{secs(r.totals()['latency_p50'])} / "
            f"{secs(r.totals()['latency_p95'])}"),
    ]
    if any(r.prices is not None for r in runs):  # `--prices`: no table, no cost rows
        rows += [row("cost / conversation", lambda r: _cost(r, "per_conversation")),
                 row("cost / resolved conversation", lambda r: _cost(r, "per_resolved"))]
    return rows


def _cost(run: EvalRun, key: str) -> str:
    cost = run.cost()
    if cost is None:
        return NOT_APPLICABLE
    if cost["total"] is None:
        return "not reported"
    value = cost[key]
    if value is None:
        return "-"
    return dollars(value) + (" (some models unpriced)" if cost["unpriced"] else "")


def notes(runs: Sequence[EvalRun]) -> list[str]:
    """Sentences a reader needs under the table (what does not apply to whom)."""
    out = []
    if any(not r.routes_apply for r in runs):
        out.append("single agent: one agent with every tool of the team and no routes "
                   "(eval.baseline); routing labels (agent, path, handoff kind, payload, "
                   "handed_off / waiting_for_human) do not apply to it, so its turn "
                   "accuracy is its answer accuracy.")
    unpriced = sorted({m for r in runs for m in ((r.cost() or {}).get("unpriced") or ())})
    if unpriced:
        out.append(f"cost: the price table has no price for {', '.join(unpriced)}; their "
                   "tokens are left out of the cost.")
    if any(r.repeat > 1 for r in runs):
        out.append("pass^k: the chance that k plays of a case all pass (tau-bench, "
                   "C(c,k)/C(n,k) per case over n plays with c passed, averaged over cases).")
    return out


def _symptom(run: EvalRun, key: str) -> str:
    return frac(int(run.symptom_rates()[key]["turns"]), len(run.turns))


def _per(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def tokens(run: EvalRun) -> str:
    """Input / output tokens, or `not reported` (offline models report none)."""
    totals = run.totals()
    if totals["input_tokens"] is None:
        return "not reported"
    return f"{totals['input_tokens']} / {totals['output_tokens']}"


def frac(part: int, whole: int) -> str:
    """`3/4 75.0%` (`-` for nothing)."""
    return f"{part}/{whole} {part / whole:.1%}" if whole else "-"


def pct(share: float) -> str:
    """`75.0%`."""
    return f"{share:.1%}"


def secs(value: float) -> str:
    """`12 ms`, or `1.5 s` from a second on."""
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"
