"""`mypy --strict` checks the fields of every event the runtime makes: `Turn.emit` is
overloaded on the `type` string, one `TypedDict` of `handoffs.core.event_data` per type,
so a misspelt key, a missing field, a wrong value or an unknown type fails the lint."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CASES = {
    "right": ("agent_returned", '"ok": True'),
    "a misspelt key": ("agent_returned", '"okay": True'),
    "a wrong value type": ("agent_returned", '"ok": "yes"'),
    "a key of no field": ("agent_returned", '"extra": 1, "ok": True'),
    "a missing field": ("agent_returned", '"record": 1'),
    "no such event type": ("agent_return", '"ok": True'),
}


def test_mypy_strict_refuses_a_wrong_key_a_wrong_value_a_missing_field_or_type(
        tmp_path: Path) -> None:
    lines = ["from handoffs.runtime.state import Turn", ""]
    at: dict[int, str] = {}
    for case, (kind, last) in CASES.items():
        lines.append(f"def emits_{len(at)}(t: Turn, text: str) -> None:")
        at[len(lines) + 1] = case
        lines.append(f'    t.emit("{kind}", {{"source": "billing", "target": "triage", '
                     f'"record_id": "r1", "text": text, {last}}})')
        lines.append("")
    source = tmp_path / "emitting.py"
    source.write_text("\n".join(lines))
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental",
         "--cache-dir", str(tmp_path / ".mypy"), str(source)], cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")}, capture_output=True, text=True,
        timeout=600)

    failed = {at[int(n)] for n in re.findall(
        r'emitting\.py:(\d+): error: No overload variant of "emit" of "Turn" matches',
        done.stdout)}
    assert failed == set(CASES) - {"right"}, done.stdout + done.stderr
    assert done.stdout.count(": error:") == len(CASES) - 1, done.stdout
