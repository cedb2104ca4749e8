"""What an evaluation measured: per configuration (model × history view), accuracy per
turn, per case, per route and per tag, the confusion matrix, refusals and failures by code,
model calls, prompt bytes, tokens and latency; rendered as text, JSON or an HTML page."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from .cases import Case
from .judge import FAILED, TurnResult


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


@dataclass
class EvalRun:
    """One configuration's results: every played turn, judged, and what they add up to."""

    model: str
    """The model as named (`openai:gpt-4.1-mini`, `offline`, a class name)."""
    history: str
    """The runner's default history view in this run."""
    cases: Sequence[Case]
    turns: list[TurnResult]
    """Every played turn, case by case in file order, repetitions after one another."""
    repeat: int = 1
    seconds: float = 0.0
    """Wall time of the whole run (cases overlap, so less than the turns' sum)."""

    @property
    def label(self) -> str:
        return f"{self.model} · history {self.history}"

    @property
    def accuracy(self) -> float:
        """Share of turns that met every expectation of their case."""
        return _ratio(sum(t.passed for t in self.turns), len(self.turns))

    @property
    def routing_accuracy(self) -> float:
        """Share of turns answered by an expected agent (other labels not checked)."""
        return _ratio(sum(t.routed for t in self.turns), len(self.turns))

    @cached_property
    def conversations(self) -> list[list[TurnResult]]:
        """The turns grouped by played conversation (case × repetition)."""
        groups: dict[tuple[str, int], list[TurnResult]] = {}
        for t in self.turns:
            groups.setdefault((t.case, t.play), []).append(t)
        return list(groups.values())

    @property
    def case_accuracy(self) -> float:
        """Share of played conversations whose every turn passed."""
        convs = self.conversations
        return _ratio(sum(all(t.passed for t in c) for c in convs), len(convs))

    @property
    def failing(self) -> list[list[TurnResult]]:
        """The played conversations with at least one turn that did not pass."""
        return [c for c in self.conversations if not all(t.passed for t in c)]

    @cached_property
    def matrix(self) -> dict[str, Counter[str]]:
        """Expected agent (row) × answering agent (column, `(failed)` for a failed
        turn) → turns. A turn with several acceptable agents counts in the row of the one
        that answered when it is one of them, else in the row of the first."""
        rows: dict[str, Counter[str]] = {}
        for t in self.turns:
            column = t.answered_by
            row = column if column in t.expected else t.expected[0]
            rows.setdefault(row, Counter())[column] += 1
        return rows

    def agents(self) -> list[str]:
        """The matrix's rows and columns, in a stable order (first seen), `(failed)` last."""
        seen = dict.fromkeys(name for t in self.turns for name in t.expected)
        seen.update(dict.fromkeys(t.answered_by for t in self.turns))
        seen.pop(FAILED, None)
        names = list(seen)
        return [*names, FAILED] if any(t.answered_by == FAILED for t in self.turns) else names

    def per_route(self) -> dict[str, tuple[int, int]]:
        """Expected agent → (turns it answered, turns it should have answered)."""
        return {row: (counts.get(row, 0), sum(counts.values()))
                for row, counts in self.matrix.items()}

    def per_tag(self) -> dict[str, tuple[int, int]]:
        """Tag → (turns passed, turns) over the cases that carry it."""
        tags = {c.id: c.tags for c in self.cases}
        out: dict[str, list[int]] = {}
        for t in self.turns:
            for tag in tags.get(t.case, ()):
                row = out.setdefault(tag, [0, 0])
                row[0] += t.passed
                row[1] += 1
        return {tag: (p, n) for tag, (p, n) in sorted(out.items())}

    def refusals(self) -> Counter[str]:
        """Refused handoffs and tool calls, by code."""
        return Counter(r["code"] for t in self.turns for r in t.refusals)

    def failures(self) -> Counter[str]:
        """Turns that failed (or raised), by code."""
        return Counter(t.error or "error" for t in self.turns
                       if t.status in ("failed", "error"))

    def totals(self) -> dict[str, Any]:
        """Model calls, prompt bytes, tokens and latency: totals, per conversation, per
        turn. Tokens are None when the model reported no usage (offline models)."""
        calls = [c for t in self.turns for c in t.calls]
        convs = max(len(self.conversations), 1)
        # Offline models report zero tokens: that is "not reported", not a measurement.
        usage = [c.usage for c in calls
                 if c.usage is not None and (c.usage.input_tokens or c.usage.output_tokens)]
        latency = sorted(t.seconds for t in self.turns)
        return {
            "model_calls": len(calls),
            "model_calls_per_conversation": len(calls) / convs,
            "model_calls_per_turn": _ratio(len(calls), len(self.turns)),
            "prompt_bytes": sum(c.prompt_bytes for c in calls),
            "prompt_bytes_per_conversation": sum(c.prompt_bytes for c in calls) / convs,
            "max_request_bytes": max((c.prompt_bytes for c in calls), default=0),
            "input_tokens": sum(u.input_tokens for u in usage) if usage else None,
            "output_tokens": sum(u.output_tokens for u in usage) if usage else None,
            "latency_mean": statistics.fmean(latency) if latency else 0.0,
            "latency_p50": _quantile(latency, 0.5),
            "latency_p95": _quantile(latency, 0.95),
            "latency_max": latency[-1] if latency else 0.0,
        }

    def summary(self) -> dict[str, Any]:
        """The run's figures as JSON-ready data (no per-turn detail)."""
        turns = len(self.turns)
        return {
            "model": self.model, "history": self.history, "repeat": self.repeat,
            "cases": len(self.cases), "conversations": len(self.conversations),
            "turns": turns, "turns_passed": sum(t.passed for t in self.turns),
            "accuracy": self.accuracy, "routing_accuracy": self.routing_accuracy,
            "case_accuracy": self.case_accuracy,
            "per_route": {k: {"right": r, "turns": n, "accuracy": _ratio(r, n)}
                          for k, (r, n) in self.per_route().items()},
            "per_tag": {k: {"passed": p, "turns": n, "accuracy": _ratio(p, n)}
                        for k, (p, n) in self.per_tag().items()},
            "matrix": {row: dict(cols) for row, cols in self.matrix.items()},
            "refusals": dict(self.refusals()), "failed_turns": dict(self.failures()),
            **self.totals(), "seconds": self.seconds,
        }

    def to_dict(self, detail: str = "failing") -> dict[str, Any]:
        """The summary and the turns: `detail="failing"` (default) keeps what each agent
        saw only for turns that did not pass, `"all"` for every turn, `"none"` for none."""
        d = self.summary()
        d["turns_played"] = [t.to_dict(detail == "all" or (detail == "failing"
                                                             and not t.passed))
                             for t in self.turns]
        return d


