"""Workers as real processes (`handoffs worker`): one SIGKILLed in the middle of a slow
tool, with a second one running, and the turn still ends as it would have, without the
model asked again for a step already done and without losing the user's message; an
approval, and a human escalation, that wait while their worker is restarted, then go on."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from handoffs import Runner, RunStatus

from . import flow_team

pytest.importorskip("temporalio")

from temporalio.client import Client

from handoffs.temporal import TemporalExecutor

HERE = Path(__file__).parent


class Workers:
    """`handoffs worker` processes on one task queue and store."""

    def __init__(self, address: str, queue: str, tmp: Path) -> None:
        self.address, self.queue, self.tmp = address, queue, tmp
        self.store = f"sqlite:///{tmp / 'w.db'}"
        self.env = {**os.environ, "FLOW_CALLS": str(tmp / "calls"),
                    "FLOW_MARKS": str(tmp / "marks"), "PYTHONPATH": str(HERE.parent.parent)}
        self.procs: list[subprocess.Popen[str]] = []

    def start(self) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "handoffs.cli", "worker",
             f"{HERE / 'flow_team.py'}:runner", "--temporal", self.address,
             "--task-queue", self.queue, "--store", self.store, "--heartbeat", "1"],
            env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.procs.append(proc)
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        seen = []
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            seen.append(line)
            if "worker ready" in line:
                return proc
            if not line and proc.poll() is not None:
                break
        raise AssertionError(f"the worker did not start: {''.join(seen)}")

    def lines(self, name: str) -> list[str]:
        path = self.tmp / name
        return path.read_text().splitlines() if path.exists() else []

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture
def workers(temporal_address: str, queue: str, tmp_path: Path) -> Iterator[Workers]:
    w = Workers(temporal_address, queue, tmp_path)
    try:
        yield w
    finally:
        w.stop()


async def _client_runner(w: Workers) -> Runner:
    client = await Client.connect(w.address)
    return Runner(flow_team.team, store=w.store,
                  executor=TemporalExecutor(client, task_queue=w.queue))


async def _wait_for(w: Workers, name: str, word: str, timeout: float = 30) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [line for line in w.lines(name) if line.startswith(word)]
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"no {word!r} in {name}: {w.lines(name)}")


async def test_a_worker_killed_in_a_slow_tool_leaves_the_turn_to_the_other_worker(
        workers: Workers, tmp_path: Path) -> None:
    workers.start()
    workers.start()
    runner = await _client_runner(workers)
    turn = asyncio.ensure_future(runner.run("k-1", "slow 3 refund"))
    started = await _wait_for(workers, "marks", "start")
    pid = int(started[0].split()[-1])
    os.kill(pid, signal.SIGKILL)  # in the middle of the tool's three seconds
    result = await asyncio.wait_for(turn, 90)

    assert (result.status, result.agent, result.output) == (
        RunStatus.COMPLETED, "billing", "You will get a refund within 30 days.")
    calls = workers.lines("calls")
    assert len(calls) == len(set(calls)) == 5, calls  # no step asked of the model twice
    marks = workers.lines("marks")
    assert [m.split()[0] for m in marks] == ["start", "start", "end"]
    assert int(marks[1].split()[-1]) != pid  # the tool ran again on the other worker
    state = await runner.get_session("k-1")
    assert state is not None and state.messages[0].text == "slow 3 refund"
    assert state.status == "idle" and state.turn == 1
    # The same turn in process asks the model the same five things.
    local_calls = tmp_path / "local-calls"
    os.environ["FLOW_CALLS"] = str(local_calls)
    try:
        await flow_team.runner().run("k-1", "slow 0 refund")
    finally:
        del os.environ["FLOW_CALLS"]
    assert local_calls.read_text().splitlines() == calls
    await runner.store.close()


async def test_an_approval_waits_across_a_worker_restart_and_its_decision_continues_it(
        workers: Workers) -> None:
    first = workers.start()
    runner = await _client_runner(workers)
    waiting = await runner.run("k-2", "approve the refund")
    assert waiting.status is RunStatus.WAITING_FOR_APPROVAL
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    workers.start()  # a new worker: nothing of the waiting turn was held in the old one
    state = await runner.get_session("k-2")
    assert state is not None and state.pending is not None
    done = await asyncio.wait_for(runner.approve("k-2", state.pending["waiting"][0]), 60)
    assert (done.status, done.output) == (RunStatus.COMPLETED, "Your refund is done.")
    assert [m.split()[0] for m in workers.lines("marks")] == ["refund"]
    await runner.store.close()


async def test_a_human_escalation_waits_across_a_worker_restart_and_the_reply_continues_it(
        workers: Workers) -> None:
    first = workers.start()
    runner = await _client_runner(workers)
    waiting = await runner.run("k-3", "person please")
    assert (waiting.status, waiting.agent) == (RunStatus.WAITING_FOR_HUMAN, "operator")
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    workers.start()
    back = await asyncio.wait_for(
        runner.reply_as_human("k-3", "I have refunded you.", handoff_to="billing"), 60)
    assert (back.status, back.agent) == (RunStatus.COMPLETED, "billing")
    state = await runner.get_session("k-3")
    assert state is not None and state.active_agent == "billing"
    assert [m.text for m in state.messages if m.role == "user"] == ["person please"]
    assert state.messages[-1].text == "I have refunded you."
    await runner.store.close()
