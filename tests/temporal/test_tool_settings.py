"""`@tool(retry=..., timeout=...)` under Temporal: a failed attempt is tried again as a new
activity, and an attempt over the tool's own timeout fails as the model's feedback."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from handoffs import Agent, Runner, Team, tool
from handoffs.core.messages import ToolResult
from handoffs.testing import ScriptedModel, call, reply

pytest.importorskip("temporalio")

from temporalio.client import Client

from handoffs.temporal import TemporalExecutor, TemporalOptions, make_worker

TRIES: list[str] = []


@tool(retry=1)
def flaky(order: str) -> str:
    """Find an order (fails the first time)."""
    TRIES.append(order)
    if len(TRIES) == 1:
        raise ConnectionError("the order service hung up")
    return f"{order}: shipped"


@tool(timeout=0.5)
async def slow(order: str) -> str:
    """Track an order (slower than its limit)."""
    await asyncio.sleep(5)
    return "never"


async def test_a_tools_retry_and_timeout_hold_under_temporal(
        temporal_address: str, queue: str, tmp_path: Path) -> None:
    TRIES.clear()
    team = Team([Agent("a", tools=[flaky, slow])])
    model = ScriptedModel([call("flaky", order="A1"), call("slow", order="A1"), reply("ok")])
    client = await Client.connect(temporal_address)
    url = f"sqlite:///{tmp_path / 't.db'}"
    worker_runner = Runner(team, model=model, store=url)
    runner = Runner(team, store=url, executor=TemporalExecutor(client, task_queue=queue))
    async with make_worker(client, worker_runner, queue, TemporalOptions(tool_attempts=1)):
        result = await runner.run(f"s-tools-{queue}", "where is A1?")
    assert result.output == "ok"
    assert TRIES == ["A1", "A1"]  # failed once, tried once more
    state = await runner.get_session(f"s-tools-{queue}")
    assert state is not None
    found, tracked = [m for m in state.messages if isinstance(m, ToolResult)]
    assert not found.is_error and found.text == "A1: shipped"
    assert tracked.is_error and "did not finish within 0.5 s" in tracked.text
    await runner.store.close()
    await worker_runner.store.close()
