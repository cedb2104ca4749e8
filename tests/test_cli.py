"""The `handoffs` command: a clear one-line error instead of a traceback."""

from __future__ import annotations

import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "handoffs.cli", *args], capture_output=True,
                          text=True, timeout=60)


def test_an_unknown_provider_is_a_one_line_error() -> None:
    done = run("demo", "--model", "nope:x")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "handoffs: Unknown model provider 'nope' in 'nope:x'; known: anthropic, azure, "
        "bedrock, gemini, litellm, ollama, openai, openai-responses.")
    assert "Traceback" not in done.stderr


def test_graph_prints_the_support_team_as_mermaid() -> None:
    done = run("graph")
    assert done.returncode == 0
    assert done.stdout.startswith("flowchart LR")
    assert "triage -->|transfer_to_billing| billing" in done.stdout
    assert "billing -.->|ask_policy| policy" in done.stdout
