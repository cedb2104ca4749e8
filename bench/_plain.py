"""The workflow bench/temporal.py compares a turn with: what a turn's workflow does (two
activities, three local ones), with nothing in them (Temporal wants it at module level)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow


@activity.defn(name="noop")
async def noop(x: int) -> int:
    return x


@workflow.defn(name="Plain", sandboxed=False)
class Plain:
    @workflow.run
    async def run(self) -> None:
        t = timedelta(seconds=10)
        await workflow.execute_local_activity("noop", 0, start_to_close_timeout=t)
        await workflow.execute_local_activity("noop", 1, start_to_close_timeout=t)
        await workflow.execute_activity("noop", 2, start_to_close_timeout=t)
        await workflow.execute_activity("noop", 3, start_to_close_timeout=t)
        await workflow.execute_local_activity("noop", 4, start_to_close_timeout=t)
