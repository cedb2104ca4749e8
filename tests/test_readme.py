"""The README's example runs and prints what the README says it prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_example_runs_as_documented(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Example"):]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    script = tmp_path / "example.py"
    script.write_text(code.group(1))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    promised = re.search(r"# (refunds -> .*)", code.group(1))
    assert promised is not None
    assert out.strip() == promised.group(1)


def test_examples_support_script_plays_offline() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "examples" / "support.py")],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert "refunds:" in out and "operator" in out