@dataclass
class EvalReport:
    """The result of `run_eval`: one `EvalRun` per model × history view, side by side."""

    runs: list[EvalRun] = field(default_factory=list)

    @property
    def run(self) -> EvalRun:
        """The first (often the only) run."""
        return self.runs[0]

    @property
    def accuracy(self) -> float:
        """The lowest turn accuracy of the runs: a threshold holds for every one."""
        return min(r.accuracy for r in self.runs)

    def below(self, min_accuracy: float) -> list[EvalRun]:
        """The runs whose turn accuracy is under `min_accuracy` (a share, 0 to 1)."""
        return [r for r in self.runs if r.accuracy < min_accuracy]

    def assert_accuracy(self, min_accuracy: float = 1.0) -> EvalReport:
        """Raise `AssertionError` listing the turns that did not pass when a run's turn
        accuracy is under `min_accuracy`; else return the report (for tests)."""
        low = self.below(min_accuracy)
        if low:
            from .text import misroutes

            raise AssertionError("\n".join(
                f"routing accuracy {r.accuracy:.1%} < {min_accuracy:.1%} ({r.label}):\n"
                + "\n".join(misroutes(r)) for r in low))
        return self

    def to_dict(self, detail: str = "failing") -> dict[str, Any]:
        return {"runs": [r.to_dict(detail) for r in self.runs]}

    def text(self, color: bool = False) -> str:
        """The report as people read it in a terminal."""
        from .text import render_text

        return render_text(self, color)

    def html(self, title: str = "handoffs eval") -> str:
        """The report as one self-contained HTML page (no scripts or styles from
        elsewhere): the matrix as a heat map, every failing conversation expandable."""
        from .html import render_html

        return render_html(self, title)


def _quantile(sorted_values: Iterable[float], q: float) -> float:
    values = list(sorted_values)
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(q * len(values)))]
