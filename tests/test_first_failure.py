"""A failed turn is never silent: with no logging configured, the first one of a process
is written to standard error once (through `logging.lastResort`); an application that
configures logging, or the `handoffs` command that prints failures itself, sees no extra
line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import asyncio
from handoffs import Agent, ModelError, Runner, Team
from handoffs.testing import ScriptedModel

runner = Runner(Team([Agent("solo")]), model=ScriptedModel([
    ModelError("401 Incorrect API key", "auth_error"), ModelError("again", "auth_error")]))
print(repr(asyncio.run(runner.run("s1", "hello")).output))
print(repr(asyncio.run(runner.run("s1", "hello?")).output))
"""


def python(code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT / "src"),
                                                      env.get("PYTHONPATH"))))
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=60)


def test_the_first_failed_turn_of_a_process_is_shown_once() -> None:
    done = python(SCRIPT)
    assert done.returncode == 0
    assert done.stdout == "''\n''\n"                       # what the script prints
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr                     # once, not per failure
    assert lines[0].startswith("handoffs: turn 1 of s1 failed (auth_error): 401 Incorrect "
                               "API key (result.error; shown once because logging is not "
                               "configured")
    assert "Traceback" not in done.stderr


def test_configured_logging_decides_what_is_shown() -> None:
    done = python("import logging\nlogging.basicConfig(format='%(levelname)s %(message)s')\n"
                  + SCRIPT)
    assert "shown once" not in done.stderr
    assert done.stderr.count("WARNING turn ") == 2          # every failure, its own way


def test_last_resort_set_to_none_silences_it() -> None:
    done = python("import logging\nlogging.lastResort = None\n" + SCRIPT)
    assert done.stderr == ""


def test_the_command_shows_a_failure_once_in_its_own_words(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HANDOFFS_MODEL")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT / "src"),
                                                      env.get("PYTHONPATH"))))
    env["NO_COLOR"] = "1"
    teams = ROOT / "tests" / "cli" / "teams.py"
    done = subprocess.run([sys.executable, "-m", "handoffs.cli", "run", f"{teams}:failing",
                           "hi", "--store", "memory://"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "✗ the turn failed (model_error): the provider is down" in done.stdout
    assert done.stderr == ""
