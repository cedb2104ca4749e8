"""Turns as Temporal workflows, with a worker in this process: the same records, events
and answer as in process; approvals, human replies and picks as updates; turns of two
clients serialised; a session continued as new; a recorded history that replays."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from handoffs import Agent, Handoff, HumanAgent, Runner, RunStatus, Team
from handoffs.stores import open_store

from . import flow_team

pytest.importorskip("temporalio")

from temporalio.client import Client

from handoffs.temporal import TemporalExecutor, TemporalOptions, make_worker, replayer


@contextlib.asynccontextmanager
async def served(address: str, queue: str, db: Path, team: Team = flow_team.team,
                 options: TemporalOptions | None = None) -> AsyncIterator[Runner]:
    """A worker on `queue` over the SQLite file `db`, and a client runner on the same."""
    client = await Client.connect(address)
    url = f"sqlite:///{db}"
    worker_runner = Runner(team, model=flow_team.FlowModel(), store=url)
    runner = Runner(team, store=url, executor=TemporalExecutor(client, task_queue=queue))
    try:
        async with make_worker(client, worker_runner, queue, options):
            yield runner
    finally:
        await runner.store.close()
        await worker_runner.store.close()


def _volatile(d: dict[str, Any]) -> dict[str, Any]:
    """Ids and times differ between any two runs; the rest must not."""
    return {k: v for k, v in d.items() if k not in ("id", "record_id", "at", "created_at",
                                                    "updated_at", "result")}


async def _stored(runner: Runner, sid: str) -> tuple[Any, Any, Any]:
    state = await runner.get_session(sid)
    assert state is not None
    events = await runner.store.events_after(sid, -1, 1000)  # type: ignore[attr-defined]
    return ([m.to_dict() for m in state.messages],
            [_volatile(r.to_dict()) for r in state.handoffs],
            [_volatile(e) for e in events])


async def test_a_turn_with_a_transfer_and_a_delegation_matches_the_in_process_one(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    local = Runner(flow_team.team, model=flow_team.FlowModel(),
                   store=f"sqlite:///{tmp_path / 'local.db'}")
    expected = await local.run("s-1", "refund please")
    async with served(temporal_address, queue, tmp_path / "t.db") as runner:
        got = await runner.run("s-1", "refund please")
        assert (got.status, got.agent, got.output) == (
            RunStatus.COMPLETED, "billing", "You will get a refund within 30 days.")
        assert (got.status, got.agent, got.output, got.turn) == (
            expected.status, expected.agent, expected.output, expected.turn)
        assert got.usage == expected.usage and got.usage_by_agent == expected.usage_by_agent
        assert [(r.source, r.target, r.reason, r.accepted, r.returns) for r in got.handoffs] \
            == [(r.source, r.target, r.reason, r.accepted, r.returns)
                for r in expected.handoffs] == [
                ("triage", "billing", "llm", True, False),
                ("billing", "policy", "llm", True, True)]
        assert [(e.type, e.seq, _volatile(e.data)) for e in got.events] == \
            [(e.type, e.seq, _volatile(e.data)) for e in expected.events]
        assert await _stored(runner, "s-1") == await _stored(local, "s-1")
    await local.store.close()


async def test_stream_yields_the_turns_events_in_order_then_its_result(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    async with served(temporal_address, queue, tmp_path / "t.db") as runner:
        events = [e async for e in runner.stream("s-2", "refund please")]
    kinds = [e.type for e in events]
    assert kinds[0] == "run_started" and kinds[-1] == "run_completed"
    assert "agent_returned" in kinds and kinds.count("agent_handoff") == 2
    assert [e.seq for e in events] == list(range(len(events)))
    assert events[-1].result.output == "You will get a refund within 30 days."


async def test_an_approval_is_an_update_that_continues_the_waiting_turn(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    async with served(temporal_address, queue, tmp_path / "t.db") as runner:
        waiting = await runner.run("s-3", "approve the refund")
        assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
        state = await runner.get_session("s-3")
        assert state is not None and state.pending is not None
        call_id = state.pending["waiting"][0]
        done = await runner.approve("s-3", call_id)
        assert (done.status, done.output) == (RunStatus.COMPLETED, "Your refund is done.")
        with pytest.raises(Exception) as refused:  # decided already: the update fails
            await runner.approve("s-3", call_id)
        assert getattr(refused.value, "code", None) == "no_pending_approval"


async def test_a_human_escalation_waits_and_the_operators_reply_hands_back(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    team = Team([Agent("triage", handoffs=[Handoff("human")]), HumanAgent("human",
                 handoffs=[Handoff("triage")], user_selectable=True)])

    class ToHuman(flow_team.FlowModel):
        async def complete(self, request: Any) -> Any:
            from handoffs.testing import ScriptedModel, reply, transfer

            done = any(getattr(m, "agent", "") == "human" for m in request.messages)
            step = reply("Back with triage.") if done else transfer("human", reason="x")
            return await ScriptedModel([step]).complete(request)

    client = await Client.connect(temporal_address)
    url = f"sqlite:///{tmp_path / 'h.db'}"
    worker_runner = Runner(team, model=ToHuman(), store=url)
    runner = Runner(team, store=url, executor=TemporalExecutor(client, task_queue=queue))
    async with make_worker(client, worker_runner, queue):
        first = await runner.run("s-4", "I want a person")
        assert (first.status, first.agent) == (RunStatus.WAITING_FOR_HUMAN, "human")
        reply = await runner.reply_as_human("s-4", "Hello, I am here.", handoff_to="triage")
        assert (reply.status, reply.agent) == (RunStatus.COMPLETED, "triage")
        record = await runner.select_agent("s-4", "human")
        assert record.accepted and record.target == "human"
    state = await runner.get_session("s-4")
    assert state is not None and state.active_agent == "human"
    texts = [m.text for m in state.messages]
    assert texts[0] == "I want a person" and "Hello, I am here." in texts
    await runner.store.close()
    await worker_runner.store.close()


async def test_two_clients_sending_to_one_session_are_served_one_turn_at_a_time(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    async with served(temporal_address, queue, tmp_path / "t.db") as runner:
        other_client = await Client.connect(temporal_address)
        other = Runner(flow_team.team, store=f"sqlite:///{tmp_path / 't.db'}",
                       executor=TemporalExecutor(other_client, task_queue=queue))
        a, b = await asyncio.gather(runner.run("s-5", "slow 0.5 first"),
                                    other.run("s-5", "slow 0.5 second"))
        await other.store.close()
        assert {a.turn, b.turn} == {1, 2}
        assert a.status is b.status is RunStatus.COMPLETED
        state = await runner.get_session("s-5")
    assert state is not None and state.turn == 2
    users = [i for i, m in enumerate(state.messages) if m.role == "user"]
    # Each turn's work sits between its own message and the next one: never interleaved.
    first_end = max(i for i, m in enumerate(state.messages) if m.role == "assistant"
                    and m.text and i < users[1])
    assert state.messages[first_end].text == "You will get a refund within 30 days."


async def test_a_long_session_continues_as_new_and_keeps_answering(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    options = TemporalOptions(turns_per_run=2)
    async with served(temporal_address, queue, tmp_path / "t.db", options=options) as runner:
        results = [await runner.run("s-6", f"refund {i}") for i in range(5)]
        assert [r.turn for r in results] == [1, 2, 3, 4, 5]
        assert all(r.status is RunStatus.COMPLETED for r in results)
        client = await runner.executor.connected()  # type: ignore[attr-defined]
        runs = [w async for w in client.list_workflows("WorkflowId = 's-6'")]
    assert len(runs) >= 3  # two turns per run: continued as new twice at least


async def test_a_recorded_history_replays(temporal_address: str, queue: str,
                                          tmp_path: Path) -> None:
    options = TemporalOptions(turns_per_run=10)  # one run holds the three updates
    async with served(temporal_address, queue, tmp_path / "t.db", options=options) as runner:
        await runner.run("s-7", "refund please")
        await runner.run("s-7", "approve it")
        state = await runner.get_session("s-7")
        assert state is not None and state.pending is not None
        await runner.approve("s-7", state.pending["waiting"][0])
        client = await runner.executor.connected()  # type: ignore[attr-defined]
        history = await client.get_workflow_handle("s-7").fetch_history()
    worker_runner = Runner(flow_team.team, model=flow_team.FlowModel(),
                           store=open_store(f"sqlite:///{tmp_path / 't.db'}"))
    result = await replayer(worker_runner, options).replay_workflow(history)
    assert result.replay_failure is None
    # A team whose decisions differ (billing may no longer ask policy) does not replay it.
    changed = Team([Agent("triage", handoffs=[Handoff("billing")]),
                    Agent("billing", tools=[flow_team.lookup, flow_team.refund])])
    other = Runner(changed, model=flow_team.FlowModel(), store=worker_runner.store)
    result = await replayer(other, options).replay_workflow(history,
                                                            raise_on_replay_failure=False)
    assert result.replay_failure is not None
    await worker_runner.store.close()


class Flaky:
    """A provider adapter's shape: its own `RetryPolicy` around each attempt, which fails
    with a retryable `rate_limited` the first `failures` times."""

    def __init__(self, failures: int, max_retries: int) -> None:
        from handoffs.models.retry import RetryPolicy

        self.retry = RetryPolicy(max_retries=max_retries, base_delay=0.01, max_delay=0.02)
        self.failures = failures
        self.attempts: list[int] = []  # shared with the worker's single-try copy

    async def complete(self, request: Any) -> Any:
        from handoffs import ModelError
        from handoffs.models.base import ModelResponse
        from handoffs.models.retry import with_retries

        async def attempt() -> ModelResponse:
            self.attempts.append(1)
            if len(self.attempts) <= self.failures:
                raise ModelError("busy", "rate_limited", retryable=True)
            return ModelResponse("fine")

        return await with_retries(attempt, self.retry,
                                  lambda e: e if isinstance(e, ModelError) else None)

    async def stream(self, request: Any) -> Any:
        yield await self.complete(request)


@pytest.mark.parametrize(("failures", "max_retries", "attempts", "status"), [
    (2, 2, 3, RunStatus.COMPLETED), (5, 1, 2, RunStatus.FAILED)])
async def test_a_models_retries_are_temporals_and_never_doubled(
        temporal_address: str, queue: str, tmp_path: Path, failures: int, max_retries: int,
        attempts: int, status: RunStatus) -> None:
    team = Team([Agent("solo")])
    model = Flaky(failures, max_retries)
    client = await Client.connect(temporal_address)
    url = f"sqlite:///{tmp_path / 'r.db'}"
    worker_runner = Runner(team, model=model, store=url)
    runner = Runner(team, store=url, executor=TemporalExecutor(client, task_queue=queue))
    async with make_worker(client, worker_runner, queue):
        result = await runner.run(f"s-8-{queue}", "hello")
    assert result.status is status
    assert len(model.attempts) == attempts  # 1 + max_retries at most, as in process
    if status is RunStatus.FAILED:
        assert result.error is not None and result.error.code == "rate_limited"
    await runner.store.close()
    await worker_runner.store.close()
