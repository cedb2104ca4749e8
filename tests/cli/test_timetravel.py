"""`handoffs sessions fork / rewind / undo-rewind` and `handoffs replay` (issue 31)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import Handoffs, offline_env

STORE = ("--store", "sqlite:///chat.db")

MISROUTE = '''
from handoffs.examples.support import build_team
from handoffs import Runner
from handoffs.stores import open_store
from handoffs.testing import ScriptedModel, reply, transfer

runner = Runner(build_team(), model=ScriptedModel({
    "triage": [reply("Hello! What can I do for you?"),
               transfer("technical", reason="the invoice page looks broken")],
    "technical": [reply("Please clear your browser's cache.")],
}))
'''


def _story(handoffs: Handoffs, tmp_path: Path) -> None:
    """A session triage got wrong: the double charge went to technical support (played
    in one process, as the scripted model's steps follow on from turn to turn)."""
    (tmp_path / "misroute.py").write_text(MISROUTE + """
if __name__ == "__main__":
    import asyncio

    async def story() -> None:
        runner.store = open_store("sqlite:///chat.db")
        for text in ("hello", "I was charged twice for my invoice"):
            await runner.run("s1", text)
        await runner.store.close()

    asyncio.run(story())
""")
    done = subprocess.run([sys.executable, "-c", "import runpy; "
                           "runpy.run_path('misroute.py', run_name='__main__')"],
                          cwd=tmp_path, env=offline_env(), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_replay_prints_where_each_turn_went_then_and_now(handoffs: Handoffs,
                                                         tmp_path: Path) -> None:
    _story(handoffs, tmp_path)

    done = handoffs("replay", "--session", "s1", "--from", "2", *STORE)

    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["turn", "user", "then", "now", "routing"]
    assert lines[1].startswith("2     I was charged twice for my invo…")
    assert "triage → technical" in lines[1]
    assert "triage → billing" in lines[1]
    assert lines[1].endswith("different agent")
    assert lines[3].startswith("0 of 1 turns routed the same; replayed in s1-replay-")

    as_json = json.loads(handoffs("replay", "--session", "s1", "--from", "1", "--json",
                                  *STORE).stdout)
    assert [t["routing"] for t in as_json["turns"]] == ["same", "different agent"]
    assert as_json["turns"][1]["new"]["handoffs"][0]["target"] == "billing"
    assert as_json["totals"]["model_calls"] >= 3 and as_json["totals"]["prompt_bytes"] > 0


def test_the_same_scripted_team_replays_the_same_routing(handoffs: Handoffs,
                                                         tmp_path: Path) -> None:
    _story(handoffs, tmp_path)

    done = handoffs("replay", "misroute.py:runner", "--session", "s1", "--from", "1",
                    "--json", *STORE)

    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["same"] is True
    assert [t["new"]["agent"] for t in found["turns"]] == ["triage", "technical"]


def test_fork_rewind_and_undo_from_the_command_line(handoffs: Handoffs,
                                                    tmp_path: Path) -> None:
    _story(handoffs, tmp_path)

    forked = handoffs("sessions", "fork", "s1", "--turn", "2", "--as", "s1-b", *STORE)
    assert forked.stdout.strip() == ("forked session s1 before turn 2 as s1-b (2 messages, "
                                     "active agent triage)")
    rewound = handoffs("sessions", "rewind", "s1", "--turn", "2", *STORE)
    assert rewound.returncode == 0, rewound.stderr
    assert rewound.stdout.startswith("rewound session s1 to before turn 2 (cut 4 messages, "
                                     "kept as s1-rewound-1-")
    shown = json.loads(handoffs("sessions", "show", "s1", "--json", *STORE).stdout)
    assert shown["turn"] == 1 and len(shown["messages"]) == 2
    assert shown["metadata"]["forks"][0]["session"] == "s1-b"
    undone = handoffs("sessions", "undo-rewind", "s1", *STORE)
    assert undone.stdout.strip() == ("put back what the last rewind of session s1 cut "
                                     "(2 turns, 6 messages)")
    bad = handoffs("sessions", "rewind", "s1", "--turn", "9", *STORE)
    assert bad.returncode == 2 and bad.stderr.startswith(
        "handoffs: Session 's1' has turns 1 to 2")
