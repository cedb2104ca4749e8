"""TEAM specs resolve to a Team or a Runner, the same way for every command."""

from __future__ import annotations

from pathlib import Path

import pytest

from handoffs import Runner, Team
from handoffs.cli.loading import load_target, team_of
from handoffs.errors import HandoffsError

from .conftest import TEAMS


def test_a_file_and_a_name_give_that_team() -> None:
    target = load_target(f"{TEAMS}:team")
    assert isinstance(target, Team) and target.entry == "front"


def test_a_runner_is_loaded_as_a_runner() -> None:
    target = load_target(f"{TEAMS}:runner")
    assert isinstance(target, Runner) and team_of(target).entry == "front"


def test_a_function_of_no_arguments_is_called() -> None:
    target = load_target(f"{TEAMS}:build")
    assert isinstance(target, Team) and [a.name for a in target.agents] == ["solo"]


def test_without_a_name_the_module_team_is_used() -> None:
    target = load_target(str(TEAMS))
    assert isinstance(target, Team) and target.entry == "front"


def test_a_module_path_is_imported() -> None:
    target = load_target("handoffs.examples.support:build_team")
    assert isinstance(target, Team) and target.entry == "triage"


def test_no_spec_is_the_built_in_support_team() -> None:
    assert team_of(load_target(None)).entry == "triage"


@pytest.mark.parametrize(("spec", "says"), [
    ("missing_file.py:team", "No file 'missing_file.py'"),
    ("no_such_module_here:team", "No module 'no_such_module_here'"),
    (f"{TEAMS}:nothing", "there is no 'nothing'"),
    (f"{TEAMS}:not_a_team", "of type int, not a Team or a Runner"),
])
def test_a_bad_spec_says_what_to_fix(spec: str, says: str) -> None:
    with pytest.raises(HandoffsError) as caught:
        load_target(spec)
    assert caught.value.code == "invalid_target"
    assert says in str(caught.value)


def test_a_file_can_import_its_neighbours(tmp_path: Path) -> None:
    (tmp_path / "agents_here.py").write_text(
        "from handoffs import Agent\nsolo = Agent('solo')\n")
    (tmp_path / "app.py").write_text(
        "from agents_here import solo\nfrom handoffs import Team\nteam = Team([solo])\n")
    assert team_of(load_target(f"{tmp_path / 'app.py'}:team")).entry == "solo"


def test_an_error_in_the_users_module_names_its_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "rterr.py").write_text("settings = {}\n\nteam = settings['x']\n")
    with pytest.raises(HandoffsError) as caught:
        load_target(str(tmp_path / "rterr.py"))
    assert caught.value.code == "load_failed"
    message = str(caught.value)
    assert "KeyError: 'x'" in message
    assert "rterr.py, line 3: team = settings['x']" in message
    assert isinstance(caught.value.__cause__, KeyError)      # the traceback is kept


def test_an_error_deeper_in_the_users_code_names_the_deepest_line(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("def agents():\n    return 1 / 0\n")
    (tmp_path / "app.py").write_text("from helpers import agents\n\ndef build():\n"
                                     "    return agents()\n")
    with pytest.raises(HandoffsError) as caught:
        load_target(f"{tmp_path / 'app.py'}:build")
    assert caught.value.code == "load_failed"
    assert "calling build() failed: ZeroDivisionError" in str(caught.value)
    assert "helpers.py, line 2: return 1 / 0" in str(caught.value)


def test_a_syntax_error_names_its_line_once(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("x = 1\ndef f(:\n")
    with pytest.raises(HandoffsError) as caught:
        load_target(str(tmp_path / "broken.py"))
    assert caught.value.code == "load_failed"
    assert str(caught.value).count("line 2") == 1 and "def f(:" in str(caught.value)


def test_a_missing_name_in_a_file_names_the_file_not_an_internal_module() -> None:
    with pytest.raises(HandoffsError) as caught:
        load_target(f"{TEAMS}:tem")
    assert "there is no 'tem' in " in str(caught.value)
    assert "teams.py" in str(caught.value) and "_handoffs_team_" not in str(caught.value)
