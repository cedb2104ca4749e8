"""`run_eval`: each case in its own session, judged turn by turn, and what a report adds
up: accuracy per turn, case, route and tag, the matrix, refusals and failures by code,
model calls, bytes, tokens, and what each agent saw."""

from __future__ import annotations

import asyncio

import pytest

from handoffs import Runner
from handoffs.errors import HandoffsError
from handoffs.eval import EvalReport, assert_routing, parse_jsonl, run_eval, run_eval_sync
from handoffs.eval.judge import FAILED

from .conftest import cases
from .teams import DeskModel, build_team, runner

CASES = cases(
    {"id": "hello", "tags": ["en"], "user": "Hello", "agent": "front", "no_handoff": True},
    {"id": "price", "tags": ["en"], "user": "What is the price of the dock?",
     "agent": "sales", "path": ["front", "sales"], "kind": "llm"},
    {"id": "broken", "tags": ["fr"], "user": "It is broken, refund please",
     "agent": "repairs", "tools_called": ["refund"]},
    {"id": "two", "tags": ["multi_turn"], "turns": [
        {"user": "broken screen", "agent": "repairs"},
        {"user": "price of a new one?", "agent": "sales", "path": ["repairs", "front", "sales"],
         "tools_not_called": ["refund"]}]},
)


async def test_a_team_that_routes_right_scores_every_turn() -> None:
    report = await run_eval(build_team(), CASES, model=DeskModel())
    run = report.run

    assert (run.accuracy, run.case_accuracy, run.routing_accuracy) == (1.0, 1.0, 1.0)
    assert len(run.turns) == 5 and len(run.conversations) == 4
    assert run.matrix["sales"] == {"sales": 2}
    assert run.matrix["repairs"] == {"repairs": 2}
    price = next(t for t in run.turns if t.case == "price")
    assert price.path == ["front", "sales"] and price.kind == "llm"
    broken = next(t for t in run.turns if t.case == "broken")
    assert broken.tools == ["refund"]
    assert report.assert_accuracy(1.0) is report


async def test_a_misroute_is_in_the_matrix_and_explained() -> None:
    report = await run_eval(build_team(), CASES, model=DeskModel(misroute_docks=True))
    run = report.run
    wrong = next(t for t in run.turns if t.case == "price")

    assert run.matrix["sales"] == {"repairs": 1, "sales": 1}
    assert run.per_route()["sales"] == (1, 2)
    assert not wrong.passed and not wrong.routed
    assert wrong.problems == ["answered by repairs, expected sales",
                              "path front → repairs, expected front → sales"]
    # what each agent saw: front got the user's message and offered both routes
    front = wrong.calls[0]
    assert front.agent == "front"
    assert front.messages[-1] == {"kind": "user", "text": "What is the price of the dock?",
                                  "agent": "front"}
    assert {"transfer_to_sales", "transfer_to_repairs"} <= set(front.tools)
    assert front.calls[0]["name"] == "transfer_to_repairs"
    assert run.accuracy == pytest.approx(4 / 5) and run.case_accuracy == pytest.approx(3 / 4)
    assert run.per_tag()["en"] == (1, 2)
    with pytest.raises(AssertionError, match=r"price turn 1: 'What is the price"):
        report.assert_accuracy(0.9)


async def test_a_later_turn_checks_tools_not_called_and_the_agent_that_holds_it() -> None:
    cases = parse_jsonl('{"id": "t", "turns": [{"user": "broken", "agent": "repairs"}, '
                        '{"user": "refund it", "agent": "repairs", '
                        '"tools_not_called": ["refund"]}]}\n')

    run = (await run_eval(build_team(), cases, model=DeskModel())).run

    first, second = run.turns
    assert first.passed and second.path == ["repairs"]
    assert second.problems == ["refund was called"]


async def test_refusals_and_failed_turns_are_counted_by_code() -> None:
    cases = parse_jsonl('{"id": "ghost", "user": "ghost please", "agent": "front"}\n'
                        '{"id": "loop", "user": "loop", "agent": "front"}\n')

    report = await run_eval(build_team(), cases, model=DeskModel(), max_steps=3)
    run = report.run

    assert run.refusals() == {"unknown_target": 4}  # 1 in ghost, 3 in loop
    assert run.failures() == {"max_steps": 1}
    loop = next(t for t in run.turns if t.case == "loop")
    assert loop.answered_by == FAILED and loop.status == "failed"
    assert loop.problems[0].startswith("the turn failed (max_steps)")
    assert run.matrix["front"] == {"front": 1, FAILED: 1}
    assert run.agents()[-1] == FAILED
    assert next(t for t in run.turns if t.case == "ghost").passed
    assert "refused front→ghost (unknown_target) ×3" in report.text()
    assert "refused (3 times in a row): front → ghost" in report.html()


async def test_calls_bytes_tokens_and_latency_are_measured() -> None:
    report = await run_eval(build_team(), CASES, model=DeskModel())
    totals = report.run.totals()
    calls = [c for t in report.run.turns for c in t.calls]

    assert totals["model_calls"] == len(calls) == 11
    assert totals["model_calls_per_conversation"] == pytest.approx(11 / 4)
    assert totals["prompt_bytes"] == sum(c.prompt_bytes for c in calls) > 0
    assert all(c.prompt_bytes > len(c.system.encode()) for c in calls)
    assert (totals["input_tokens"], totals["output_tokens"]) == (110, sum(
        c.usage.output_tokens for c in calls if c.usage))
    assert totals["latency_max"] >= totals["latency_p50"] > 0


