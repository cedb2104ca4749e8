"""`handoffs sessions`: list, show, export, import and delete what a store keeps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from handoffs import Agent, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply

from .conftest import Handoffs

STORE = ("--store", "sqlite:///chat.db")


def test_a_session_can_be_listed_shown_exported_imported_and_deleted(
        handoffs: Handoffs, tmp_path: Path) -> None:
    assert handoffs("run", "My invoice is wrong", "--session", "s1", *STORE).returncode == 0

    listed = handoffs("sessions", "list", *STORE)
    assert listed.returncode == 0
    row = listed.stdout.splitlines()[1].split()
    assert row[:4] == ["s1", "billing", "1", "4"]   # id, active agent, turns, messages

    shown = handoffs("sessions", "show", "s1", *STORE, "--team", "handoffs.examples.support")
    assert shown.returncode == 0
    assert "you (to triage): My invoice is wrong" in shown.stdout
    assert "💳 Billing: I've emailed you the invoice" in shown.stdout
    assert "🧭 Triage → 💳 Billing  llm: Billing question: My invoice is wrong" in shown.stdout

    assert handoffs("sessions", "export", "s1", "-o", "s1.json", *STORE).returncode == 0
    exported = json.loads((tmp_path / "s1.json").read_text())
    assert exported["id"] == "s1" and exported["active_agent"] == "billing"

    other = ("--store", "sqlite:///other.db")
    imported = handoffs("sessions", "import", "s1.json", *other)
    assert imported.stdout.strip() == "imported session s1 (4 messages)"
    assert handoffs("sessions", "list", "--json", *other).stdout.count('"id": "s1"') == 1

    deleted = handoffs("sessions", "delete", "s1", *STORE)
    assert deleted.stdout.strip() == "deleted session s1"
    assert handoffs("sessions", "list", *STORE).stdout.strip() == (
        "no sessions in sqlite:///chat.db")


def test_an_unknown_session_is_one_line_on_stderr(handoffs: Handoffs) -> None:
    assert handoffs("run", "hello", "--session", "s1", *STORE).returncode == 0
    done = handoffs("sessions", "show", "nope", *STORE)
    assert done.returncode == 2
    assert done.stderr.startswith("handoffs: There is no session 'nope'")


def test_import_refuses_a_file_that_is_not_an_export(handoffs: Handoffs,
                                                     tmp_path: Path) -> None:
    (tmp_path / "junk.json").write_text("not json")
    done = handoffs("sessions", "import", "junk.json", *STORE)
    assert done.returncode == 2 and "is not JSON" in done.stderr


def test_show_counts_one_handoff_in_the_singular(handoffs: Handoffs) -> None:
    assert handoffs("run", "My invoice is wrong", "--session", "s1", *STORE).returncode == 0
    shown = handoffs("sessions", "show", "s1", *STORE)
    assert "session s1  1 turn, 4 messages, 1 handoff, status idle" in shown.stdout


def test_importing_a_session_that_exists_names_the_cli_flag(handoffs: Handoffs) -> None:
    assert handoffs("run", "hello", "--session", "s1", *STORE).returncode == 0
    assert handoffs("sessions", "export", "s1", "-o", "s1.json", *STORE).returncode == 0
    again = handoffs("sessions", "import", "s1.json", *STORE)
    assert again.returncode == 2
    assert again.stderr.strip() == ("handoffs: Session 's1' already exists in this store; add "
                                    "--replace to overwrite it.")
    assert handoffs("sessions", "import", "s1.json", "--replace", *STORE).returncode == 0


@pytest.mark.parametrize("command", [
    ["sessions", "list"], ["sessions", "show", "s1"], ["sessions", "export", "s1"],
    ["sessions", "delete", "s1"], ["stats"]])
def test_reading_commands_refuse_a_database_that_is_not_there(
        handoffs: Handoffs, tmp_path: Path, command: list[str]) -> None:
    done = handoffs(*command, "--store", "sqlite:///nonexistent.db")
    assert done.returncode == 2
    assert done.stderr.startswith("handoffs: There is no SQLite database 'nonexistent.db'")
    assert "no sessions" not in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == []     # nothing was created



class Booking(BaseModel):
    seat_number: str | None = None


@tool
def change_seat(ctx: RunContext[Booking], seat: str) -> str:
    """Move the passenger."""
    ctx.context.seat_number = seat
    return "ok"


async def test_show_prints_the_sessions_typed_context(handoffs: Handoffs,
                                                      tmp_path: Path) -> None:
    runner = Runner(Team([Agent("seats", tools=[change_seat])], context_type=Booking),
                    model=ScriptedModel([call("change_seat", seat="4C"), reply("Done.")]),
                    store=f"sqlite:///{tmp_path / 'chat.db'}")
    await runner.run("s1", "seat 4C")
    await runner.store.close()
    shown = handoffs("sessions", "show", "s1", *STORE)
    assert shown.returncode == 0, shown.stderr
    assert 'context {"seat_number": "4C"}' in shown.stdout
