"""Under Temporal an idempotency key is refused loudly, before anything is sent."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffsError, Runner, Team

pytest.importorskip("temporalio", reason="temporalio is not installed (the `temporal` extra)")

from handoffs.temporal import TemporalExecutor


async def test_every_keyed_operation_is_refused_with_idempotency_unsupported() -> None:
    # No server: the refusal comes before the executor connects to one.
    runner = Runner(Team([Agent("triage")]),
                    executor=TemporalExecutor("127.0.0.1:1", task_queue="q"))
    calls = [lambda: runner.run("s", "hi", idempotency_key="k"),
             lambda: runner.approve("s", "c", idempotency_key="k"),
             lambda: runner.reject("s", "c", idempotency_key="k"),
             lambda: runner.select_agent("s", "triage", idempotency_key="k"),
             lambda: runner.reply_as_human("s", "hi", idempotency_key="k")]
    for make in calls:
        with pytest.raises(HandoffsError) as caught:
            await make()
        assert caught.value.code == "idempotency_unsupported"
    with pytest.raises(HandoffsError) as streamed:
        runner.stream("s", "hi", idempotency_key="k")
    assert streamed.value.code == "idempotency_unsupported"
