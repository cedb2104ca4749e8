"""Fault injection: worker processes killed with SIGKILL at random points of turns.

Whatever point a kill lands on (a model call, a tool, a handoff, a commit), no user
message whose first commit returned is lost, none is answered twice, every session
loads, and `runner.resume` (or the next message) brings every session back to idle.
`HANDOFFS_FAULT_KILLS` sets the number of kills per store (default 20).
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


async def _kill_workers(url: str, log: Path, kills: int, seed: int) -> None:
    rng = random.Random(seed)
    first = 0
    for k in range(kills):
        before = log.read_text().count("\n") if log.exists() else 0
        proc = subprocess.Popen([sys.executable, WORKER, url, str(log), str(first),
                                 str(SESSIONS), str(seed * 1000 + k)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while True:  # let it get going: at least one line, then a random moment
            await asyncio.sleep(0.02)
            lines = log.read_text().count("\n") if log.exists() else 0
            assert proc.poll() is None, proc.communicate()[1].decode()[-2000:]
            if lines > before:
                break
            assert time.monotonic() < deadline, "the worker made no progress"
        await asyncio.sleep(rng.uniform(0, 0.25))
        os.kill(proc.pid, signal.SIGKILL)
        await asyncio.to_thread(proc.wait, 30)
        first += 1000  # each worker's messages have their own numbers


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


async def _recover_and_verify(backend: Backend, log: Path) -> tuple[int, int]:
    stored, done = _check(log)
    assert done <= stored
    team = Team([Agent("triage", handoffs=["billing"]), Agent("billing", handoffs=["triage"])])
    store = backend.open()
    deadline = time.monotonic() + 20
    for k in range(SESSIONS):
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
