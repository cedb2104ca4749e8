"""Reliability across plays: tau-bench's pass^k, per case and overall, and how accuracy
spreads from one play of the cases to the next (`run_eval(..., repeat=k)`).

pass^k is the chance that *all* k independent plays of a case pass (tau-bench, Yao et al.
2024, arXiv:2406.12045): reliability, where pass@k (at least one of k) measures luck. From
n plays of a case of which c passed, it is estimated without bias as C(c, k) / C(n, k),
and the overall figure is the mean over cases, as tau-bench's own code computes it. A
case plays 2 of 3 times: pass^1 = 2/3, pass^2 = 1/3, pass^3 = 0.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from math import comb
from typing import Any

from ..errors import HandoffsError


def pass_hat_k(trials: int, passed: int, k: int) -> float:
    """The estimate of pass^k for a case that passed `passed` of `trials` plays:
    C(passed, k) / C(trials, k). `k` is 1 to `trials`."""
    if not 0 <= passed <= trials:
        raise HandoffsError(f"passed ({passed}) must be between 0 and trials ({trials}).",
                            code="invalid_argument")
    if not 1 <= k <= trials:
        raise HandoffsError(f"pass^k needs 1 <= k <= trials ({trials}), not k={k}.",
                            code="invalid_argument")
    return comb(passed, k) / comb(trials, k)


@dataclass(slots=True, frozen=True)
class CaseReliability:
    """How often one case passed over its plays."""

    case: str
    """The case's id."""
    trials: int
    """How many times it was played (`repeat`)."""
    passed: int
    """How many of those plays passed (every turn of the conversation)."""

    def pass_k(self, k: int) -> float:
        """pass^k of this case (`pass_hat_k`)."""
        return pass_hat_k(self.trials, self.passed, k)

    def to_dict(self) -> dict[str, Any]:
        """The case's plays and its pass^k for every k, as JSON-ready data."""
        return {"trials": self.trials, "passed": self.passed,
                "pass_k": {str(k): self.pass_k(k) for k in range(1, self.trials + 1)}}


def per_case(plays: Iterable[tuple[str, bool]]) -> list[CaseReliability]:
    """Each case's plays counted, in the order cases first appear; `plays` holds one
    (case id, passed) pair per played conversation."""
    counts: dict[str, list[int]] = {}
    for case, ok in plays:
        row = counts.setdefault(case, [0, 0])
        row[0] += 1
        row[1] += ok
    return [CaseReliability(case, n, c) for case, (n, c) in counts.items()]


def pass_k(cases: Sequence[CaseReliability], k: int) -> float:
    """pass^k over cases: the mean of each case's estimate (0.0 for no cases). Every
    case must have been played at least `k` times."""
    if not cases:
        return 0.0
    return statistics.fmean(c.pass_k(k) for c in cases)


def shown_ks(trials: int) -> list[int]:
    """The k a report shows for `trials` plays: every k up to 8, past that 1, 2, 4, 8...
    and `trials` itself (JSON holds every k)."""
    if trials <= 8:
        return list(range(1, trials + 1))
    ks = [1]
    while ks[-1] * 2 < trials:
        ks.append(ks[-1] * 2)
    return [*ks, trials]


@dataclass(slots=True, frozen=True)
class Spread:
    """How one figure varies over the plays of an evaluation (one value per play)."""

    values: tuple[float, ...]
    """The figure of each play, in play order."""

    @property
    def low(self) -> float:
        """The lowest value (0.0 for none)."""
        return min(self.values, default=0.0)

    @property
    def median(self) -> float:
        """The median value (0.0 for none)."""
        return statistics.median(self.values) if self.values else 0.0

    @property
    def high(self) -> float:
        """The highest value (0.0 for none)."""
        return max(self.values, default=0.0)

    @property
    def stdev(self) -> float:
        """The sample standard deviation (0.0 for fewer than two plays)."""
        return statistics.stdev(self.values) if len(self.values) > 1 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The values and their summary as JSON-ready data."""
        return {"values": list(self.values), "min": self.low, "median": self.median,
                "max": self.high, "stdev": self.stdev}
