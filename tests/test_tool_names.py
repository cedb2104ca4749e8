"""Tool names every provider accepts (`^[a-zA-Z0-9_-]{1,64}$`): made valid when the
library makes them, refused at `Team(...)` when the user gives an invalid one."""

from __future__ import annotations

import re

import pytest

from handoffs import Agent, Handoff, Runner, RunStatus, Team, TeamError, tool
from handoffs.core.names import tool_name
from handoffs.testing import ScriptedModel, call, reply, transfer

VALID = re.compile(r"[a-zA-Z0-9_-]{1,64}")
LONG = "customer-satisfaction-and-retention-specialist-for-enterprise-accounts-emea"


def test_every_spec_a_team_builds_has_a_provider_valid_name() -> None:
    @tool
    def réserver(table: int) -> str:
        """Book a table."""
        return "ok"

    hub = Agent("hub", tools=[réserver], handoffs=["Café", "客服", "售后", LONG])
    team = Team([hub, Agent("Café"), Agent("客服"), Agent("售后"), Agent(LONG)])

    names = [s.name for s in team.plan("hub").specs]
    assert all(VALID.fullmatch(n) for n in names), names
    assert len(set(names)) == len(names)
    assert names[0] == "reserver"
    assert names[1] == "transfer_to_cafe"
    # Names with no ASCII form keep a stable hash of the original, so they differ.
    assert re.fullmatch(r"transfer_to_[0-9a-f]{8}", names[2])
    assert re.fullmatch(r"transfer_to_[0-9a-f]{8}", names[3]) and names[2] != names[3]
    # A long name is cut to 64 characters, with a hash so that it stays unique.
    assert len(names[4]) == 64 and names[4].startswith("transfer_to_customer-satisfaction")
    assert names[4] == Handoff.default_tool_name(LONG)  # the same every time


def test_a_replayed_call_is_named_like_the_tool_it_called() -> None:
    # One function names tools and cleans replayed calls, so they always agree.
    assert tool_name("transfer_to_客服") == Handoff.default_tool_name("客服")
    assert tool_name("transfer_to_café") == Handoff.default_tool_name("Café")
    assert tool_name("multi_tool_use.parallel") == "multi_tool_use_parallel"
    assert tool_name("lookup_order") == "lookup_order"
    assert VALID.fullmatch(tool_name("")) and VALID.fullmatch(tool_name("é" * 100))


async def test_a_turn_hands_off_to_cafe_and_uses_a_folded_tool() -> None:
    @tool
    def commande(numéro: str) -> str:
        """Look up an order."""
        return f"commande {numéro}: servie"

    team = Team([Agent("accueil", handoffs=["Café"]), Agent("Café", tools=[commande])])
    model = ScriptedModel([transfer("Café", reason="un café"),
                           call("commande", numéro="7"), reply("Votre café arrive.")])
    result = await Runner(team, model=model).run("s", "Un café, s'il vous plaît")

    assert result.status is RunStatus.COMPLETED
    assert result.agent == "Café" and result.output == "Votre café arrive."
    assert [t.name for t in model.requests[0].tools] == ["transfer_to_cafe"]
    assert all(VALID.fullmatch(t.name) for r in model.requests for t in r.tools)


@pytest.mark.parametrize("bad", ["go to billing", "transfer_to_café", "x" * 65, ""])
def test_an_invalid_handoff_tool_name_fails_at_team(bad: str) -> None:
    with pytest.raises(TeamError, match="1 to 64 characters") as info:
        Team([Agent("triage", handoffs=[Handoff("billing", tool_name=bad)]),
              Agent("billing")])
    assert "ASCII letters, digits, '_' and '-'" in str(info.value)
    assert "'transfer_to_billing'" in str(info.value)  # what leaving it out gives


@pytest.mark.parametrize("bad", ["look up", "lookup.order", "y" * 65, "查询"])
def test_an_invalid_tool_name_fails_at_team(bad: str) -> None:
    @tool(name=bad)
    def lookup(order_id: str) -> str:
        """Find an order."""
        return order_id

    with pytest.raises(TeamError, match="1 to 64 characters") as info:
        Team([Agent("billing", tools=[lookup])])
    assert repr(bad) in str(info.value) and "@tool(name=...)" in str(info.value)


def test_two_routes_resolving_to_one_name_fail_at_team() -> None:
    with pytest.raises(TeamError, match="'Café' and 'cafe' both get the tool name "
                                        "'transfer_to_cafe'"):
        Team([Agent("hub", handoffs=["Café", "cafe"]), Agent("Café"), Agent("cafe")])


def test_a_tool_and_a_route_with_one_name_fail_at_team() -> None:
    @tool
    def transfer_to_billing() -> str:
        """Pretend to hand off."""
        return ""

    with pytest.raises(TeamError, match="collides"):
        Team([Agent("triage", tools=[transfer_to_billing], handoffs=["billing"]),
              Agent("billing")])


def test_two_tools_with_one_name_fail_at_team() -> None:
    @tool(name="lookup")
    def a() -> str:
        """A."""
        return ""

    @tool(name="lookup")
    def b() -> str:
        """B."""
        return ""

    with pytest.raises(TeamError, match="two tools named 'lookup'"):
        Team([Agent("billing", tools=[a, b])])
