"""Run the `handoffs` command as a user would: a subprocess, no keys, no network."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEAMS = Path(__file__).resolve().parent / "teams.py"


def offline_env(**extra: str) -> dict[str, str]:
    """The environment of a person with no model configured: no keys, plain output."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HANDOFFS_MODEL",
                        "HANDOFFS_STORE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT / "src"),
                                                      env.get("PYTHONPATH"))))
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


Handoffs = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def handoffs(tmp_path: Path) -> Handoffs:
    """`handoffs(*args)` runs the command in a temporary working directory."""

    def run(*args: str, env: dict[str, str] | None = None,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "handoffs.cli", *args], cwd=tmp_path,
                              env=env or offline_env(), input=stdin, capture_output=True,
                              text=True, timeout=60)

    return run
