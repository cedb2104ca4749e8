"""Real OS processes on one session: turns never interleave; a killed turn is recovered."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from handoffs import Note, Runner
from handoffs.core.messages import UserMessage
from handoffs.testing import ScriptedModel, reply

from .conftest import Backend, support_team

WORKER = str(Path(__file__).with_name("worker.py"))


def _start(url: str, session_id: str, text: str, mode: str, ready: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, WORKER, url, session_id, text, mode, str(ready)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


async def _wait_for(path: Path, proc: subprocess.Popen[str], seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"worker exited early: {proc.communicate()}")
        assert time.monotonic() < deadline, f"{path} never appeared"
        await asyncio.sleep(0.02)


async def _finish(proc: subprocess.Popen[str]) -> str:
    out, err = await asyncio.to_thread(proc.communicate, timeout=60)
    assert proc.returncode == 0, err
    return out.strip()


async def test_concurrent_turns_from_two_processes_are_whole_and_none_is_lost(
    backend: Backend, tmp_path: Path,
) -> None:
    backend.require_processes()
    assert backend.url is not None
    first = _start(backend.url, "shared", "A", "slow", tmp_path / "a.ready")
    await _wait_for(tmp_path / "a.ready", first)  # A holds the session, mid-turn
    second = _start(backend.url, "shared", "B", "slow", tmp_path / "b.ready")

    outputs = {await _finish(first), await _finish(second)}

    assert outputs == {"answer to A", "answer to B"}
    state = await backend.open().load("shared")
    assert state is not None
    assert [m.kind for m in state.messages] == ["user", "assistant", "tool_result",
                                                "assistant"] * 2
    texts = [m.text for m in state.messages if m.kind in ("user",) or
             (m.kind == "assistant" and m.text)]
    assert texts == ["A", "answer to A", "B", "answer to B"]
    assert (state.turn, state.status) == (2, "idle")


async def test_a_turn_killed_mid_way_is_recovered_by_another_process(
    backend: Backend, tmp_path: Path,
) -> None:
    backend.require_processes()
    assert backend.url is not None
    proc = _start(backend.url, "s1", "refund order A-1", "hang", tmp_path / "ready")
    await _wait_for(tmp_path / "ready", proc)
    os.kill(proc.pid, signal.SIGKILL)
    await asyncio.to_thread(proc.wait, 30)

    store = backend.open()
    deadline = time.monotonic() + 10
    while True:  # the server notices the dead client's connection within moments
        state = await store.load("s1")
        assert state is not None
        if state.status == "interrupted" or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    assert state.status == "interrupted"
    assert [m.text for m in state.messages if isinstance(m, UserMessage)] == [
        "refund order A-1"]

    model = ScriptedModel([reply("Refunded A-1.")])
    result = await Runner(support_team(), model=model, store=store).run("s1", "refund order A-1")

    assert result.output == "Refunded A-1."
    state = await backend.open().load("s1")
    assert state is not None and state.status == "idle"
    assert [m.text for m in state.messages if isinstance(m, UserMessage)] == [
        "refund order A-1"]
    assert any(isinstance(m, Note) and "interrupted" in m.text for m in state.messages)
    assert state.messages[-1].text == "Refunded A-1."
