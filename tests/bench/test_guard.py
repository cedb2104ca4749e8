"""bench/guard.py: the speed guard fails a figure over its budget and says what grew."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import guard

SRC = Path(__file__).resolve().parents[2] / "src"
BUDGETS = {"python": "3.11", "tolerance": 0.03,
           "figures": {"turn_run": 400_000, "per_handoff": 170_000},
           "functions": {"turn_run": {"ceval.c:_PyEval_EvalFrameDefault": 150_000.0}},
           "calls": {"turn_run": {"turn.py:Turn.emit": 6.0, "x.py:kept": 2.0}}}


def test_a_figure_within_its_tolerance_passes() -> None:
    said: list[str] = []
    assert guard.check(BUDGETS, {"turn_run": 411_000, "per_handoff": 170_000}, {}, {},
                       said.append)
    assert any("turn_run" in line and "+2.8%" in line and "ok" in line for line in said)


def test_a_figure_over_budget_fails_and_names_what_grew() -> None:
    said: list[str] = []
    profiles = {"turn_run": {"ceval.c:_PyEval_EvalFrameDefault": 170_000.0,
                             "obmalloc.c:unknown_then": 5_000.0}}
    calls = {"turn_run": {"turn.py:Turn.emit": 9.0, "x.py:kept": 2.0, "new.py:extra": 3.0}}
    assert not guard.check(BUDGETS, {"turn_run": 420_000, "per_handoff": 160_000},
                           profiles, calls, said.append)
    text = "\n".join(said)
    assert "turn_run" in text and "+5.0%" in text and "over budget" in text
    assert "_PyEval_EvalFrameDefault (150,000.0 -> 170,000.0)" in text
    assert "new.py:extra (0.0 -> 3.0)" in text
    assert "turn.py:Turn.emit (6.0 -> 9.0)" in text and "new.py:extra (0.0 -> 3.0)" in text
    assert "x.py:kept" not in text  # unchanged: not named
    assert "unknown_then" not in text  # not among the stored functions: no count to compare
    assert "per_handoff" in text and "-5.9%" in text


def test_python_calls_per_turn_name_our_functions() -> None:
    one = guard.python_calls(sys.executable, SRC, 1, "run", turns=4)
    five = guard.python_calls(sys.executable, SRC, 5, "run", turns=4)
    # Every turn emits its events; four more handoffs make more of them, per turn.
    assert one["turn.py:Turn.emit"] >= 2
    assert five["turn.py:Turn.emit"] > one["turn.py:Turn.emit"]


def test_the_budget_file_names_every_figure_and_this_python_line() -> None:
    stored = json.loads(guard.BUDGETS.read_text())
    assert set(stored["figures"]) == {"turn_run", "per_handoff", "turn_stream",
                                      "turn_sqlite", "turn_reply", "import"}
    assert set(stored["calls"]) >= {"turn_run", "per_handoff"}
