"""Behaviour 11: the support team example plays end to end, offline."""

from __future__ import annotations

import subprocess
import sys

from handoffs import Runner, RunStatus
from handoffs.examples.support import CONVERSATION, build_team, script
from handoffs.testing import ScriptedModel


async def test_support_conversation_moves_between_the_right_agents() -> None:
    model = ScriptedModel(script())
    runner = Runner(build_team(), model=model)

    first = await runner.run("c1", CONVERSATION[0])
    assert first.status is RunStatus.COMPLETED and first.agent == "refunds"
    assert "R-0001" in first.output
    assert [(r.source, r.target, r.returns) for r in first.handoffs] == [
        ("triage", "billing", False), ("billing", "policy", True),
        ("billing", "refunds", False)]

    second = await runner.run("c1", CONVERSATION[1])
    assert second.agent == "technical"
    assert [r.target for r in second.handoffs] == ["triage", "technical"]

    third = await runner.run("c1", CONVERSATION[2])
    assert third.status is RunStatus.WAITING_FOR_HUMAN and third.agent == "operator"
    assert third.handoffs[0].reason.value == "escalation"

    state = await runner.get_session("c1")
    assert state is not None
    assert state.shared["refunds"] == [{"order_id": "A-1001", "amount": 129.0,
                                      "reference": "R-0001"}]
    assert model.remaining == 0


def test_handoffs_demo_prints_who_speaks_and_why() -> None:
    # --scripted: never call a real provider, even where an API key is set.
    out = subprocess.run([sys.executable, "-m", "handoffs.cli", "demo", "--scripted"],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert "SCRIPTED" in out
    assert "triage hands off to billing (llm)" in out
    assert "billing asks policy" in out
    assert "refunds: I've refunded" in out
    assert "technical hands off to operator (escalation)" in out
    assert "active agent is now technical" in out


def test_handoffs_demo_rules_plays_on_the_rule_based_model() -> None:
    done = subprocess.run([sys.executable, "-m", "handoffs.cli", "demo", "--rules"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "RULE-BASED" in done.stdout and "SCRIPTED" not in done.stdout
    assert "billing asks policy (llm): Is a refund for a duplicate charge" in done.stdout
    assert "refunds: I've refunded the duplicate charge" in done.stdout
    assert "technical hands off to operator (escalation)" in done.stdout

    both = subprocess.run([sys.executable, "-m", "handoffs.cli", "demo", "--rules",
                           "--scripted"], capture_output=True, text=True, timeout=60)
    assert both.returncode == 2 and "leave out --model and --scripted" in both.stderr
