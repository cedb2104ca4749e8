"""Under Temporal the client's tools (AG-UI's frontend tools) are refused loudly, with
their own code, before anything is sent."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffsError, Runner, Team

pytest.importorskip("temporalio", reason="temporalio is not installed (the `temporal` extra)")

from handoffs.temporal import TemporalExecutor

CONFIRM = {"name": "confirm", "description": "Ask the user.", "parameters": {}}


async def test_client_tools_and_their_results_are_refused_under_temporal() -> None:
    # No server: the refusal comes before the executor connects to one.
    runner = Runner(Team([Agent("triage")]),
                    executor=TemporalExecutor("127.0.0.1:1", task_queue="q"))
    with pytest.raises(HandoffsError) as offered:
        await runner.run("s", "hi", client_tools=[CONFIRM])
    assert offered.value.code == "client_tools_unsupported"
    with pytest.raises(HandoffsError) as streamed:
        runner.stream("s", "hi", client_tools=[CONFIRM])
    assert streamed.value.code == "client_tools_unsupported"
    with pytest.raises(HandoffsError) as answered:
        await runner.submit_tool_result("s", "c1", "yes")
    assert answered.value.code == "client_tools_unsupported"
