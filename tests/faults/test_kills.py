"""Fault injection: worker processes killed with SIGKILL at random points of turns.

Whatever point a kill lands on (a model call, a tool, a handoff, a commit), no user
message whose first commit returned is lost, none is answered twice, every session
loads, and `runner.resume` (or the next message) brings every session back to idle.
With a second worker alive on the same session all along, none of its messages is lost
either, whatever the killed one held or had just sent. `HANDOFFS_FAULT_KILLS` sets the
number of kills per store (default 20).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from handoffs import Agent, Runner, Team
from handoffs.core.messages import AssistantMessage, UserMessage
from handoffs.testing import ScriptedModel, call, reply
from stores.conftest import Backend

WORKER = str(Path(__file__).with_name("chaos_worker.py"))
SESSIONS = 4


async def _kill_workers(url: str, log: Path, kills: int, seed: int,
                        sessions: int = SESSIONS) -> None:
    rng = random.Random(seed)
    first = 0
    for k in range(kills):
        before = _progress(log)
        proc = subprocess.Popen([sys.executable, WORKER, url, str(log), str(first),
                                 str(sessions), str(seed * 1000 + k)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while True:  # let it get going: at least one line, then a random moment
            await asyncio.sleep(0.02)
            lines = _progress(log)
            assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
            if lines > before:
                break
            assert time.monotonic() < deadline, "the worker made no progress"
        await asyncio.sleep(rng.uniform(0, 0.25))
        os.kill(proc.pid, signal.SIGKILL)
        await asyncio.to_thread(proc.wait, 30)
        first += 1000  # each worker's messages have their own numbers


def _progress(log: Path) -> int:
    """How many messages the log says were stored or answered."""
    if not log.exists():
        return 0
    return sum(1 for line in log.read_text().splitlines() if not line.startswith("sent "))


def _check(log: Path) -> tuple[set[str], set[str]]:
    """The messages stored, and those whose run() returned completed, per the log."""
    stored: set[str] = set()
    done: set[str] = set()
    for line in log.read_text().splitlines():
        kind, text, *status = line.split(" ")
        if kind == "stored":
            stored.add(text)
        elif status == ["completed"]:
            done.add(text)
    return stored, done


async def _recover_and_verify(backend: Backend, log: Path,
                              sessions: int = SESSIONS) -> tuple[int, int]:
    stored, done = _check(log)
    assert done <= stored
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing", handoffs=["triage"])])
    store = backend.open()
    deadline = time.monotonic() + 20
    for k in range(sessions):
        sid = f"c{k}"
        while True:  # PostgreSQL frees a dead client's lock when it notices the death
            state = await store.load(sid)
            assert state is not None, f"session {sid} does not load"
            if state.status != "running" or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        model = ScriptedModel([call("transfer_to_billing"), reply("caught up")] * 2)
        await Runner(team, model=model, store=store).resume(sid)
        state = await store.load(sid)
        assert state is not None and state.status == "idle", (sid, state and state.status)
        users = Counter(m.text for m in state.messages if isinstance(m, UserMessage))
        answers = Counter(m.text for m in state.messages if isinstance(m, AssistantMessage)
                          and m.text.startswith("answer to "))
        assert all(n == 1 for n in users.values()), f"a message stored twice: {users}"
        assert all(n == 1 for n in answers.values()), f"a message answered twice: {answers}"
        assert state.turn == sum(users.values())
        for text in (t for t in stored if t.startswith(f"{sid}-")):
            assert users[text] == 1, f"{text} was stored and then lost"
        for text in (t for t in done if t.startswith(f"{sid}-")):
            assert answers[f"answer to {text}"] == 1, f"{text} returned but has no answer"
    return len(stored), len(done)


async def test_random_kills_lose_no_stored_message_and_answer_none_twice(
    durable_backend: Backend, tmp_path: Path,
) -> None:
    assert durable_backend.url is not None
    kills = int(os.environ.get("HANDOFFS_FAULT_KILLS", "20"))
    log = tmp_path / "worker.log"

    await _kill_workers(durable_backend.url, log, kills, seed=7)
    stored, done = await _recover_and_verify(durable_backend, log)

    assert stored >= kills  # every worker stored at least one message before its kill
    print(f"{durable_backend.kind}: {kills} kills, {stored} messages stored, {done} answered "
          "before a kill")


async def test_a_second_crash_while_catching_up_loses_neither_message(
    durable_backend: Backend, tmp_path: Path,
) -> None:
    """m1 with a slow model, SIGKILL; m2 with a slow model, SIGKILL: both are stored."""
    from stores.test_processes import _start, _wait_for

    assert durable_backend.url is not None
    for text in ("m1", "m2"):
        ready = tmp_path / f"{text}.ready"
        proc = _start(durable_backend.url, "s1", text, "hang", ready)
        await _wait_for(ready, proc)
        os.kill(proc.pid, signal.SIGKILL)
        await asyncio.to_thread(proc.wait, 30)

    state = await durable_backend.open().load("s1")
    assert state is not None
    assert [m.text for m in state.messages if isinstance(m, UserMessage)] == ["m1", "m2"]


async def test_a_live_worker_loses_no_message_while_another_on_its_session_is_killed(
    durable_backend: Backend, tmp_path: Path,
) -> None:
    """Two workers on one session; one is killed again and again, the other lives."""
    assert durable_backend.url is not None
    kills = int(os.environ.get("HANDOFFS_FAULT_KILLS", "20"))
    killed, steady_log = tmp_path / "killed.log", tmp_path / "steady.log"
    steady = subprocess.Popen([sys.executable, WORKER, durable_backend.url, str(steady_log),
                               "900000", "1", "99", "keep-going"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        await _kill_workers(durable_backend.url, killed, kills, seed=11, sessions=1)
        assert steady.poll() is None, steady.communicate()[1].decode()[-2000:]
    finally:
        os.kill(steady.pid, signal.SIGKILL)
        await asyncio.to_thread(steady.wait, 30)
    lines = steady_log.read_text().splitlines()
    sent = [line.split(" ")[1] for line in lines if line.startswith("sent ")]
    refused = [line for line in lines if line.startswith("error ")]
    both = tmp_path / "both.log"
    both.write_text(killed.read_text() + steady_log.read_text())

    stored, _ = await _recover_and_verify(durable_backend, both, sessions=1)

    state = await durable_backend.open().load("c0")
    assert state is not None
    users = {m.text for m in state.messages if isinstance(m, UserMessage)}
    lost = [text for text in sent[:-1] if text not in users]  # the last was cut by the end
    print(f"{durable_backend.kind}: {kills} kills beside a live worker: {len(sent)} messages "
          f"sent by the live one, {len(lost)} lost, {len(refused)} refused; {stored} stored "
          f"in all, none answered twice")
    assert not refused, refused[:5]
    assert not lost, lost[:5]
