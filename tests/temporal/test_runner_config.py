"""A worker's runner options reach the runner each session's workflow builds
(`Runner.from_config`): an option set on the worker's runner is not dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from handoffs import Runner, RunStatus

from . import flow_team

pytest.importorskip("temporalio")

from temporalio.client import Client

from handoffs.temporal import TemporalExecutor, make_worker


def _out_of_steps(ctx: Any) -> str:
    return "I could not finish this one; a colleague will follow up."


async def test_the_workers_max_steps_and_on_max_steps_hold_in_the_workflow(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}"
    local = Runner(flow_team.team, model=flow_team.FlowModel(),
                   store=f"sqlite:///{tmp_path / 'local.db'}", max_steps=2)
    local.on_max_steps = _out_of_steps  # set after the runner is built
    expected = await local.run("s-runner-config", "refund please")
    client = await Client.connect(temporal_address)
    worker_runner = Runner(flow_team.team, model=flow_team.FlowModel(), store=url,
                           max_steps=2)
    worker_runner.on_max_steps = _out_of_steps
    runner = Runner(flow_team.team, store=url,
                    executor=TemporalExecutor(client, task_queue=queue))
    try:
        async with make_worker(client, worker_runner, queue):
            got = await runner.run("s-runner-config", "refund please")
    finally:
        await runner.store.close()
        await worker_runner.store.close()
        await local.store.close()

    assert (expected.status, expected.output) == (
        RunStatus.COMPLETED, "I could not finish this one; a colleague will follow up.")
    assert (got.status, got.agent, got.output) == (
        expected.status, expected.agent, expected.output)
    assert "max_steps_reached" in [e.type for e in got.events]
