"""The model `run` and `chat` use when no real one is configured: offline, no key.

It is a `RuleModel` (`handoffs.rules`): deterministic, and it never runs out. The
built-in support team gets its own rules (`handoffs.examples.support.rule_model()`), so
it answers a refund for real; any other team gets no rules, only what `RuleModel` does
when no rule applies: hand off toward the agent a message is about (along the team's
routes, back through triage if need be), escalate to a human agent when asked for a
person, fill payloads and tool arguments from the message, call a tool the message
names, and otherwise answer with a placeholder naming what a real model would do there
(answer, or which routes and tools it could use). It shows how a team moves, not what a
model would say.
"""

from __future__ import annotations

from ..core.team import Team
from ..models.base import Model
from ..rules import RuleModel


def offline_model(team: Team) -> Model:
    """The offline model for `team`: the support team's rules for the built-in support
    team, else a `RuleModel` with no rules that knows `team`'s routes.

    This is the one place the CLI chooses its offline model.
    """
    if is_support_team(team):
        from ..examples.support import rule_model

        return rule_model()
    return RuleModel(team=team)


def is_support_team(team: Team) -> bool:
    """True for the team `handoffs.examples.support.build_team()` builds (the built-in
    team, or `examples/support.py:team`): the same agents, tools and routes."""
    from ..examples.support import build_team

    support = build_team()
    return team.entry == support.entry and team.agents == support.agents
