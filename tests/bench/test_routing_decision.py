"""bench/routing_decision.py measures a real model's first routing decision; offline (the
keyword rule model, `--model offline`) it runs in a second, which checks what it
reports: the right first hop per case, both route orders, pass^k over repeats."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import routing_decision

from handoffs.examples.support import build_team


def test_the_right_decision_is_the_first_hop_towards_the_answering_agent() -> None:
    hops = routing_decision.first_hops(build_team())

    # refunds is reached through billing, the operator through technical
    assert hops == {"triage": "triage", "billing": "billing", "technical": "technical",
                    "refunds": "billing", "operator": "technical"}


def test_reversed_order_reverses_every_agents_routes() -> None:
    team = build_team()

    turned = routing_decision.reordered(team, "reversed")

    assert [str(h) for h in turned.agents[0].handoffs] == ["technical", "billing"]
    assert list(turned.plan("triage").routes) == ["transfer_to_technical",
                                                  "transfer_to_billing"]


@pytest.mark.parametrize("routing", ["tools", "choice", "calibrated"])
def test_offline_both_orders_are_played_and_judged(tmp_path: Path, routing: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code = routing_decision.main(["--model", "offline", "--routing", routing, "--order",
                                  "declared,reversed", "--repeat", "2", "--out",
                                  str(tmp_path), "--label", "t"])

    assert code == 0
    (written,) = tmp_path.glob("routing-decision-*-t.json")
    result = json.loads(written.read_text())
    assert set(result["orders"]) == {"declared", "reversed"}
    declared = result["plays"]["declared"]
    assert len(declared) == 2 * result["cases"] == 2 * 47
    greeting = next(p for p in declared if p["case"] == "greeting-en")
    assert (greeting["right"], greeting["decided"], greeting["ok"]) == (
        ["triage"], "triage", True)
    f = result["orders"]["declared"]
    # the keyword model decides the same way every play: pass^2 is its accuracy
    assert f["pass_k"] == pytest.approx(f["accuracy"])
    assert f["accuracy"] == pytest.approx(
        sum(p["ok"] for p in declared) / len(declared))
    if routing != "tools":
        assert sorted(greeting["options"]) == ["billing", "technical", "triage"]
    else:
        assert greeting["options"] == ["transfer_to_billing", "transfer_to_technical"]
    assert "[reversed] accuracy" in capsys.readouterr().out
