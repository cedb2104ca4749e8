"""An approved tool runs at most once, even when its process dies mid-continuation.

A real process pauses a turn on `refund` (it needs a person's approval); a second one
approves it, `refund` runs, and the second process is killed (SIGKILL) while the turn
goes on. The decision must still be stored (the person is not asked again), `refund`
must have been told its call id, and whatever happens next (approving again,
`runner.resume`, a new message) must not run `refund` again: the model reads that its
outcome is unknown.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from handoffs import HandoffsError, Runner, RunStatus
from handoffs.core.messages import ToolResult, UserMessage
from stores.conftest import Backend

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import approval_crash  # noqa: E402


def _run(url: str, *args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(HERE / "approval_crash.py"), url, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


@pytest.mark.parametrize("then", ["approve-again", "resume", "new-message"])
@pytest.mark.parametrize("delegated", [False, True], ids=["after-handoff", "in-delegation"])
async def test_an_approved_call_never_runs_twice_when_its_process_dies(
        durable_backend: Backend, tmp_path: Path, delegated: bool, then: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert durable_backend.url is not None
    marks = tmp_path / "marks"
    monkeypatch.setenv("APPROVAL_MARKS", str(marks))  # a run here would be counted too
    env = dict(os.environ)
    extra = ["delegated"] if delegated else []
    paused = _run(durable_backend.url, "pause", *extra, env=env)
    out, err = await asyncio.to_thread(paused.communicate, timeout=60)
    assert paused.returncode == 0, err
    status, call_id = out.split()
    assert status == "waiting_for_approval"

    approving = _run(durable_backend.url, "approve", call_id, *extra, env=env)
    deadline = time.monotonic() + 30
    # refund ran (its line written, not only its file opened); the next model call hangs
    while not (marks.exists() and marks.read_text().endswith("\n")):
        assert approving.poll() is None, approving.communicate()
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    os.kill(approving.pid, signal.SIGKILL)
    await asyncio.to_thread(approving.wait, 30)

    store = durable_backend.open()
    state = await store.load("s")
    assert state is not None and state.status == "interrupted"
    assert state.pending is not None  # what was decided is kept: nobody is asked again
    assert state.pending["decisions"][call_id]["approved"] is True
    assert marks.read_text().splitlines() == [f"refund A-1 call {call_id}"]

    runner = Runner(approval_crash.team(delegated), model=approval_crash.Answers(),
                    store=store)
    if then == "approve-again":
        result = await runner.approve("s", call_id)
    elif then == "resume":
        resumed = await runner.resume("s")
        assert resumed is not None
        result = resumed
    else:
        result = await runner.run("s", "did it work?")

    assert result.status is RunStatus.COMPLETED, result.error
    assert marks.read_text().splitlines() == [f"refund A-1 call {call_id}"]  # once
    state = await durable_backend.open().load("s")
    assert state is not None and state.status == "idle" and state.pending is None
    told = [m for m in state.messages if isinstance(m, ToolResult) and m.is_error
            and "unknown" in m.text]
    assert told, [m.text for m in state.messages]
    if then == "new-message":
        assert [m.text for m in state.messages if isinstance(m, UserMessage)] == [
            "refund A-1 please", "did it work?"]
    assert any(e.type == "run_interrupted" for e in result.events)
    with pytest.raises(HandoffsError) as refused:  # and it is not asked for again
        await runner.approve("s", call_id)
    assert refused.value.code == "no_pending_approval"
