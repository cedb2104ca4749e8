"""`handoffs eval` as a user runs it: the support team on its own cases offline, a team of
one's own with a case file, thresholds for CI, JSON, and case files from stored sessions."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from handoffs.eval import load_cases, support_cases

from .conftest import ROOT, Handoffs, offline_env, write_cases

DESK = str(ROOT / "tests" / "eval" / "teams.py")


def test_the_support_team_is_evaluated_offline_on_its_own_cases(handoffs: Handoffs) -> None:
    done = handoffs("eval", "--model", "offline", "--min-accuracy", "0.75")

    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("handoffs eval: 47 cases, 57 turns")
    assert "turn accuracy" in out and "expected \\ answered" in out
    assert "refunds by code" not in out and "failed turns by code: none" in out
    assert "handoffs eval: 47 cases; model offline" in done.stderr
    assert "\r[" not in done.stderr  # no progress bar when stderr is not a terminal


def test_a_threshold_above_the_score_fails_the_command(handoffs: Handoffs) -> None:
    done = handoffs("eval", "--model", "offline", "--min-accuracy", "99%")

    assert done.returncode == 1
    assert "below --min-accuracy 99.0%: offline · history own_tools scored" in done.stderr


def test_json_has_the_figures_and_explains_failing_turns(handoffs: Handoffs,
                                                         tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "desk.jsonl",
                        {"id": "p", "user": "price of the dock", "agent": "sales"},
                        {"id": "h", "user": "hello", "agent": "front"})

    done = handoffs("eval", f"{DESK}:misrouting", str(cases), "--json")

    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["runs"][0]
    assert (run["model"], run["turns"], run["turns_passed"]) == ("DeskModel", 2, 1)
    assert run["matrix"] == {"sales": {"repairs": 1}, "front": {"front": 1}}
    assert run["per_route"]["sales"] == {"right": 0, "turns": 1, "accuracy": 0.0}
    assert run["input_tokens"] == 30 and run["model_calls"] == 3
    failing = next(t for t in run["turns_played"] if not t["passed"])
    assert failing["problems"] == ["answered by repairs, expected sales"]
    assert failing["calls"][0]["messages"][-1]["text"] == "price of the dock"
    passing = next(t for t in run["turns_played"] if t["passed"])
    assert "calls" not in passing


def test_several_models_are_compared_in_one_report(handoffs: Handoffs) -> None:
    done = handoffs("eval", "--model", "offline", "--model", "offline", "--history",
                    "full", "--history", "last_user", "--tag", "fr", "--json")

    assert done.returncode == 0, done.stderr
    runs = json.loads(done.stdout)["runs"]
    assert [(r["model"], r["history"]) for r in runs] == [
        ("offline", "full"), ("offline", "last_user"), ("offline", "full"),
        ("offline", "last_user")]
    french = [c for c in support_cases() if "fr" in c.tags]
    assert {r["cases"] for r in runs} == {len(french)} and len(french) >= 5


def test_mistakes_are_clear_errors(handoffs: Handoffs, tmp_path: Path) -> None:
    bad = handoffs("eval", "--min-accuracy", "1.5")
    no_cases = handoffs("eval", DESK)
    missing = handoffs("eval", DESK, "nope.jsonl")
    typo = write_cases(tmp_path / "typo.jsonl", {"id": "a", "user": "x", "agnet": "front"})
    bad_case = handoffs("eval", DESK, str(typo))

    assert bad.returncode == 2 and "--min-accuracy takes a share" in bad.stderr
    assert no_cases.returncode == 2 and "Give a case file" in no_cases.stderr
    assert missing.returncode == 2 and "No case file 'nope.jsonl'" in missing.stderr
    assert bad_case.returncode == 2 and "did you mean 'agent'?" in bad_case.stderr
    assert "Traceback" not in bad.stderr + no_cases.stderr + missing.stderr + bad_case.stderr


def test_a_stored_session_becomes_a_case_file_that_replays(handoffs: Handoffs,
                                                           tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 's.db'}"
    for text in ("Hi, I was charged twice for order A-1001.",
                 "Thanks! Also, the dock from A-1002 keeps disconnecting my monitor.",
                 "Hello"):
        ran = handoffs("run", text, "--session", "s-1", "--store", db, "--offline")
        assert ran.returncode == 0, ran.stderr

    made = handoffs("eval", "--from-session", "s-1", "--store", db, "-o", "cases.jsonl")
    unknown = handoffs("eval", "--from-session", "nobody", "--store", db)

    assert made.returncode == 0, made.stderr
    assert "wrote cases.jsonl: 1 case(s), 3 turns" in made.stderr
    (case,) = load_cases(tmp_path / "cases.jsonl")
    assert [(t.user[:5], t.agents) for t in case.turns] == [
        ("Hi, I", ("refunds",)), ("Thank", ("technical",)), ("Hello", ("technical",))]
    assert "turn 1: triage → billing → refunds" in case.notes
    assert unknown.returncode == 2 and "No session 'nobody'" in unknown.stderr

    replay = handoffs("eval", "cases.jsonl", "--model", "offline", "--min-accuracy", "1")
    assert replay.returncode == 0, replay.stdout + replay.stderr


def test_a_terminal_sees_a_progress_bar(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(sys.executable, ["-m", "handoffs.cli", "eval", "--model", "offline",
                                           "--tag", "fr"], cwd=str(tmp_path),
                          env=offline_env(), encoding="utf-8", timeout=60)
    child.expect(pexpect.EOF)
    child.close()

    assert child.exitstatus == 0
    assert "] 6/6 cases played" in child.before
    assert "[##############################] 6/6" in child.before
    assert "turn accuracy" in child.before


def test_played_sessions_can_be_kept_and_looked_at(handoffs: Handoffs, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'eval.db'}"

    done = handoffs("eval", "--model", "offline", "--tag", "thanks", "--store", db)
    listed = handoffs("sessions", "list", "--store", db, "--json")

    assert done.returncode == 0, done.stderr
    sessions = [json.loads(line) for line in listed.stdout.splitlines()]
    assert len(sessions) == 2
    assert all(s["id"].startswith("eval-") for s in sessions)


def test_repeat_reports_pass_k_and_the_spread_across_plays(handoffs: Handoffs) -> None:
    done = handoffs("eval", "--model", "offline", "--tag", "fr", "--repeat", "3", "--json")

    assert done.returncode == 0, done.stderr
    run = json.loads(done.stdout)["runs"][0]
    assert run["repeat"] == 3 and run["conversations"] == 3 * run["cases"]
    # the rule model is deterministic: a case passes every play or none
    assert run["pass_k"]["1"] == run["pass_k"]["3"] == run["case_accuracy"]
    assert run["accuracy_by_play"]["stdev"] == 0.0
    assert len(run["accuracy_by_play"]["values"]) == 3
    assert all(c["trials"] == 3 for c in run["pass_k_per_case"].values())


def test_the_single_agent_baseline_is_reported_beside_the_team(handoffs: Handoffs) -> None:
    done = handoffs("eval", "--model", "offline", "--tag", "refund", "--baseline", "single",
                    "--min-accuracy", "0.5")
    bad = handoffs("eval", "--model", "offline", "--baseline", "double")

    assert done.returncode == 0, done.stderr
    header = done.stdout.splitlines()[2]
    assert header.rstrip().endswith("offline · history own_tools · single agent")
    routing = next(line for line in done.stdout.splitlines()
                   if line.startswith("routing accuracy"))
    assert routing.split()[-1] == "n/a"
    assert "== offline · history own_tools · single agent" in done.stdout
    assert bad.returncode == 2 and "Unknown baseline 'double'; one of single" in bad.stderr


def test_stored_traffic_is_replayed_on_another_team_and_the_source_is_left_alone(
        handoffs: Handoffs, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'prod.db'}"
    for sid, text in (("s-1", "Hi, I was charged twice for order A-1001."),
                      ("s-2", "The dock from A-1002 keeps disconnecting my monitor."),
                      ("s-3", "Hello")):
        ran = handoffs("run", text, "--session", sid, "--store", db, "--offline")
        assert ran.returncode == 0, ran.stderr
    before = handoffs("sessions", "list", "--store", db, "--json").stdout

    same = handoffs("eval", "--from-store", db, "--since", "1h", "--model", "offline",
                    "--min-accuracy", "1", "--html", "replay.html")
    other = handoffs("eval", f"{DESK}:team", "--from-store", db, "--model", "offline",
                     "--json", "--min-accuracy", "0.5")

    assert same.returncode == 0, same.stderr
    assert same.stdout.startswith("handoffs eval --from-store: 3 sessions, 3 turns from ")
    assert "every turn was routed as before" in same.stdout
    assert "<h1>handoffs eval --from-store</h1>" in (tmp_path / "replay.html").read_text()
    assert other.returncode == 1  # another team: no turn answered by the same agent
    data = json.loads(other.stdout)
    assert data["routing"]["different agent"] == 3 and data["agreement"] == 0.0
    assert {t["new"]["agent"] for t in data["turns_replayed"]} <= {"front", "sales",
                                                                    "repairs"}
    assert "below --min-accuracy 50.0%: the same agent answered 0.0%" in other.stderr
    assert handoffs("sessions", "list", "--store", db, "--json").stdout == before


def test_from_store_mistakes_are_clear_errors(handoffs: Handoffs, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'prod.db'}"
    ran = handoffs("run", "Hello", "--session", "s-1", "--store", db, "--offline")
    assert ran.returncode == 0, ran.stderr

    missing = handoffs("eval", "--from-store", f"sqlite:///{tmp_path / 'nope.db'}")
    with_cases = handoffs("eval", "cases.jsonl", "--from-store", db)
    twice = handoffs("eval", "--from-store", db, "--repeat", "2", "--baseline", "single")
    into_source = handoffs("eval", "--from-store", db, "--store", db)
    since_alone = handoffs("eval", "--since", "7d")
    bad_since = handoffs("eval", "--from-store", db, "--since", "yesterday")
    unreachable = handoffs("eval", "--from-store", "postgresql://app:s3cret@127.0.0.1:1/db",
                           "--model", "offline")

    assert missing.returncode == 2 and "nope.db" in missing.stderr
    assert with_cases.returncode == 2 and "it takes no case file." in with_cases.stderr
    assert twice.returncode == 2 and "--repeat, --baseline" in twice.stderr
    assert into_source.returncode == 2 and "cannot be the store" in into_source.stderr
    assert since_alone.returncode == 2 and "give --from-store URL too" in since_alone.stderr
    assert bad_since.returncode == 2 and "--since takes a duration" in bad_since.stderr
    assert unreachable.returncode == 2 and "Cannot reach PostgreSQL" in unreachable.stderr
    assert "s3cret" not in unreachable.stderr + unreachable.stdout
    assert not (tmp_path / "nope.db").exists()
    assert "Traceback" not in (missing.stderr + with_cases.stderr + twice.stderr
                               + into_source.stderr + since_alone.stderr + bad_since.stderr
                               + unreachable.stderr)


def test_prices_give_the_cost_per_conversation(handoffs: Handoffs, tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "desk.jsonl",
                        {"id": "p", "user": "price of the dock", "agent": "sales"},
                        {"id": "h", "user": "hello", "agent": "front"})
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"desk-1": {"input": 1.0, "cached_input": 0.1,
                                             "output": 2.0}}), encoding="utf-8")

    plain = handoffs("eval", f"{DESK}:cached", str(cases))
    priced = handoffs("eval", f"{DESK}:cached", str(cases), "--prices", str(prices))
    as_json = handoffs("eval", f"{DESK}:cached", str(cases), "--prices", str(prices),
                       "--json")

    assert plain.returncode == priced.returncode == as_json.returncode == 0, priced.stderr
    assert "cost" not in plain.stdout  # no price table, no cost column
    # Each call: 20,000 uncached x $1 + 80,000 cached x $0.10 + 10,000 out x $2, per
    # million: $0.048. Three calls over two conversations, both resolved.
    assert "cost / conversation" in priced.stdout and "$0.0720" in priced.stdout
    line = next(x for x in priced.stdout.splitlines()
                if x.startswith("cost / resolved conversation"))
    assert line.endswith("$0.0720")
    cost = json.loads(as_json.stdout)["runs"][0]["cost"]
    assert cost["total"] == pytest.approx(0.144) and cost["unpriced"] == []


def test_a_bad_price_table_is_refused_before_anything_is_played(
        handoffs: Handoffs, tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"desk-1": {"input": 1.0}}), encoding="utf-8")

    done = handoffs("eval", f"{DESK}:cached", "--prices", str(prices))

    assert done.returncode != 0
    assert "'desk-1' lacks output" in done.stderr
    assert "cases played" not in done.stderr
