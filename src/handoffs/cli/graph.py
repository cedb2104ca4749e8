"""`handoffs graph`: a team's routes as Mermaid, Graphviz DOT or SVG.

Transfers are solid arrows, delegations (the answer comes back) dotted, next-turn
transfers thick; the entry agent is rounded and human agents are hexagons.
"""

from __future__ import annotations

import shutil
import subprocess

from ..core.team import Route, Team
from ..errors import HandoffsError

FORMATS = ("mermaid", "dot", "svg")


def kind(route: Route) -> str:
    """`delegation`, `next_turn` or `transfer`."""
    h = route.handoff
    if h.returns:
        return "delegation"
    return "next_turn" if h.respond == "next_turn" else "transfer"


def mermaid(team: Team) -> str:
    """Mermaid flowchart text."""
    lines = ["flowchart LR"]
    for a in team.agents:
        label = (f"{a.icon} {a.label}" if a.icon else a.label).replace('"', "'")
        if a.name == team.entry:
            shape = f'(["{label}"])'
        elif a.is_human:
            shape = f'{{{{"{label}"}}}}'
        else:
            shape = f'["{label}"]'
        lines.append(f"    {_id(a.name)}{shape}")
    arrows = {"transfer": "-->", "delegation": "-.->", "next_turn": "==>"}
    for a in team.agents:
        for r in team.plan(a.name).routes.values():
            k = kind(r)
            label = r.tool_name + (" (next turn)" if k == "next_turn" else "")
            lines.append(f"    {_id(r.source)} {arrows[k]}|{label}| {_id(r.target.name)}")
    if team.fallback is not None:
        lines.append(f"    %% fallback on errors: {team.fallback}")
    return "\n".join(lines) + "\n"


def dot(team: Team) -> str:
    """Graphviz DOT text."""
    lines = ["digraph team {", "    rankdir=LR;",
             '    node [shape=box, style="rounded,filled", fillcolor=white, '
             'fontname="Helvetica"];', '    edge [fontname="Helvetica", fontsize=10];']
    for a in team.agents:
        label = f"{a.icon} {a.label}" if a.icon else a.label
        attrs = [f"label={_q(label)}"]
        if a.color:
            attrs.append(f"color={_q(a.color)}")
        if a.is_human:
            attrs.append("shape=hexagon")
        if a.name == team.entry:
            attrs.append("penwidth=2")
        if a.name == team.fallback:
            attrs.append(f"xlabel={_q('fallback')}")
        lines.append(f"    {_q(a.name)} [{', '.join(attrs)}];")
    styles = {"transfer": "", "delegation": ", style=dashed, dir=both",
              "next_turn": ", style=bold, penwidth=2"}
    for a in team.agents:
        for r in team.plan(a.name).routes.values():
            k = kind(r)
            label = r.tool_name + ("\\n(next turn)" if k == "next_turn" else "")
            lines.append(f"    {_q(r.source)} -> {_q(r.target.name)} "
                         f"[label={_q(label)}{styles[k]}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def svg(team: Team) -> str:
    """SVG drawn by Graphviz's `dot` command; `graphviz_missing` when it is not installed."""
    exe = shutil.which("dot")
    if exe is None:
        raise HandoffsError(
            "--format svg needs Graphviz's 'dot' command, which is not on PATH. Install "
            "Graphviz (apt-get install graphviz, brew install graphviz, or "
            "https://graphviz.org/download), or use --format mermaid or --format dot.",
            code="graphviz_missing")
    done = subprocess.run([exe, "-Tsvg"], input=dot(team), capture_output=True, text=True,
                          timeout=60, check=False)
    if done.returncode != 0:
        raise HandoffsError(f"Graphviz failed: {done.stderr.strip()}", code="graphviz_failed")
    return done.stdout


def render(team: Team, fmt: str) -> str:
    """The graph in `fmt` (one of `FORMATS`)."""
    if fmt == "mermaid":
        return mermaid(team)
    if fmt == "dot":
        return dot(team)
    if fmt == "svg":
        return svg(team)
    raise HandoffsError(f"Unknown graph format {fmt!r}; use {', '.join(FORMATS)}.",
                        code="invalid_argument")


def _id(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name)


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\\\\n", "\\n") + '"'
