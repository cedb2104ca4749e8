"""`handoffs check`: static checks of a team; exit 1 on errors, warnings are advice."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import ROOT, TEAMS, Handoffs


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


def test_a_module_that_raises_is_a_documented_code_with_its_line(
        handoffs: Handoffs, tmp_path: Path) -> None:
    (tmp_path / "rterr.py").write_text("settings = {}\nteam = settings['x']\n")
    done = handoffs("check", str(tmp_path / "rterr.py"))
    assert done.returncode == 1
    assert ("error   load_failed: Loading " in done.stdout
            and "rterr.py failed: KeyError: 'x' (at " in done.stdout
            and "rterr.py, line 2: team = settings['x'])" in done.stdout)
    documented = (ROOT / "docs" / "cli.md").read_text()
    assert "| `load_failed` | error |" in documented
    assert "| `invalid_target` | error |" in documented

    traced = handoffs("--traceback", "check", str(tmp_path / "rterr.py"))
    assert "Traceback (most recent call last)" in traced.stderr
    assert "KeyError: 'x'" in traced.stderr


def test_the_cycle_warning_names_the_teams_own_entry(handoffs: Handoffs) -> None:
    done = handoffs("check", f"{TEAMS}:team")
    assert "warning handoff_cycle: front, maths" in done.stdout
    assert "Fine for a return to front;" in done.stdout and "triage" not in done.stdout


def test_an_on_handoff_hook_no_handoff_can_call_is_an_error(handoffs: Handoffs) -> None:
    done = handoffs("check", f"{TEAMS}:bad_hook")
    assert done.returncode == 1
    assert "error   invalid_team: Handoff on_handoff '_three_argument_hook' must accept " \
        "(ctx, payload) or (ctx)" in done.stdout
