"""The model `run` and `chat` use when no real one is configured: offline, no key.

It is a `RuleModel` (`handoffs.rules`): deterministic, and it never runs out. The
built-in example teams get their own rules (`handoffs.examples.support.rule_model()`,
`handoffs.examples.airline.rule_model()`), so they answer for real; any other team gets
no rules, only what `RuleModel` does when no rule applies: hand off toward the agent a
message is about (along the team's routes, back through triage if need be), escalate to
a human agent when asked for a person, fill payloads and tool arguments from the
message, call a read-only tool the message names, and otherwise answer with a
placeholder naming what a real model would do there (answer, or which routes and tools
it could use). It shows how a team moves, not what a model would say.
"""

from __future__ import annotations

from importlib import import_module

from ..core.team import Team
from ..models.base import Model
from ..rules import RuleModel

EXAMPLES = ("support", "airline")
"""The example teams shipped in `handoffs.examples` (`handoffs serve --demo NAME`); each
module has `build_team()` and `rule_model()`."""


def offline_model(team: Team) -> Model:
    """The offline model for `team`: an example team's own rules for a built-in example
    team, else a `RuleModel` with no rules that knows `team`'s routes.

    This is the one place the CLI chooses its offline model.
    """
    name = example_of(team)
    if name is not None:
        model: Model = import_module(f"{__package__.rpartition('.')[0]}.examples.{name}"
                                     ).rule_model()
        return model
    return RuleModel(team=team)


def example_of(team: Team) -> str | None:
    """The name of the built-in example `team` is (`support`, `airline`), or None: the
    same agents, tools and routes as that module's `build_team()` builds (the built-in
    team, or `examples/support.py:team`)."""
    for name in EXAMPLES:
        example = import_module(f"{__package__.rpartition('.')[0]}.examples.{name}"
                                ).build_team()
        if team.entry == example.entry and team.agents == example.agents:
            return name
    return None


def is_support_team(team: Team) -> bool:
    """True for the team `handoffs.examples.support.build_team()` builds."""
    return example_of(team) == "support"
