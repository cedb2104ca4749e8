"""One configuration's results (`EvalRun`): every played turn, judged, and what they add
up to: accuracy per turn, case, route and tag, pass^k and accuracy's spread over repeated
plays, the confusion matrix, refusals and failures by code, symptoms per turn and per
route, model calls, prompt bytes, tokens, latency and cost per resolved conversation
(with a price table, in dollars too)."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..core.usage import Usage
from ..models.prices import Prices
from .cases import Case
from .judge import FAILED, TurnResult
from .reliability import CaseReliability, Spread, pass_k, per_case
from .symptoms import rates


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


@dataclass
class EvalRun:
    """One configuration's results: every played turn, judged, and what they add up to.

    A configuration is what `setup` lists (model, history view, player); a report sets
    runs side by side, one column each, under their `label`. A new dimension (a routing
    mode) is one more field here and one more entry of `setup`."""

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
    baseline: str | None = None
    """None: the team played the cases. `"single"`: the single-agent baseline did
    (`eval.baseline`), judged on the answer's labels only."""
    routing: str | None = None
    """How the team's agents routed (`tools`, `choice`, `choice+examples`...; see
    `eval.examples`); None: as the team declares."""
    prices: Prices | None = None
    """The price table the report's costs use (`handoffs eval --prices`); None: no cost
    is reported."""

    @property
    def setup(self) -> dict[str, str]:
        """What this run's configuration is, dimension by dimension, in label order:
        `model`, `history`, `routing` (when set), `player` (`team` or `single agent`)."""
        setup = {"model": self.model, "history": f"history {self.history}"}
        if self.routing is not None:
            setup["routing"] = f"routing {self.routing}"
        setup["player"] = "team" if self.baseline is None else f"{self.baseline} agent"
        return setup

    @property
    def label(self) -> str:
        """The run's name in a report: its `setup`, the team's player left unsaid."""
        parts = self.setup
        if self.baseline is None:
            parts.pop("player")
        return " · ".join(parts.values())

    @property
    def routes_apply(self) -> bool:
        """False for the single-agent baseline: routing labels do not apply to it."""
        return self.baseline is None

    @property
    def accuracy(self) -> float:
        """Share of turns that met every expectation of their case that applies (for the
        baseline, the answer's)."""
        return _ratio(sum(t.passed for t in self.turns), len(self.turns))

    @property
    def routing_accuracy(self) -> float | None:
        """Share of turns answered by an expected agent (other labels not checked); None
        for the single-agent baseline, which has no routes."""
        if not self.routes_apply:
            return None
        return _ratio(sum(t.routed for t in self.turns), len(self.turns))

    @property
    def answer_accuracy(self) -> float:
        """Share of turns whose answer met its labels, whoever gave it (the turn did not
        fail, tools called or not, a `completed` / `waiting_for_approval` status): the
        figure a team and its single-agent baseline compare on."""
        return _ratio(sum(t.answered_right for t in self.turns), len(self.turns))

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

    def reliability(self) -> list[CaseReliability]:
        """Per case, in case order: how many times it was played and passed."""
        return per_case((c[0].case, all(t.passed for t in c)) for c in self.conversations)

    def pass_k(self, k: int) -> float:
        """tau-bench's pass^k over the cases (`eval.reliability`): the chance that k plays
        of a case all pass, averaged over cases. `k` is 1 to `repeat`."""
        return pass_k(self.reliability(), k)

    def spread(self) -> Spread:
        """Turn accuracy of each play of the cases (play 1, 2, ...), and its spread."""
        plays: dict[int, list[int]] = {}
        for t in self.turns:
            row = plays.setdefault(t.play, [0, 0])
            row[0] += t.passed
            row[1] += 1
        return Spread(tuple(_ratio(p, n) for _, (p, n) in sorted(plays.items())))

    def symptom_rates(self) -> dict[str, dict[str, float | int]]:
        """Per symptom (`eval.symptoms.SYMPTOMS`): turns that showed it, times in all,
        and its rate per turn."""
        return rates([t.symptoms for t in self.turns])

    def symptoms_per_route(self) -> dict[str, dict[str, dict[str, float | int]]]:
        """Expected agent (the matrix's row) → `symptom_rates` over its turns."""
        rows: dict[str, list[TurnResult]] = {}
        for t in self.turns:
            row = t.answered_by if t.answered_by in t.expected else t.expected[0]
            rows.setdefault(row, []).append(t)
        return {row: rates([t.symptoms for t in turns]) for row, turns in rows.items()}

    def resolved(self) -> dict[str, Any]:
        """Cost per resolved conversation: what every played conversation cost (model
        calls, tokens) divided by the conversations that passed; None where nothing
        passed or (tokens) the model reported none."""
        won = sum(all(t.passed for t in c) for c in self.conversations)
        totals = self.totals()
        tokens_in, tokens_out = totals["input_tokens"], totals["output_tokens"]

        def per(value: int | None) -> float | None:
            return None if value is None or not won else value / won

        return {"conversations": won,
                "model_calls_per_resolved": per(totals["model_calls"]),
                "input_tokens_per_resolved": per(tokens_in),
                "output_tokens_per_resolved": per(tokens_out),
                "tokens_per_resolved": per(None if tokens_in is None
                                           else tokens_in + (tokens_out or 0))}

    def cost(self) -> dict[str, Any] | None:
        """What the played conversations cost under `prices` (US dollars): in all, per
        conversation, per resolved conversation, and the models the table has no price
        for (left out). None without a price table; the sums are None when the model
        reported no tokens (offline models)."""
        prices = self.prices
        if prices is None:
            return None
        by_model: dict[str, Usage] = {}
        for t in self.turns:
            for c in t.calls:
                u = c.usage
                if u is not None and (u.input_tokens or u.output_tokens):
                    by_model.setdefault(c.model or self.model, Usage()).add(u)
        if not by_model:
            return {"total": None, "per_conversation": None, "per_resolved": None,
                    "unpriced": []}
        total, unpriced = prices.cost(by_model)
        won = sum(all(t.passed for t in c) for c in self.conversations)
        return {"total": total,
                "per_conversation": total / max(len(self.conversations), 1),
                "per_resolved": total / won if won else None, "unpriced": unpriced}

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
        routes = self.routes_apply
        cases = self.reliability()
        return {
            "model": self.model, "history": self.history, "baseline": self.baseline,
            "setup": self.setup, "label": self.label, "repeat": self.repeat,
            "cases": len(self.cases), "conversations": len(self.conversations),
            "turns": turns, "turns_passed": sum(t.passed for t in self.turns),
            "accuracy": self.accuracy, "routing_accuracy": self.routing_accuracy,
            "answer_accuracy": self.answer_accuracy,
            "turns_answered_right": sum(t.answered_right for t in self.turns),
            "case_accuracy": self.case_accuracy,
            "pass_k": {str(k): pass_k(cases, k) for k in range(1, self.repeat + 1)},
            "pass_k_per_case": {c.case: c.to_dict() for c in cases},
            "accuracy_by_play": self.spread().to_dict(),
            "per_route": {k: {"right": r, "turns": n, "accuracy": _ratio(r, n)}
                          for k, (r, n) in self.per_route().items()} if routes else {},
            "per_tag": {k: {"passed": p, "turns": n, "accuracy": _ratio(p, n)}
                        for k, (p, n) in self.per_tag().items()},
            "matrix": {row: dict(cols) for row, cols in self.matrix.items()} if routes else {},
            "refusals": dict(self.refusals()), "failed_turns": dict(self.failures()),
            "symptoms": self.symptom_rates(),
            "symptoms_per_route": self.symptoms_per_route() if routes else {},
            "resolved": self.resolved(), "cost": self.cost(),
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


def _quantile(sorted_values: Iterable[float], q: float) -> float:
    values = list(sorted_values)
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(q * len(values)))]
