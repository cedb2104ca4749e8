"""`handoffs check`: static checks of a team; exit 1 on errors, warnings are advice."""

from __future__ import annotations

import json

from .conftest import TEAMS, Handoffs


def test_the_support_team_passes_with_a_warning_about_its_cycle(handoffs: Handoffs) -> None:
    done = handoffs("check")
    assert done.returncode == 0, done.stdout
    assert "warning handoff_cycle: triage, billing, refunds, technical, operator" in done.stdout
    assert done.stdout.rstrip().endswith("0 errors, 1 warning")


def test_a_team_that_does_not_build_is_an_error(handoffs: Handoffs) -> None:
    done = handoffs("check", f"{TEAMS}:unresolved")
    assert done.returncode == 1
    assert "error   invalid_team: Agent 'a' hands off to 'ghost'" in done.stdout


def test_each_problem_of_a_flawed_team_is_reported(handoffs: Handoffs) -> None:
    done = handoffs("check", f"{TEAMS}:flawed", "--json")
    assert done.returncode == 1
    report = json.loads(done.stdout)
    found = {(f["level"], f["code"], f["agent"]) for f in report["findings"]}
    assert found == {
        ("error", "system_only_unreachable", "vault"),  # no supervisor
        ("error", "unreachable", "island"),
        ("error", "human_unreachable", "nobody"),
        ("warning", "undescribed_target", "entry"),     # quiet has no description
        ("warning", "route_always_refused", "entry"),   # entry -> vault (system_only)
    }
    assert report["ok"] is False and report["errors"] == 3 and report["warnings"] == 2


def test_a_tool_name_providers_refuse_is_an_error(handoffs: Handoffs) -> None:
    done = handoffs("check", f"{TEAMS}:badly_named")
    assert done.returncode == 1
    assert "error   invalid_team: Agent 'entry': the tool name 'look up' is refused" in (
        done.stdout)


def test_a_clean_team_says_so(handoffs: Handoffs) -> None:
    done = handoffs("check", f"{TEAMS}:build")
    assert done.returncode == 0
    assert done.stdout.strip() == "ok: no problems found"
