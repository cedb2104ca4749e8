"""`handoffs chat` through a pseudo-terminal: type as a person would, read the screen."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import TEAMS, offline_env

pexpect = pytest.importorskip("pexpect")


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[Any]:
    children = []

    def start(*args: str) -> Any:
        child = pexpect.spawn(sys.executable, ["-m", "handoffs.cli", "chat", *args],
                              cwd=str(tmp_path), env=offline_env(), encoding="utf-8",
                              timeout=20, dimensions=(50, 220))
        children.append(child)
        return child

    yield start
    for child in children:
        child.close(force=True)


def say(child: Any, line: str) -> str:
    """Type a line; the screen up to the next prompt."""
    child.sendline(line)
    child.expect(r"\] you> ")
    return str(child.before)


def test_a_chat_with_the_support_team_moves_between_agents(chat: Any) -> None:
    c = chat("--session", "c1")
    c.expect(r"\] you> ")
    banner = str(c.before)
    assert "model: the offline model (no --model, HANDOFFS_MODEL or API key is set)" in banner
    assert "session c1 in sqlite:///handoffs.db" in banner
    assert c.after == "] you> " and "[🧭 Triage" in banner

    screen = say(c, "I was charged twice on my invoice")
    assert ("→ 🧭 Triage hands off to 💳 Billing (llm): Billing question: I was charged twice "
            "on my invoice") in screen
    assert "💳 Billing: Which order was charged twice?" in screen    # the support team's rules
    assert screen.rstrip().endswith("[💳 Billing")           # the prompt names who is active

    screen = say(c, "/agents")
    assert " ● 💳 Billing (billing) — Charges, invoices, duplicate payments." in screen
    assert "📜 Policy desk (policy) — Checks refund policy. [not selectable]" in screen

    screen = say(c, "/switch tech support")                  # display names work too
    assert "→ you hand the conversation to 🛠 Tech support (user_request)" in screen
    screen = say(c, "/switch policy")
    assert "✗ switch to policy refused (not_user_selectable)" in screen

    screen = say(c, "It crashes. Can a human operator look at it?")
    assert "🛠 Tech support: Let me bring in a colleague who can check your account." in screen
    assert "→ 🛠 Tech support hands off to 🙋 Operator (human) (escalation)" in screen
    assert "… waiting for 🙋 Operator (human)" in screen

    screen = say(c, "/handoffs")
    assert "🧭 Triage → 💳 Billing  llm" in screen
    assert "💳 Billing → 🛠 Tech support  user_request: The user picked this agent." in screen
    assert "refused (not_user_selectable)" in screen
    assert "🛠 Tech support → 🙋 Operator (human)  escalation" in screen

    screen = say(c, "/history")
    assert "you (to triage): I was charged twice on my invoice" in screen

    screen = say(c, "/session")
    assert "session c1" in screen and "active  operator" in screen
    assert "status  waiting_for_human" in screen

    screen = say(c, "/new")
    assert "new session cli-" in screen and screen.rstrip().endswith("[🧭 Triage")

    c.sendline("/quit")
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 0


def test_ctrl_c_interrupts_the_turn_not_the_session(chat: Any) -> None:
    c = chat(f"{TEAMS}:slow", "--store", "memory://")
    c.expect(r"\] you> ")
    assert "model: SlowModel (the runner's own model)" in str(c.before)
    c.sendline("Take your time")
    c.expect("slow: Thinking ")
    c.sendintr()
    c.expect(r"\] you> ")
    assert "^C: turn stopped; the session goes on" in str(c.before)
    screen = say(c, "/session")                              # the session goes on
    assert "active  slow" in screen
    screen = say(c, "/history")                              # the message is kept
    assert "Take your time" in screen
    c.sendintr()                                             # at the prompt: a hint
    c.expect("Ctrl-D or /quit to leave")
    c.sendeof()
    c.expect(pexpect.EOF)
    c.close()
    assert c.exitstatus == 0


def test_a_tool_call_waits_for_approve_or_reject_in_the_chat(chat: Any) -> None:
    c = chat(f"{TEAMS}:approvals", "--session", "a1")
    c.expect(r"\] you> ")
    screen = say(c, "refund A-1")
    assert "⏸ billing wants to call refund" in screen and "/approve" in screen
    screen = say(c, "hello?")  # the session waits: a new message is refused, not lost
    assert "waiting_for_approval" in screen
    screen = say(c, "/approve")
    assert "✓ approved refund" in screen and "A-1 is refunded." in screen
    say(c, "refund A-2")
    screen = say(c, "/reject not today")
    assert "✗ rejected refund: not today" in screen
    assert "I could not refund A-2." in screen


def test_unknown_commands_point_to_help(chat: Any) -> None:
    c = chat("--store", "memory://")
    c.expect(r"\] you> ")
    assert "unknown command /nope; /help lists them" in say(c, "/nope")
    assert "/switch NAME" in say(c, "/help")


def test_approve_and_reject_refuse_an_id_that_is_not_waiting(chat: Any) -> None:
    c = chat(f"{TEAMS}:approvals", "--store", "memory://")
    c.expect(r"\] you> ")
    screen = say(c, "/approve")                              # nothing waits yet
    assert "nothing waits for approval in session" in screen and "''" not in screen
    say(c, "refund A-1")
    screen = say(c, "/approve xyz_typo")
    assert "no call 'xyz_typo' waits for approval; waiting: " in screen
    assert "(refund)" in screen and "approved" not in screen and "refunded" not in screen
    screen = say(c, "/reject rule_9 no more refunds")
    assert "no call 'rule_9' waits for approval" in screen and "rejected" not in screen
    assert "status  waiting_for_approval" in say(c, "/session")   # nothing was decided
    screen = say(c, "/reject no more refunds")               # one call waits: no id needed
    assert "✗ rejected refund: no more refunds" in screen


def test_with_several_calls_waiting_an_id_is_needed(chat: Any) -> None:
    c = chat(f"{TEAMS}:two_refunds", "--store", "memory://")
    c.expect(r"\] you> ")
    screen = say(c, "refund A-1 and A-2")
    assert screen.count("wants to call refund") == 2
    screen = say(c, "/approve")
    assert "2 calls wait: name one, /approve ID; waiting: call_a1 (refund), call_a2 (refund)" \
        in screen
    screen = say(c, "/approve call_a2")
    assert "✓ approved refund" in screen
    screen = say(c, "/reject not this one")                  # one left: the reason alone
    assert "✗ rejected refund: not this one" in screen and "Done with both." in screen


def test_the_header_names_the_store_by_its_url(chat: Any, tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text("from handoffs import Agent, Runner, Team\n"
                   "runner = Runner(Team([Agent('solo')]), store='sqlite:///own.db')\n")
    c = chat(f"{app}:runner")
    c.expect(r"\] you> ")
    assert "session cli-" in str(c.before) and " in sqlite:///own.db" in str(c.before)
    assert "SQLiteStore" not in str(c.before)


def test_after_an_escalation_you_answer_as_the_operator_and_hand_back(chat: Any) -> None:
    c = chat("--store", "memory://")
    c.expect(r"\] you> ")
    screen = say(c, "/operator")                             # nobody to answer as yet
    assert "no person holds this conversation" in screen
    screen = say(c, "My dock crashes. Can a human operator look at it?")
    assert "… waiting for 🙋 Operator (human): a person answers (/operator to answer as them)" \
        in screen
    assert "reply_as_human" not in screen

    c.sendline("/operator")
    c.expect(r"\] operator> ")
    assert "you answer as 🙋 Operator (human)" in str(c.before)
    c.sendline("Hi, I'm Dana. I reset your account.")
    c.expect(r"\] operator> ")
    assert "🙋 Operator (human): Hi, I'm Dana. I reset your account." in str(c.before)
    c.sendline("/handback billing")                          # not one of the human's routes
    c.expect(r"\] operator> ")
    assert "✗ hand-back to billing refused (not_declared)" in str(c.before)

    screen = say(c, "/handback tech support")                # display names work too
    assert ("→ 🙋 Operator (human) hands off to 🛠 Tech support (programmatic): The human "
            "operator handed the conversation back.") in screen
    assert screen.rstrip().endswith("[🛠 Tech support")
    screen = say(c, "/history")
    assert "🙋 Operator (human): Hi, I'm Dana. I reset your account." in screen
    screen = say(c, "Thanks, it works")                      # the user again, to the AI agent
    assert "🛠 Tech support: Glad to help!" in screen