async def test_cases_run_concurrently_without_mixing_their_requests() -> None:
    class Slow(DeskModel):
        in_flight = most = 0

        async def complete(self, request):  # type: ignore[no-untyped-def]
            Slow.in_flight += 1
            Slow.most = max(Slow.most, Slow.in_flight)
            await asyncio.sleep(0.01)
            Slow.in_flight -= 1
            return await super().complete(request)

    cases = parse_jsonl("".join(
        f'{{"id": "c{i}", "user": "price {i}", "agent": "sales"}}\n' for i in range(12)))

    report = await run_eval(build_team(), cases, model=Slow(), concurrency=6, repeat=2)
    run = report.run

    assert len(run.turns) == 24 and run.accuracy == 1.0
    for t in run.turns:
        users = {m["text"] for c in t.calls for m in c.messages if m["kind"] == "user"}
        assert users == {t.user}, t.case
    assert [(t.case, t.play) for t in run.turns[:3]] == [("c0", 0), ("c0", 1), ("c1", 0)]
    assert 1 < Slow.most <= 6


async def test_several_models_and_history_views_run_side_by_side() -> None:
    progress: list[tuple[int, int]] = []
    report = await run_eval(build_team(), CASES, model=[DeskModel(),
                            DeskModel(misroute_docks=True)], history=["full", "last_user"],
                            progress=lambda done, total: progress.append((done, total)))

    assert [(r.model, r.history) for r in report.runs] == [
        ("DeskModel", "full"), ("DeskModel", "last_user"),
        ("DeskModel", "full"), ("DeskModel", "last_user")]
    assert [r.accuracy for r in report.runs] == [1.0, 1.0, 0.8, 0.8]
    assert report.accuracy == 0.8 and report.below(0.9) == report.runs[2:]
    assert progress[-1] == (16, 16) and len(progress) == 16
    full, last = report.runs[0], report.runs[1]
    second_full = next(t for t in full.turns if t.case == "two" and t.index == 1)
    second_last = next(t for t in last.turns if t.case == "two" and t.index == 1)
    # repairs hands back to front: under last_user, front sees only the newest message
    front_full, front_last = second_full.calls[1], second_last.calls[1]
    assert front_full.agent == front_last.agent == "front"
    user, note = front_last.messages  # the newest message, then the handoff's note
    assert user["text"] == "price of a new one?" and note["text"].startswith("# Handoff")
    assert len(front_full.messages) > 1
    assert front_last.prompt_bytes < front_full.prompt_bytes


async def test_a_runner_keeps_its_model_and_settings() -> None:
    cases = parse_jsonl('{"id": "loop", "user": "loop", "agent": "front"}\n')

    run = (await run_eval(runner, cases)).run

    assert run.model == "DeskModel"
    # the runner's own max_steps=2 ends the loop (a default runner would go on to
    # no_progress after four calls)
    assert run.turns[0].error == "max_steps" and len(run.turns[0].calls) == 2


async def test_no_model_and_unknown_views_are_refused_before_playing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HANDOFFS_MODEL", raising=False)
    with pytest.raises(HandoffsError, match="Agent 'front' has no model") as caught:
        await run_eval(build_team(), CASES)
    assert caught.value.code == "no_model"
    with pytest.raises(HandoffsError, match="Unknown history view 'everything'"):
        await run_eval(build_team(), CASES, model=DeskModel(), history="everything")
    with pytest.raises(HandoffsError, match="no agent 'billing'"):
        await run_eval(build_team(), parse_jsonl('{"id": "x", "user": "y", '
                                                 '"agent": "billing"}\n'), model=DeskModel())


async def test_the_offline_model_string_plays_the_support_team_on_its_rules() -> None:
    from handoffs.eval import support_cases
    from handoffs.examples.support import build_team as support_team

    cases = [c for c in support_cases() if c.id in ("greeting-en", "duplicate-en",
                                                    "refund-then-thanks-en")]
    run = (await run_eval(support_team(), cases, model="offline")).run

    assert run.accuracy == 1.0
    refund = next(t for t in run.turns if t.case == "duplicate-en")
    assert refund.path == ["triage", "billing", "refunds"]
    assert refund.payload == {"order_id": "A-1001"}  # refunds looks the amount up
    thanks = next(t for t in run.turns if t.case == "refund-then-thanks-en" and t.index == 1)
    assert "issue_refund" not in thanks.tools


def test_run_eval_sync_and_assert_routing_for_plain_tests() -> None:
    report = run_eval_sync(build_team(), CASES, model=DeskModel())
    assert isinstance(report, EvalReport) and report.accuracy == 1.0

    assert_routing(build_team(), CASES, model=DeskModel(), min_accuracy=1.0)
    with pytest.raises(AssertionError) as caught:
        assert_routing(Runner(build_team(), model=DeskModel(misroute_docks=True)), CASES,
                       min_accuracy=0.9)
    assert "routing accuracy 80.0% < 90.0%" in str(caught.value)
    assert "answered by repairs, expected sales" in str(caught.value)


async def test_run_eval_sync_inside_a_running_loop_plays_on_its_own() -> None:
    report = run_eval_sync(build_team(), CASES, model=DeskModel())

    assert report.accuracy == 1.0
