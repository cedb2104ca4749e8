"""Cases from stored sessions: each user message labelled as `run_eval` would see it
answered, so a session replayed on the same model passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from handoffs import Runner
from handoffs.errors import HandoffsError
from handoffs.eval import case_from_session, cases_from_store, run_eval
from handoffs.examples.support import build_team, rule_model


async def test_a_session_with_an_escalation_is_labelled_with_the_operator(
        tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    runner = Runner(build_team(), model=rule_model(), store=url)
    await runner.run("s-1", "My dock keeps disconnecting my monitor.")
    last = await runner.run("s-1", "Still broken. Can a person look at my account?")
    await runner.reply_as_human("s-1", "Hi, Sam here: fixed.", handoff_to="technical")
    await runner.run("s-1", "Thanks, it works now.")
    await runner.store.close()

    (case,) = await cases_from_store(url, ["s-1"])

    assert last.agent == "operator"
    assert [t.agents for t in case.turns] == [("technical",), ("operator",), ("technical",)]
    assert "turn 2: technical → operator" in case.notes
    assert case.tags == ("from_session", "multi_turn")


async def test_a_labelled_session_replays_right_on_the_same_model() -> None:
    runner = Runner(build_team(), model=rule_model())
    for text in ("Hi!", "I was charged twice for order A-1001.", "Thanks! That's all.",
                 "Also my screen flickers"):
        await runner.run("s-2", text)
    state = await runner.get_session("s-2")
    assert state is not None

    case = case_from_session(state, "replay")
    run = (await run_eval(build_team(), [case], model="offline")).run

    assert [t.agents[0] for t in case.turns] == ["triage", "refunds", "refunds", "technical"]
    assert run.accuracy == 1.0


async def test_an_unknown_session_is_a_clear_error() -> None:
    with pytest.raises(HandoffsError, match="No session 'nobody'"):
        await cases_from_store("memory://", ["nobody"])
