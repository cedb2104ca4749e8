"""The evaluation report as text: the figures side by side (`eval.figures`), then per run
the matrix, the symptoms by route, the tags, the refusals and failures, the cases that did
not pass every play, and every turn that did not pass."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .figures import frac as _frac
from .figures import notes, side_by_side
from .judge import TurnResult, grouped_refusals
from .reliability import shown_ks
from .symptoms import SYMPTOMS

if TYPE_CHECKING:
    from .results import EvalRun


def render_text(runs: Sequence[EvalRun], color: bool = False) -> str:
    """The whole report: the runs' figures side by side, then each run."""
    lines: list[str] = []
    first = runs[0]
    lines.append(f"handoffs eval: {len(first.cases)} cases, "
                 f"{len(first.turns) // max(first.repeat, 1)} turns"
                 + (f", each played {first.repeat} times" if first.repeat > 1 else ""))
    lines.append("")
    lines += _table(["", *(r.label for r in runs)],
                    [[name, *values] for name, values in side_by_side(runs)])
    for note in notes(runs):
        lines += textwrap.wrap(note, 96, initial_indent="note: ", subsequent_indent="  ")
    for run in runs:
        lines += ["", _bold(f"== {run.label}", color), ""]
        if run.routes_apply:
            lines += _matrix(run)
            lines.append("")
            lines += _symptoms(run)
            lines.append("")
        tags = run.per_tag()
        if tags:
            lines += _wrapped("by tag: ", [f"{k} {_frac(p, n)}" for k, (p, n) in tags.items()])
        lines.append("refusals by code: " + _counts(run.refusals()))
        lines.append("failed turns by code: " + _counts(run.failures()))
        lines += _unreliable(run)
        failing = [t for t in run.turns if not t.passed]
        lines.append("")
        lines.append(f"turns that did not pass ({len(failing)}):" if failing
                     else "every turn passed")
        lines += misroutes(run)
    return "\n".join(lines) + "\n"


def _symptoms(run: EvalRun) -> list[str]:
    """Per expected agent: its turns, and how many showed each symptom."""
    per_route = run.symptoms_per_route()
    header = ["symptoms by route", "turns", *(short for _, _, short in SYMPTOMS)]
    body = []
    for route in (n for n in run.agents() if n in per_route):
        figures = per_route[route]
        turns = sum(run.matrix[route].values())
        body.append([route, str(turns), *(
            str(figures[key]["turns"]) if figures[key]["turns"] else "."
            for key, _, _ in SYMPTOMS)])
    return _table(header, body)


def _unreliable(run: EvalRun) -> list[str]:
    """With repeated plays, the cases that did not pass every play, and their pass^k."""
    if run.repeat < 2:
        return []
    cases = [c for c in run.reliability() if c.passed < c.trials]
    if not cases:
        return [f"every case passed all {run.repeat} plays"]
    ks = shown_ks(run.repeat)
    header = ["cases not passing every play", "passed", *(f"pass^{k}" for k in ks)]
    body = [[c.case, f"{c.passed}/{c.trials}", *(f"{c.pass_k(k):.2f}" for k in ks)]
            for c in cases]
    return ["", *_table(header, body)]


def misroutes(run: EvalRun) -> list[str]:
    """One line per turn that did not pass (with its problems), and what the agents did."""
    out: list[str] = []
    for t in run.turns:
        if t.passed:
            continue
        play = f" (play {t.play + 1})" if run.repeat > 1 else ""
        out.append(f"  {t.case} turn {t.index + 1}{play}: {_quote(t.user)}")
        out.append(f"    {'; '.join(t.problems)}")
        out.append(f"    {_story(t)}")
    return out


def _story(t: TurnResult) -> str:
    n = len(t.calls)
    parts = [f"{n} model call{'s' * (n != 1)}"]
    if not any(p.startswith("path ") for p in t.problems):
        parts.insert(0, f"path {' → '.join(t.path) or '(none)'}")
    if t.tools:
        parts.append("tools " + ", ".join(t.tools))
    if t.refusals:
        parts.append("refused " + ", ".join(
            f"{r['agent']}→{r.get('target') or r.get('tool')} ({r['code']})"
            + (f" ×{times}" if times > 1 else "") for times, r in grouped_refusals(t.refusals)))
    return "; ".join(parts)


def _wrapped(head: str, items: list[str], width: int = 96) -> list[str]:
    """`head` and the items joined by commas, wrapped between items."""
    lines = [head]
    for i, item in enumerate(items):
        piece = item + ("," if i < len(items) - 1 else "")
        if len(lines[-1]) + 1 + len(piece) > width and lines[-1].strip():
            lines.append("  " + piece)
        else:
            lines[-1] += ("" if lines[-1].endswith(" ") else " ") + piece
    return lines


def _matrix(run: EvalRun) -> list[str]:
    names = run.agents()
    rows = [name for name in names if name in run.matrix]
    header = ["expected \\ answered", *names, "right"]
    body = []
    for row in rows:
        counts = run.matrix[row]
        right, total = counts.get(row, 0), sum(counts.values())
        body.append([row, *(str(counts[c]) if counts.get(c) else "." for c in names),
                     _frac(right, total)])
    return _table(header, body)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest]).rstrip()

    return [line(header), *(line(r) for r in rows)]


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counter.most_common()) or "none"


def _quote(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _bold(text: str, color: bool) -> str:
    return f"\033[1m{text}\033[0m" if color else text
