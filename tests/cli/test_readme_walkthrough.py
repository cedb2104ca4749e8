"""The README's walk-through works as written: chat with the support team, switch agents,
see the graph, list and show the session afterwards."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT, offline_env

pexpect = pytest.importorskip("pexpect")


def section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## The `handoffs` command")
    return text[start:text.index("\n## ", start + 1)]


def test_the_readme_chat_then_graph_then_sessions(tmp_path: Path) -> None:
    screen = re.search(r"```text\n(.*?)```", section(), re.S)
    assert screen is not None
    typed = [line.split("you> ", 1)[1] for line in screen.group(1).splitlines()
             if "you> " in line]
    promised = [line.strip().removesuffix("...").strip()
                for line in screen.group(1).splitlines() if line.startswith("  → ")]
    assert typed[-1] == "/quit" and len(promised) == 5

    chat = pexpect.spawn(sys.executable, ["-m", "handoffs.cli", "chat"], cwd=str(tmp_path),
                         env=offline_env(), encoding="utf-8", timeout=20,
                         dimensions=(50, 220))
    chat.expect(r"\] you> ")
    assert "offline model" in str(chat.before)
    seen = ""
    for line in typed[:-1]:
        chat.sendline(line)
        chat.expect(r"\] you> ")
        seen += str(chat.before)
    chat.sendline("/quit")
    chat.expect(pexpect.EOF)
    for line in promised:
        assert line in seen

    blocks = re.findall(r"```sh\n(.*?)```", section(), re.S)
    assert blocks[0].split() == [".venv/bin/handoffs", "chat"]
    outputs = []
    for line in blocks[1].splitlines():
        args = line.split("#")[0].split()[1:]
        args = [a for a in args if a != "SESSION_ID"]
        if args[:2] == ["sessions", "show"]:
            listed = outputs[-1].splitlines()[1].split()[0]
            args.append(listed)
        done = subprocess.run([sys.executable, "-m", "handoffs.cli", *args], cwd=tmp_path,
                              env=offline_env(), capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    graph, listing, shown = outputs
    assert graph.startswith("flowchart LR")
    assert listing.splitlines()[1].split()[1] == "operator"      # who holds it now
    assert "you (to triage): I was charged twice on my invoice" in shown
    assert "Refund of $129.00 on A-1001 issued" in shown
    assert "user_request: The user picked this agent." in shown
