"""An approval outlives the process that asked for it: a real process pauses a turn on a
SQLite file or a PostgreSQL schema and exits; a new runner with a new store object, in
this process, approves, and the same turn completes with the agent that asked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from handoffs import Runner, RunStatus

from .conftest import backend_for

HERE = Path(__file__).parent


@pytest.mark.parametrize("delegated", [False, True], ids=["after-handoff", "in-delegation"])
@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_an_approval_survives_a_restart(kind: str, delegated: bool, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    marks = tmp_path / "marks"
    monkeypatch.setenv("APPROVAL_MARKS", str(marks))
    sys.path.insert(0, str(HERE))
    import approval_team

    async with backend_for(kind, tmp_path) as backend:
        assert backend.url is not None
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(
            [str(HERE), *filter(None, [os.environ.get("PYTHONPATH")])])}
        args = [sys.executable, str(HERE / "approval_team.py"), backend.url]
        out = subprocess.run(args + (["delegated"] if delegated else []),
                             capture_output=True, text=True, timeout=60, env=env, check=True)
        status, call_id = out.stdout.split()
        assert status == "waiting_for_approval"
        assert not marks.exists()  # nothing ran in the process that asked

        store = backend.open()
        runner = Runner(approval_team.team(delegated),
                        model=approval_team.continued_model(delegated), store=store)
        state = await runner.get_session("s")
        assert state is not None and state.status == "waiting_for_approval"
        assert state.pending is not None and state.pending["agent"] == "billing"
        assert ("caller" in state.pending) is delegated
        listed = await store.list_sessions(status="waiting_for_approval")
        assert [s.id for s in listed] == ["s"]

        result = await runner.approve("s", call_id)

        assert result.status is RunStatus.COMPLETED
        assert result.agent == ("triage" if delegated else "billing")
        assert result.output == "A-1 is refunded."
        assert marks.read_text().splitlines() == [f"refund A-1 in {os.getpid()}"]
        fresh = backend.open()
        state = await fresh.load("s")
        assert state is not None and state.status == "idle" and state.pending is None
        assert state.messages[-1].text == "A-1 is refunded."
        if delegated:  # the delegate's answer is the delegation call's result
            assert state.messages[-2].text == "Done: A-1."
        else:
            assert state.messages[-2].text == "refunded A-1"
