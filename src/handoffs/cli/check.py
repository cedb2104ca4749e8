"""`handoffs check`: what can be known about a team before it talks to anyone.

Errors (exit 1) are things that will fail or can never happen: a team that does not
build (`invalid_team`: an unresolved target, a tool name providers refuse, ...), agents
nothing leads to, `system_only` agents without a supervisor, humans nobody can escalate to.
Warnings are risks: routes whose target has no description (the model routes on it),
cycles of transfers that only the policy's loop rule bounds, routes the policy always
refuses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ..core.team import Route, Team


@dataclass(slots=True, frozen=True)
class Finding:
    """One problem `check` found."""

    level: Literal["error", "warning"]
    code: str
    """Stable: `invalid_target` or `load_failed` (TEAM could not be loaded: see
    `handoffs.cli.loading.load_target`), `invalid_team` (or another code the team raised
    while it was built), `unreachable`,
    `system_only_unreachable`, `human_unreachable`, `undescribed_target`, `handoff_cycle`,
    `route_always_refused`."""
    message: str
    agent: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"level": self.level, "code": self.code, "agent": self.agent,
                "message": self.message}


def check_team(team: Team) -> list[Finding]:
    """Every finding for a built team, errors first."""
    found = _reachability(team) + _routes(team) + _cycles(team)
    return sorted(found, key=lambda f: f.level != "error")


def _routes_of(team: Team) -> list[Route]:
    return [r for a in team.agents for r in team.plan(a.name).routes.values()]


def _reachability(team: Team) -> list[Finding]:
    reached = {team.entry}
    todo = [team.entry]
    while todo:
        for r in team.plan(todo.pop()).routes.values():
            if r.target.name not in reached:
                reached.add(r.target.name)
                todo.append(r.target.name)
    if team.fallback is not None:
        reached.add(team.fallback)
    if team.supervisor is not None and team.supervisor in reached:
        reached.update(a.name for a in team.agents if not a.is_human)  # plans assign anyone
    found = []
    for a in team.agents:
        if a.system_only and team.supervisor is None:
            found.append(Finding(
                "error", "system_only_unreachable",
                f"{a.name} is system_only, but the team has no supervisor, so every handoff "
                "to it is refused. Set Team(supervisor=...) or drop system_only.", a.name))
        elif a.name in reached:
            continue
        elif a.is_human:
            found.append(Finding(
                "error", "human_unreachable",
                f"{a.name} is a human nobody can escalate to: no route from the entry "
                f"{team.entry!r} leads to it. Add Handoff({a.name!r}) to an agent that "
                "should escalate.", a.name))
        else:
            found.append(Finding(
                "error", "unreachable",
                f"Nothing leads to {a.name} from the entry {team.entry!r}: no route, not "
                "the fallback, no supervisor. Add a route to it (or remove it; a user could "
                "still pick it with select_agent).", a.name))
    return found


def _routes(team: Team) -> list[Finding]:
    found = []
    for r in _routes_of(team):
        h, target = r.handoff, r.target
        if h.description is None and not target.description:
            found.append(Finding(
                "warning", "undescribed_target",
                f"{r.source} → {target.name}: {target.name} has no description and the route "
                "none, so the model sees only a name when choosing where to hand off. Set "
                f"Agent({target.name!r}, description=...) (routing quality).", r.source))
        if target.system_only and r.source != team.supervisor:
            found.append(Finding(
                "warning", "route_always_refused",
                f"{r.source} → {target.name}: {target.name} is system_only and {r.source} is "
                "not the supervisor, so the policy refuses this route every time.", r.source))
        missing = h.required_capabilities.difference(target.capabilities)
        if missing:
            found.append(Finding(
                "warning", "route_always_refused",
                f"{r.source} → {target.name}: the route requires "
                f"{', '.join(sorted(missing))}, which {target.name} lacks, so the policy "
                "refuses it every time.", r.source))
    return found


def _cycles(team: Team) -> list[Finding]:
    """Groups of agents that can transfer to one another in a circle (Tarjan's SCCs)."""
    edges: dict[str, list[str]] = {a.name: [] for a in team.agents}
    for r in _routes_of(team):
        if not r.handoff.returns:
            edges[r.source].append(r.target.name)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1 or v in edges[v]:
                groups.append(group)

    for a in team.agents:
        if a.name not in index:
            visit(a.name)
    policy = team.policy
    order = {a.name: i for i, a in enumerate(team.agents)}
    return [Finding(
        "warning", "handoff_cycle",
        f"{', '.join(sorted(g, key=order.__getitem__))} can transfer to one another in a "
        f"circle; only the policy bounds it (loop_limit={policy.loop_limit} within "
        f"{policy.loop_window} handoffs, max_handoffs_per_turn="
        f"{policy.max_handoffs_per_turn}). "
        + (f"Fine for a return to {team.entry}; " if team.entry in g else
           "Fine when agents hand back on purpose; ")
        + "make sure each description says when not to hand back.") for g in groups]
