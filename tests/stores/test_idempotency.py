"""Idempotency keys on every store: a retried message is stored once and answered once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from handoffs import Agent, HandoffsError, Runner, Team, tool
from handoffs.core.messages import UserMessage
from handoffs.testing import ScriptedModel, call, reply, transfer

from .conftest import Backend

WORKER = str(Path(__file__).with_name("worker.py"))


def _users(state: object) -> list[str]:
    return [m.text for m in state.messages if isinstance(m, UserMessage)]  # type: ignore[attr-defined]


async def test_a_retry_with_the_same_key_stores_and_runs_nothing(backend: Backend) -> None:
    model = ScriptedModel([reply("first answer"), reply("never used")])
    runner = Runner(Team([Agent("triage")]), model=model, store=backend.open())

    first = await runner.run("s", "refund please", idempotency_key="k-1")
    again = await runner.run("s", "refund please", idempotency_key="k-1")

    assert again.output == first.output == "first answer"
    assert (again.turn, again.status, again.agent) == (first.turn, first.status, "triage")
    assert [e.type for e in again.events] == [e.type for e in first.events]
    assert [e.seq for e in again.events] == [e.seq for e in first.events]
    state = await runner.store.load("s")
    assert state is not None and _users(state) == ["refund please"]
    assert state.turn == 1
    assert len(model.requests) == 1


async def test_the_same_key_for_a_different_message_is_refused(backend: Backend) -> None:
    runner = Runner(Team([Agent("triage")]), model=ScriptedModel([reply("ok")]),
                    store=backend.open())
    await runner.run("s", "refund please", idempotency_key="k-1")

    with pytest.raises(HandoffsError) as caught:
        await runner.run("s", "cancel my order", idempotency_key="k-1")

    assert caught.value.code == "idempotency_key_reused"
    state = await runner.store.load("s")
    assert state is not None and _users(state) == ["refund please"]


async def test_a_new_key_is_a_new_message(backend: Backend) -> None:
    runner = Runner(Team([Agent("triage")]), model=ScriptedModel([reply("a"), reply("b")]),
                    store=backend.open())
    await runner.run("s", "yes", idempotency_key="k-1")
    second = await runner.run("s", "yes", idempotency_key="k-2")

    assert second.output == "b"
    state = await runner.store.load("s")
    assert state is not None and _users(state) == ["yes", "yes"]


async def test_a_failed_turn_is_given_again_as_the_same_failure(backend: Backend) -> None:
    @tool(on_error="raise")
    def boom() -> str:
        """Fail."""
        raise RuntimeError("broken")

    model = ScriptedModel([call("boom"), reply("never")])
    runner = Runner(Team([Agent("triage", tools=[boom])]), model=model,
                    store=backend.open())
    first = await runner.run("s", "go", idempotency_key="k")
    again = await runner.run("s", "go", idempotency_key="k")

    assert first.error is not None and again.error is not None
    assert (again.status, again.error.code) == (first.status, first.error.code)
    assert len(model.requests) == 1


async def test_after_a_restart_the_stored_outcome_is_returned(backend: Backend) -> None:
    backend.require_processes()
    runner = Runner(Team([Agent("triage")]), model=ScriptedModel([reply("stored")]),
                    store=backend.open())
    await runner.run("s", "hello", idempotency_key="k")
    await runner.store.close()

    model = ScriptedModel([reply("a second answer")])
    restarted = Runner(Team([Agent("triage")]), model=model, store=backend.open())
    again = await restarted.run("s", "hello", idempotency_key="k")

    assert again.output == "stored"
    assert model.requests == []
    state = await restarted.store.load("s")
    assert state is not None and _users(state) == ["hello"]


async def test_a_retry_while_the_first_runs_waits_for_it(backend: Backend) -> None:
    started = asyncio.Event()

    @tool
    async def slow() -> str:
        """Take a while."""
        started.set()
        await asyncio.sleep(0.3)
        return "done"

    model = ScriptedModel([call("slow"), reply("after the tool"), reply("never")])
    runner = Runner(Team([Agent("triage", tools=[slow])]), model=model,
                    store=backend.open())
    first = asyncio.create_task(runner.run("s", "go", idempotency_key="k"))
    await started.wait()
    second = await runner.run("s", "go", idempotency_key="k")

    assert second.output == (await first).output == "after the tool"
    assert len(model.requests) == 2
    state = await runner.store.load("s")
    assert state is not None and _users(state) == ["go"]


async def test_a_retry_of_a_turn_that_died_answers_it_once(backend: Backend) -> None:
    started = asyncio.Event()

    @tool
    async def hang() -> str:
        """Never ends the first time."""
        started.set()
        await asyncio.sleep(60)
        return "late"

    store = backend.open()
    runner = Runner(Team([Agent("triage", tools=[hang])]),
                    model=ScriptedModel([call("hang")]), store=store)
    task = asyncio.create_task(runner.run("s", "go", idempotency_key="k"))
    await started.wait()
    task.cancel()  # from outside: the turn died after storing the message
    with pytest.raises(asyncio.CancelledError):
        await task

    again = Runner(Team([Agent("triage")]), model=ScriptedModel([reply("answered")]),
                   store=store)
    result = await again.run("s", "go", idempotency_key="k")
    retry = await again.run("s", "go", idempotency_key="k")

    assert result.output == retry.output == "answered"
    state = await store.load("s")
    assert state is not None and _users(state) == ["go"]
    assert state.status == "idle"


async def test_a_streamed_retry_yields_the_first_turns_events(backend: Backend) -> None:
    model = ScriptedModel([reply("streamed"), reply("never")])
    runner = Runner(Team([Agent("triage")]), model=model, store=backend.open())
    first = [e async for e in runner.stream("s", "hi", idempotency_key="k")]
    again = [e async for e in runner.stream("s", "hi", idempotency_key="k")]

    assert [e.type for e in again] == [e.type for e in first]
    assert again[-1].result.output == "streamed"
    assert len(model.requests) == 1


async def test_a_retried_approval_runs_the_tool_once_and_gets_the_first_outcome(
        backend: Backend) -> None:
    runs: list[str] = []

    @tool(needs_approval=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        runs.append(order_id)
        return f"refunded {order_id}"

    model = ScriptedModel([call("refund", order_id="A-1"), reply("done"), reply("never")])
    runner = Runner(Team([Agent("billing", tools=[refund])]), model=model,
                    store=backend.open())
    paused = await runner.run("s", "refund A-1")
    call_id = next(e for e in paused.events if e.type == "approval_requested")["call_id"]

    first = await runner.approve("s", call_id, idempotency_key="d-1")
    again = await runner.approve("s", call_id, idempotency_key="d-1")

    assert again.output == first.output == "done"
    assert runs == ["A-1"]
    with pytest.raises(HandoffsError) as caught:  # the same key for another decision
        await runner.reject("s", call_id, "no", idempotency_key="d-1")
    assert caught.value.code == "idempotency_key_reused"


async def test_a_retried_pick_gets_its_record_and_stores_no_second_one(
        backend: Backend) -> None:
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing")])
    runner = Runner(team, model=ScriptedModel([]), store=backend.open())
    first = await runner.select_agent("s", "billing", idempotency_key="p-1")
    again = await runner.select_agent("s", "billing", idempotency_key="p-1")

    assert again.id == first.id
    state = await runner.store.load("s")
    assert state is not None and len(state.handoffs) == 1


async def test_a_retried_operator_reply_is_stored_once(backend: Backend) -> None:
    from handoffs import HumanAgent

    team = Team([Agent("bot", handoffs=["operator"]),
                 HumanAgent("operator", handoffs=["bot"])])
    runner = Runner(team, model=ScriptedModel([transfer("operator")]),
                    store=backend.open())
    await runner.run("s", "a person please")
    first = await runner.reply_as_human("s", "I refunded it", handoff_to="bot",
                                        idempotency_key="r-1")
    again = await runner.reply_as_human("s", "I refunded it", handoff_to="bot",
                                        idempotency_key="r-1")

    assert (again.status, again.agent) == (first.status, first.agent)
    assert [r.id for r in again.handoffs] == [r.id for r in first.handoffs]
    state = await runner.store.load("s")
    assert state is not None
    assert [m.text for m in state.messages].count("I refunded it") == 1


async def test_the_same_key_from_two_processes_is_stored_and_answered_once(
        backend: Backend, tmp_path: Path) -> None:
    backend.require_processes()
    assert backend.url is not None
    env = {**os.environ, "IDEMPOTENCY_KEY": "k-shared"}

    def start(ready: str) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, WORKER, backend.url or "", "shared", "A",
                                 "slow", str(tmp_path / ready)], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    first = start("a.ready")
    deadline = time.monotonic() + 30
    while not (tmp_path / "a.ready").exists():  # the first holds the session, mid-turn
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    second = start("b.ready")  # a retry from another process: it waits for the first
    outs = [await asyncio.to_thread(p.communicate, timeout=60) for p in (first, second)]

    assert [o.strip() for o, _ in outs] == ["answer to A", "answer to A"], outs
    assert not (tmp_path / "b.ready").exists()  # the retry ran no tool
    state = await backend.open().load("shared")
    assert state is not None and _users(state) == ["A"]


async def test_a_retried_plan_runs_no_step_again_and_gets_its_result(
        backend: Backend) -> None:
    from handoffs import PlanStep

    team = Team([Agent("planner"), Agent("research"), Agent("writer")],
                supervisor="planner")
    model = ScriptedModel([reply("facts"), reply("essay"), reply("never")])
    runner = Runner(team, model=model, store=backend.open())
    steps = [PlanStep("research", "Find facts", name="facts"),
             PlanStep("writer", "Write it up", name="essay")]

    first = await runner.run_plan("s", steps, idempotency_key="plan-1")
    again = await runner.run_plan("s", steps, idempotency_key="plan-1")

    assert again.steps == first.steps == {"facts": "facts", "essay": "essay"}
    assert again.output == "essay"
    assert len(model.requests) == 2
    state = await runner.store.load("s")
    assert state is not None and state.turn == 1
