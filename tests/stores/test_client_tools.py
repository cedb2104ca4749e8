"""A call of a client's tool (AG-UI's frontend tools) waits in every store: the turn
pauses on one store object, and the client's result, sent through a new runner on a
new store object over the same data, continues the same turn, stored once."""

from __future__ import annotations

import pytest

from handoffs import Agent, HandoffsError, Runner, RunStatus, Team
from handoffs.core.messages import AssistantMessage, ToolResult
from handoffs.testing import ScriptedModel, call, reply

from .conftest import Backend

CONFIRM = {"name": "confirm", "description": "Ask the user to confirm.",
           "parameters": {"type": "object", "properties": {"question": {"type": "string"}}}}


async def test_the_clients_result_continues_the_turn_on_every_store(backend: Backend) -> None:
    team = Team([Agent("billing")])
    first = Runner(team, model=ScriptedModel([call("confirm", question="Refund A-1?")]),
                   store=backend.open())
    paused = await first.run("s", "refund A-1", client_tools=[CONFIRM])
    assert paused.status is RunStatus.WAITING_FOR_APPROVAL
    state = await backend.open().load("s")
    assert state is not None and state.status == "waiting_for_approval"
    assert state.pending is not None and state.pending["client"] == ["call_1"]
    assert [m.kind for m in state.messages] == ["user"]  # nothing shown as run

    model = ScriptedModel([reply("Refunded, as you confirmed.")])
    second = Runner(team, model=model, store=backend.open())
    done = await second.submit_tool_result("s", "call_1", "yes", idempotency_key="k1")

    assert done.status is RunStatus.COMPLETED and done.output == "Refunded, as you confirmed."
    # The continued turn offers the turn's client tools again, and the model read the result.
    assert [s.name for s in model.requests[0].tools] == ["confirm"]
    assert isinstance(model.requests[0].messages[-1], ToolResult)
    again = await second.submit_tool_result("s", "call_1", "yes", idempotency_key="k1")
    assert again.output == done.output  # a retry: the first outcome, nothing decided twice
    with pytest.raises(HandoffsError) as caught:
        await second.submit_tool_result("s", "call_1", "no")
    assert caught.value.code == "no_pending_tool_call"
    state = await backend.open().load("s")
    assert state is not None and state.status == "idle" and state.pending is None
    calls = [c.id for m in state.messages if isinstance(m, AssistantMessage)
             for c in m.tool_calls]
    results = [(m.call_id, m.text) for m in state.messages if isinstance(m, ToolResult)]
    assert calls == ["call_1"] and results == [("call_1", "yes")]
