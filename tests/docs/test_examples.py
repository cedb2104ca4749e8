"""Every example runs offline and shows the handoff it is about; with HANDOFFS_MODEL set,
each also runs on that real provider."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HANDOFFS_MODEL", "TRIAGE_MODEL",
        "SPECIALIST_MODEL")


def run_example(name: str, live: bool = False) -> str:
    env = {k: v for k, v in os.environ.items() if live or k not in KEYS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT / "src"),
                                                      env.get("PYTHONPATH"))))
    env["NO_COLOR"] = "1"
    done = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], env=env,
                          capture_output=True, text=True, timeout=300 if live else 60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_support_plays_tools_delegation_return_escalation_and_next_turn() -> None:
    out = run_example("support")
    assert "triage hands off to billing (llm)" in out
    assert "billing asks policy" in out                                   # delegation
    assert "refunds calls issue_refund" in out                            # tools
    assert "refunds hands off to triage (llm)" in out                     # back to triage
    assert "technical hands off to operator (escalation)" in out          # a human
    assert "🛠 Tech support hands off to 💳 Billing (llm)" in out
    assert "⇢ Transferring you to Billing. (💳 Billing answers your next message)" in out
    assert "💳 Billing: Thanks! I've corrected the invoice address to Oak Ave." in out


def test_math_specialist_answers_in_the_same_turn() -> None:
    out = run_example("math_specialist")
    assert "💬 Generalist hands off to ∫ Calculus specialist (llm)" in out
    assert "∫ Calculus specialist: Product rule:" in out
    assert out.rstrip().endswith("answered by calculus after 1 handoff(s)")


def test_research_delegation_passes_a_reference_not_the_document() -> None:
    out = run_example("research_delegation")
    assert "📚 Reference desk asks 🔬 Research analyst (llm)" in out
    assert "the delegation carried {'document': 'q3-report', 'context'" in out
    assert "Headcount" not in out.split("the delegation carried")[1]
    assert out.count("📚 Reference desk: From the Q3 report") == 1


def test_supervisor_plan_runs_steps_and_recovers_the_failed_one() -> None:
    out = run_example("supervisor_plan")
    assert "planner asks ✍ writer (plan_step)" in out and "planner asks ⚖ legal" in out
    assert "pricing could not answer (model_error)" in out
    assert "planner asks 🧰 generalist (error_recovery)" in out
    assert "status completed; steps recovered by the fallback: ['price']" in out


def test_cross_provider_gives_each_agent_its_own_model() -> None:
    out = run_example("cross_provider")
    assert "🧭 triage hands off to 🛂 visa (llm)" in out
    assert "triage: 1 model call(s)\nvisa: 1 model call(s)" in out


def test_session_transfer_by_summary_and_by_reference() -> None:
    out = run_example("session_transfer")
    assert "moved to session sale-1-t1 (held by onboarding); it starts with:" in out
    assert "The customer bought the Team plan for 12 seats" in out
    assert "onboarding calls fetch_previous_session" in out
    assert "sale-1 links to sale-1-ref; sale-1-ref links back to sale-1" in out


@pytest.mark.skipif(not os.environ.get("HANDOFFS_MODEL"),
                    reason="set HANDOFFS_MODEL (and its key) to run the examples live")
@pytest.mark.parametrize("name", ["support", "math_specialist", "research_delegation",
                                  "supervisor_plan", "cross_provider", "session_transfer"])
def test_each_example_runs_on_a_real_provider(name: str) -> None:
    assert run_example(name, live=True)


CHATTABLE = sorted(p.stem for p in EXAMPLES.glob("*.py") if p.stem != "playback")
"""Every example the README says `handoffs chat examples/NAME.py:team` talks to."""

FIRST_HOUR = ["Hello, I need help", "What can you do about derivatives, visas, research, "
              "pricing, accounts or invoices?", "Thanks, that's all"]
"""What a newcomer types: a greeting, a message that touches every example's topics, and
a goodbye; three turns in one process, where a script that runs out would fail."""


def cli(*args: str, stdin: str | None = None, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in (*KEYS, "HANDOFFS_STORE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT / "src"),
                                                      env.get("PYTHONPATH"))))
    env["NO_COLOR"] = "1"
    return subprocess.run([sys.executable, "-m", "handoffs.cli", *args], cwd=cwd, env=env,
                          input=stdin, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", CHATTABLE)
def test_each_example_passes_the_check_the_docs_recommend(name: str, tmp_path: Path) -> None:
    done = cli("check", str(EXAMPLES / f"{name}.py:team"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "error   " not in done.stdout


@pytest.mark.parametrize("name", CHATTABLE)
def test_each_example_chats_for_several_turns_offline(name: str, tmp_path: Path) -> None:
    done = cli("chat", str(EXAMPLES / f"{name}.py:team"), "--store", "memory://",
               stdin="\n".join([*FIRST_HOUR, "/quit"]) + "\n", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "the turn failed" not in done.stdout, done.stdout
    assert done.stdout.count("] you> ") == len(FIRST_HOUR) + 1     # every line answered
    assert "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("name", CHATTABLE)
def test_each_example_runs_turn_after_turn_from_the_command_line(
        name: str, tmp_path: Path) -> None:
    for text in FIRST_HOUR[:2]:
        done = cli("run", str(EXAMPLES / f"{name}.py:team"), text, "--session", "s1",
                   "--store", "sqlite:///run.db", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "the turn failed" not in done.stdout, done.stdout
