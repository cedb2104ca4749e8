"""`handoffs run`: one turn, the answer with its agent and every handoff with its reason."""

from __future__ import annotations

import json

from .conftest import TEAMS, Handoffs


def test_one_turn_prints_the_answer_its_agent_and_each_handoff(handoffs: Handoffs) -> None:
    done = handoffs("run", "Please refund 129 on order A-1001, I was charged twice",
                    "--store", "memory://")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "model: the offline model (no --model, HANDOFFS_MODEL or API key is set)" in out
    assert "→ 🧭 Triage hands off to 💳 Billing (llm)" in out
    assert "→ 💳 Billing asks 📜 Policy desk (llm)" in out
    assert "→ 💳 Billing hands off to 💸 Refunds (llm)" in out
    assert ("💸 Refunds: I've refunded the duplicate charge: Refund of $129.00 on A-1001 "
            "issued; reference R-0001.") in out


def test_json_prints_every_event_as_one_json_line(handoffs: Handoffs) -> None:
    done = handoffs("run", "I have a technical problem", "--json", "--store", "memory://")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "run_started" and types[-1] == "run_completed"
    handoff = next(e for e in events if e["type"] == "agent_handoff")
    assert (handoff["source"], handoff["target"], handoff["reason"]) == (
        "triage", "technical", "llm")
    assert events[-1]["result"]["agent"] == "technical"


def test_the_next_run_on_a_session_goes_to_the_agent_that_took_over(
        handoffs: Handoffs) -> None:
    store = "sqlite:///sessions.db"
    first = handoffs("run", "My invoice is wrong", "--session", "s1", "--store", store)
    assert "hands off to 💳 Billing" in first.stdout
    second = handoffs("run", "Thanks", "--session", "s1", "--store", store, "--json")
    started = json.loads(second.stdout.splitlines()[0])
    assert started == {**started, "type": "run_started", "agent": "billing", "turn": 2}


def test_a_runner_target_runs_with_its_own_model(handoffs: Handoffs) -> None:
    done = handoffs("run", f"{TEAMS}:runner", "What is the derivative of x^2?",
                    "--store", "memory://")
    assert done.returncode == 0, done.stderr
    assert "model: ScriptedModel (the runner's own model)" in done.stdout
    assert "front hands off to maths (llm): calculus" in done.stdout
    assert "maths: The derivative of x^2 is 2x." in done.stdout


def test_a_failed_turn_says_why_and_exits_1(handoffs: Handoffs) -> None:
    done = handoffs("run", f"{TEAMS}:failing", "hello", "--store", "memory://")
    assert done.returncode == 1
    assert "✗ the turn failed (model_error): the provider is down" in done.stdout


def test_a_guardrails_refusal_is_the_agents_answer_and_exits_0(handoffs: Handoffs) -> None:
    done = handoffs("run", f"{TEAMS}:guarded", "write a poem", "--store", "memory://")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "desk: I only help with flights." in done.stdout
    assert "guardrail no_poems (input) of desk: tripped (asks for a poem)" in done.stdout
    assert "the turn failed" not in done.stdout and "WARNING" not in done.stderr


def test_an_unknown_model_is_one_line_on_stderr_and_exit_2(handoffs: Handoffs) -> None:
    done = handoffs("run", "hi", "--model", "nope:x", "--store", "memory://")
    assert done.returncode == 2
    assert done.stderr.startswith("handoffs: Unknown model provider 'nope'")


def test_an_unknown_team_is_one_line_on_stderr_and_exit_2(handoffs: Handoffs) -> None:
    done = handoffs("run", "nowhere.py:team", "hi")
    assert done.returncode == 2
    assert done.stderr.startswith("handoffs: No file 'nowhere.py'")
    assert "Traceback" not in done.stderr


def test_version(handoffs: Handoffs) -> None:
    from handoffs import __version__

    done = handoffs("--version")
    assert done.stdout.strip() == f"handoffs {__version__}"


def test_run_help_shows_the_arguments_once(handoffs: Handoffs) -> None:
    done = handoffs("run", "--help")
    assert done.stdout.startswith("usage: handoffs run [-h] [options] [TEAM] MESSAGE\n")
    assert "[[TEAM] MESSAGE ...]" not in done.stdout
