"""`import handoffs` does not load the evaluation, and the evaluation loads no SDK or YAML
parser until a case file or a model needs one."""

from __future__ import annotations

import subprocess
import sys


def loaded_after(statement: str, names: tuple[str, ...]) -> list[str]:
    code = (f"import sys\n{statement}\n"
            f"print(sorted(m for m in {names!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return eval(out.stdout)  # type: ignore[no-any-return]


def test_import_handoffs_leaves_the_evaluation_out() -> None:
    assert loaded_after("import handoffs", ("handoffs.eval", "handoffs.eval.run")) == []


def test_the_evaluation_imports_no_sdk_nor_yaml() -> None:
    assert loaded_after("import handoffs.eval", ("openai", "anthropic", "yaml",
                                                 "handoffs.cli.offline")) == []
