"""`assert_routing`: a team's tests assert how well it routes, in one line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cases import Case
from .report import EvalReport
from .run import run_eval_sync

if TYPE_CHECKING:
    from ..core.team import Team
    from ..runtime.runner import Runner


def assert_routing(target: Team | Runner, cases: Sequence[Case] | str | Path, *,
                   min_accuracy: float = 1.0, **options: Any) -> EvalReport:
    """Play `cases` (`run_eval`'s options: `model=`, `repeat=`, `history=`...) and raise
    `AssertionError`, listing each turn that did not pass and why, when the turn
    accuracy of any run is under `min_accuracy` (a share: 0.9 for 90%).

        def test_support_routing():
            assert_routing(build_team(), "tests/cases.jsonl", model="offline",
                           min_accuracy=0.9)

    In an async test: `(await run_eval(...)).assert_accuracy(0.9)`.
    """
    return run_eval_sync(target, cases, **options).assert_accuracy(min_accuracy)
