"""bench/instructions.py counts a turn's CPU instructions under valgrind, start-up excluded."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import instructions

SRC = Path(__file__).resolve().parents[2] / "src"

if shutil.which("valgrind") is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("valgrind is missing (make test installs Debian's when root)")
    pytest.skip("valgrind is not installed (make bench-instructions installs it)",
                allow_module_level=True)


def test_a_turn_costs_the_same_instructions_whatever_the_number_of_turns() -> None:
    instructions.warm(sys.executable, SRC)
    child = ["-c", instructions.CHILD, "1"]
    counts = [instructions.instructions(sys.executable, SRC,
                                        [*child, str(n), "run", str(instructions.WARMUP)])
              for n in (10, 30, 50)]
    one, again = (counts[1] - counts[0]) / 20, (counts[2] - counts[1]) / 20
    # Interpreter start-up and imports (hundreds of millions) cancel out: what is left is
    # one turn, hundreds of thousands, the same from either pair of runs (the garbage
    # collector is off while the turns run).
    assert counts[0] > 50_000_000
    assert 50_000 < one < 5_000_000
    assert abs(again / one - 1) < 0.1


def test_the_table_puts_each_tree_beside_the_first() -> None:
    row = {"turn_run": 400e3, "per_handoff": 170e3, "turn_stream": 520e3,
           "stream_ratio": 1.3, "turn_sqlite": 1.5e6, "turn_reply": 540e3, "import": 380e6}
    later = dict(row, turn_run=440e3)
    text = instructions.table({"before": row, "after": later})
    assert "| turn H=1, `runner.run` | 400.0 k | 440.0 k (+10.0%) |" in text
    assert "| stream / run | ×1.300 | ×1.300 |" in text
