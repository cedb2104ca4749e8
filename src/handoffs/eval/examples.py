"""Routes taught by example, and routing modes, for `handoffs eval`.

`split_cases` divides labelled cases into a training share and a test share (by a hash
of each case's id: the same split every run, whatever the file's order, and never the same
case on both sides). `with_examples` gives each one-way route the first messages of
training cases its target should answer (`Handoff.examples`), so the model is taught the
boundary by example; the test cases then measure it. `with_routing` sets every agent's
`routing` (`tools` or `choice`, see `Agent.routing`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
from collections.abc import Sequence
from typing import Any, Literal, cast

from ..core.agent import Agent
from ..core.handoff import Handoff
from ..core.team import Team
from ..errors import HandoffsError
from .cases import Case

ROUTING_MODES = ("tools", "choice", "calibrated", "tools+examples", "choice+examples",
                 "calibrated+examples")
"""The routing modes `run_eval(routing=...)` plays: how agents route, and whether routes
carry examples from the training cases (`+examples`, needs `train=`)."""

EXAMPLES_PER_ROUTE = 3
"""At most this many examples per route: enough to draw a boundary, few enough to keep
the tool descriptions (sent with every request) short."""


def split_cases(cases: Sequence[Case], train: float) -> tuple[list[Case], list[Case]]:
    """(training cases, test cases): `train` is the training share, 0 < train < 1."""
    if not 0 < train < 1:
        raise HandoffsError(f"The training share must be between 0 and 1 (0.5), not "
                            f"{train!r}.", code="invalid_argument")
    ranked = sorted(cases, key=lambda c: hashlib.sha256(c.id.encode()).hexdigest())
    cut = round(len(ranked) * train)
    if cut == 0 or cut == len(ranked):
        raise HandoffsError(f"{len(ranked)} cases cannot be split {train:.0%} / "
                            f"{1 - train:.0%}: each side needs one case at least.",
                            code="invalid_argument")
    chosen = {c.id for c in ranked[:cut]}
    return ([c for c in cases if c.id in chosen], [c for c in cases if c.id not in chosen])


def examples_by_agent(cases: Sequence[Case]) -> dict[str, list[str]]:
    """The first user message of each case, under the one agent that should answer it
    (cases whose first turn accepts several agents teach nothing and are left out)."""
    found: dict[str, list[str]] = {}
    for case in cases:
        first = case.turns[0]
        if len(first.agents) == 1:
            texts = found.setdefault(first.agents[0], [])
            if first.user not in texts:
                texts.append(first.user)
    return found


def with_examples(team: Team, cases: Sequence[Case],
                  per_route: int = EXAMPLES_PER_ROUTE) -> Team:
    """`team` with each one-way route's `examples` taken from `cases` (its target's,
    at most `per_route`, after any the route declares)."""
    taught = examples_by_agent(cases)
    agents = []
    for agent in team.agents:
        routes = team.plan(agent.name).routes_by_target
        handoffs: list[Handoff | Agent | str] = []
        for h in agent.handoffs:
            target = h if isinstance(h, str) else h.name if isinstance(h, Agent) else (
                h.target_name)
            route = routes.get(target)
            if route is None or route.handoff.returns or target not in taught:
                handoffs.append(h)
                continue
            own = route.handoff
            more = [t for t in taught[target] if t not in own.examples]
            handoffs.append(dataclasses.replace(
                own, examples=(*own.examples, *more)[:max(per_route, len(own.examples))]))
        agents.append(dataclasses.replace(agent, handoffs=tuple(handoffs)))
    return rebuilt(team, agents)


def with_routing(team: Team, mode: str) -> Team:
    """`team` with every agent routing by `mode` (`tools`, `choice` or `calibrated`)."""
    if mode not in ("tools", "choice", "calibrated"):
        raise HandoffsError(f"Unknown routing {mode!r}; one of {', '.join(ROUTING_MODES)}.",
                            code="invalid_argument")
    routing = cast(Literal["tools", "choice", "calibrated"], mode)
    agents = [a if a.is_human or a.is_remote else dataclasses.replace(a, routing=routing)
              for a in team.agents]
    return rebuilt(team, agents)


def rebuilt(team: Team, agents: Sequence[Any]) -> Team:
    """`team` with `agents` in place of its own; every other setting of the constructor
    (entry, fallback, policy...) read back from the team under the parameter's name."""
    params = inspect.signature(Team.__init__).parameters
    kwargs = {name: getattr(team, name) for name in params
              if name not in ("self", "agents") and hasattr(team, name)}
    return Team(agents, **kwargs)
