"""`run_eval(routing=..., train=...)` and `handoffs eval --routing/--train`: routing modes
side by side, and routes taught by the examples of a training share of the cases, never
played."""

from __future__ import annotations

import json

import pytest

from handoffs.errors import HandoffsError
from handoffs.eval import run_eval
from handoffs.eval.examples import split_cases, with_examples, with_routing
from handoffs.eval.support import support_cases
from handoffs.examples.support import build_team

from .conftest import Handoffs, offline_env


def test_the_split_is_stable_disjoint_and_whole() -> None:
    cases = support_cases()
    taught, played = split_cases(cases, 0.5)
    again, _ = split_cases(list(reversed(cases)), 0.5)
    assert {c.id for c in taught} == {c.id for c in again}
    assert not {c.id for c in taught} & {c.id for c in played}
    assert len(taught) + len(played) == len(cases) and abs(len(taught) - len(played)) <= 1
    with pytest.raises(HandoffsError):
        split_cases(cases, 1.0)
    with pytest.raises(HandoffsError):
        split_cases(cases[:1], 0.5)


def test_examples_go_to_the_routes_of_the_agent_that_should_answer() -> None:
    cases = support_cases()
    team = with_examples(build_team(), cases)
    route = team.plan("triage").routes_by_target["technical"]
    first_tech = next(c.turns[0].user for c in cases if c.turns[0].agents == ("technical",))
    assert route.handoff.examples[0] == first_tech and len(route.handoff.examples) == 3
    assert f'For: "{first_tech}"' in route.spec.description
    assert team.entry == build_team().entry and team.policy == build_team().policy
    assert all(a.routing == "choice" for a in with_routing(team, "choice").agents
               if not a.is_human)


async def test_modes_play_side_by_side_on_the_held_out_cases() -> None:
    cases = support_cases()
    report = await run_eval(build_team(), cases, model="offline",
                            routing=["tools", "choice", "choice+examples"], train=0.5)

    _, played = split_cases(cases, 0.5)
    assert [r.label for r in report.runs] == [
        "offline · history own_tools · routing tools",
        "offline · history own_tools · routing choice",
        "offline · history own_tools · routing choice+examples"]
    for run in report.runs:
        assert [c.id for c in run.cases] == [c.id for c in played]
    tools, choice, taught = report.runs
    # The offline model makes the same routing decision either way; examples teach it.
    assert choice.routing_accuracy == tools.routing_accuracy
    assert taught.routing_accuracy > tools.routing_accuracy


async def test_examples_without_a_training_share_are_refused() -> None:
    with pytest.raises(HandoffsError, match="training share"):
        await run_eval(build_team(), support_cases(), model="offline",
                       routing="choice+examples")
    with pytest.raises(HandoffsError, match="Unknown routing"):
        await run_eval(build_team(), support_cases(), model="offline", routing="vote")


def test_the_cli_compares_routing_modes(handoffs: Handoffs) -> None:
    done = handoffs("eval", "--model", "offline", "--routing", "tools", "--routing",
                    "choice+examples", "--train", "0.5", "--json", env=offline_env())
    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["runs"]
    assert [r["setup"]["routing"] for r in runs] == ["routing tools",
                                                     "routing choice+examples"]
    assert "cases teach the routes" in done.stderr
