"""`repeat=k`: every case played k times in fresh sessions, tau-bench's pass^k per case and
overall (C(c,k)/C(n,k) per case, averaged), and turn accuracy's spread across plays, on
cases small enough to count by hand."""

from __future__ import annotations

import json

import pytest

from handoffs.errors import HandoffsError
from handoffs.eval import parse_jsonl, run_eval
from handoffs.eval.reliability import Spread, pass_hat_k, shown_ks
from handoffs.testing import ScriptedModel, reply, transfer

from .teams import build_team

PRICE = parse_jsonl('{"id": "price", "user": "price of the dock", "agent": "sales"}\n')
ROUTED = [transfer("sales"), reply("It costs $89.")]
STAYED = [reply("Hello, how can I help?")]  # front answers itself: a misroute


def test_pass_hat_k_is_the_share_of_k_subsets_of_plays_that_all_passed() -> None:
    assert [pass_hat_k(3, 2, k) for k in (1, 2, 3)] == [pytest.approx(2 / 3),
                                                          pytest.approx(1 / 3), 0.0]
    assert [pass_hat_k(4, 4, k) for k in (1, 2, 3, 4)] == [1.0, 1.0, 1.0, 1.0]
    assert pass_hat_k(4, 3, 2) == pytest.approx(3 / 6)  # C(3,2)/C(4,2)
    assert pass_hat_k(5, 0, 1) == 0.0
    with pytest.raises(HandoffsError, match="1 <= k <= trials"):
        pass_hat_k(3, 2, 4)
    with pytest.raises(HandoffsError, match="between 0 and trials"):
        pass_hat_k(3, 4, 1)


def test_shown_ks_are_all_up_to_eight_then_powers_of_two_and_the_last() -> None:
    assert shown_ks(1) == [1] and shown_ks(8) == list(range(1, 9))
    assert shown_ks(20) == [1, 2, 4, 8, 16, 20]


def test_spread_of_accuracy_over_plays() -> None:
    spread = Spread((1.0, 0.5, 0.75))

    assert (spread.low, spread.median, spread.high) == (0.5, 0.75, 1.0)
    assert spread.stdev == pytest.approx(0.25)
    assert Spread((0.8,)).stdev == 0.0 and Spread(()).median == 0.0


async def test_a_case_that_passes_two_plays_of_three() -> None:
    # one case, played three times one after the other: passes, misroutes, passes
    model = ScriptedModel([*ROUTED, *STAYED, *ROUTED])

    report = await run_eval(build_team(), PRICE, model=model, repeat=3, concurrency=1)
    run = report.run

    assert [t.passed for t in run.turns] == [True, False, True]
    assert [run.pass_k(k) for k in (1, 2, 3)] == [pytest.approx(2 / 3),
                                                 pytest.approx(1 / 3), 0.0]
    (case,) = run.reliability()
    assert (case.case, case.trials, case.passed) == ("price", 3, 2)
    spread = run.spread()
    assert spread.values == (1.0, 0.0, 1.0)
    assert (spread.low, spread.median, spread.high) == (0.0, 1.0, 1.0)
    assert spread.stdev == pytest.approx(0.57735, abs=1e-5)
    summary = run.summary()
    assert summary["pass_k"] == {"1": pytest.approx(2 / 3), "2": pytest.approx(1 / 3),
                                 "3": 0.0}
    assert summary["pass_k_per_case"]["price"]["passed"] == 2
    assert summary["accuracy_by_play"]["values"] == [1.0, 0.0, 1.0]


async def test_overall_pass_k_is_the_mean_over_cases() -> None:
    cases = parse_jsonl('{"id": "a", "user": "price of the dock", "agent": "sales"}\n'
                        '{"id": "b", "user": "price of a cable", "agent": "sales"}\n')
    # plays in order a0, b0, a1, b1: a passes both, b passes one of two
    model = ScriptedModel([*ROUTED, *ROUTED, *ROUTED, *STAYED])

    run = (await run_eval(build_team(), cases, model=model, repeat=2, concurrency=1)).run

    assert [(c.case, c.passed) for c in run.reliability()] == [("a", 2), ("b", 1)]
    assert run.pass_k(1) == pytest.approx((1 + 1 / 2) / 2)
    assert run.pass_k(2) == pytest.approx((1 + 0) / 2)
    assert run.spread().values == (1.0, 0.5)


async def test_the_reports_show_pass_k_and_the_cases_that_did_not_always_pass() -> None:
    model = ScriptedModel([*ROUTED, *STAYED, *ROUTED])

    report = await run_eval(build_team(), PRICE, model=model, repeat=3, concurrency=1)
    text = report.text()
    html = report.html()

    assert "1 cases, 1 turns, each played 3 times" in text
    rows = {line.split("  ")[0]: line.split()[-1] for line in text.splitlines()
            if line.startswith("pass^")}
    assert rows == {"pass^1": "66.7%", "pass^2": "33.3%", "pass^3": "0.0%"}
    assert "turn accuracy by play: min / median / max" in text
    assert "0.0% / 100.0% / 100.0%" in text
    case_row = next(line for line in text.splitlines() if line.startswith("price "))
    assert case_row.split() == ["price", "2/3", "0.67", "0.33", "0.00"]
    assert "<td>pass^2</td><td>33.3%</td>" in html
    assert "<tr><td>price</td><td>2/3</td><td>0.67</td><td>0.33</td><td>0.00</td></tr>" in html
    data = json.loads(json.dumps(report.to_dict()))
    assert data["runs"][0]["pass_k"]["3"] == 0.0


async def test_one_play_reports_no_pass_k_rows() -> None:
    report = await run_eval(build_team(), PRICE, model=ScriptedModel(ROUTED))

    assert "pass^" not in report.text().split("note:")[0]
    assert report.run.pass_k(1) == 1.0
