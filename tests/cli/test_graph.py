"""`handoffs graph`: transfers, delegations and next-turn routes drawn differently."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .conftest import TEAMS, Handoffs, offline_env


def test_mermaid_draws_each_kind_of_route_its_own_way(handoffs: Handoffs) -> None:
    done = handoffs("graph")
    assert done.returncode == 0
    out = done.stdout
    assert out.startswith("flowchart LR\n")
    assert '    triage(["🧭 Triage"])' in out                       # the entry is rounded
    assert '    operator{{"🙋 Operator (human)"}}' in out           # humans are hexagons
    assert "triage -->|transfer_to_billing| billing" in out         # transfer
    assert "billing -.->|ask_policy| policy" in out         # delegation
    assert "technical ==>|transfer_to_billing (next turn)| billing" in out


def test_dot_draws_the_same_graph_for_graphviz(handoffs: Handoffs) -> None:
    out = handoffs("graph", f"{TEAMS}:team", "--format", "dot").stdout
    assert out.startswith("digraph team {")
    assert '"front" -> "maths" [label="transfer_to_maths"];' in out


@pytest.mark.skipif(shutil.which("dot") is None and os.environ.get("CI") != "true",
                    reason="Graphviz is not installed (make test installs it as root)")
def test_svg_is_drawn_by_graphviz_into_a_file(handoffs: Handoffs, tmp_path: Path) -> None:
    assert shutil.which("dot"), "CI=true and Graphviz's dot is missing (make test installs it)"
    done = handoffs("graph", "--format", "svg", "-o", "team.svg")
    assert done.returncode == 0, done.stderr
    svg = (tmp_path / "team.svg").read_text()
    assert "<svg" in svg and "Tech support" in svg


def test_svg_without_graphviz_says_what_to_install(handoffs: Handoffs,
                                                    tmp_path: Path) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()  # a PATH with no `dot` on it
    done = handoffs("graph", "--format", "svg", env=offline_env(PATH=str(bare)))
    assert done.returncode == 2
    assert "needs Graphviz's 'dot' command, which is not on PATH" in done.stderr
    assert "--format mermaid" in done.stderr
