"""What an evaluation measured (`EvalReport`): one `EvalRun` per configuration (model ×
history view × player: the team, or the single-agent baseline), side by side; rendered as
text, JSON or an HTML page."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .results import EvalRun

__all__ = ["EvalReport", "EvalRun"]


@dataclass
class EvalReport:
    """The result of `run_eval`: one `EvalRun` per model × history view × player (the team,
    then its single-agent baseline when asked for), side by side."""

    runs: list[EvalRun] = field(default_factory=list)

    @property
    def run(self) -> EvalRun:
        """The first (often the only) run."""
        return self.runs[0]

    @property
    def accuracy(self) -> float:
        """The lowest turn accuracy of the team's runs: a threshold holds for every one
        (a baseline is a comparison, not held to it)."""
        return min(r.accuracy for r in self.runs if r.baseline is None)

    def below(self, min_accuracy: float) -> list[EvalRun]:
        """The team's runs whose turn accuracy is under `min_accuracy` (a share, 0 to 1);
        baselines are not held to it."""
        return [r for r in self.runs if r.baseline is None and r.accuracy < min_accuracy]

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
        """Every run as JSON-ready data (`EvalRun.to_dict`)."""
        return {"runs": [r.to_dict(detail) for r in self.runs]}

    def text(self, color: bool = False) -> str:
        """The report as people read it in a terminal."""
        from .text import render_text

        return render_text(self.runs, color)

    def html(self, title: str = "handoffs eval") -> str:
        """The report as one self-contained HTML page (no scripts or styles from
        elsewhere): the matrix as a heat map, every failing conversation expandable."""
        from .html import render_html

        return render_html(self.runs, title)
