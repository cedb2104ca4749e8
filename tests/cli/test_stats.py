"""`handoffs stats`: which routes fail and why, read from a real database."""

from __future__ import annotations

import json
from pathlib import Path

from handoffs import Agent, Runner, Team
from handoffs.testing import ScriptedModel, reply, transfer

from .conftest import Handoffs


async def test_stats_show_each_route_with_its_refusals(handoffs: Handoffs,
                                                       tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'stats.db'}"
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    model = ScriptedModel([transfer("nobody"), transfer("billing", reason="money"),
                           reply("Billing here."), transfer("billing"), reply("Again.")])
    runner = Runner(team, model=model, store=url)
    await runner.run("s1", "my bill")
    await runner.select_agent("s1", "triage")
    await runner.run("s1", "and again")
    await runner.store.close()

    table = handoffs("stats", "--store", url)
    as_json = handoffs("stats", "--store", url, "--json", "--since", "1h")

    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[:3] == ["route", "kind", "requests"]
    row = next(x for x in table.stdout.splitlines() if x.startswith("triage -> nobody"))
    assert "unknown_target" in row
    routes = {(r["source"], r["target"], r["kind"]): r
              for r in json.loads(as_json.stdout)["routes"]}
    assert routes[("triage", "billing", "llm")]["accepted"] == 2
    assert routes[("triage", "nobody", "llm")]["refused"] == {"unknown_target": 1}
    assert routes[("billing", "triage", "user_request")]["accepted"] == 1


def test_a_bad_window_is_a_clear_error(handoffs: Handoffs) -> None:
    done = handoffs("stats", "--store", "memory://", "--since", "yesterday")
    assert done.returncode == 2 and "--since takes a duration" in done.stderr
