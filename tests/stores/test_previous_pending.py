"""A turn paused for approval by the previous version (its pending approval a plain dict)
goes on in this one, on every store: the session is stored as that version exported it
(`previous_pending.json`: a response with reasoning and one of two calls decided, a
client tool's call, a delegate's call with its caller's half-done response and planned
transfer), its pending approval is stored back key for key, and the decision continues it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from handoffs import Agent, Handoff, Runner, RunStatus, Team, tool
from handoffs.core.messages import ToolResult
from handoffs.core.pending import PendingApproval
from handoffs.testing import ScriptedModel, reply

from .conftest import Backend

PREVIOUS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "previous_pending.json").read_text())
ran: list[str] = []


@tool(needs_approval=True)
def refund(order_id: str, amount: float) -> str:
    """Refund an order."""
    ran.append(f"refund {order_id}")
    return f"refunded {amount} on {order_id}"


@tool
def lookup(order_id: str) -> str:
    """Look an order up."""
    ran.append(f"lookup {order_id}")
    return f"{order_id}: paid 30"


@pytest.fixture(autouse=True)
def _clear() -> None:
    ran.clear()


async def _stored_as_before(backend: Backend, name: str) -> Any:
    """Store the previous version's export; check the store gives its pending approval
    back as it was, typed, from a fresh store object (a durable one reads it from disk)."""
    data = PREVIOUS[name]
    await backend.open().import_session(data)
    store = backend.open()
    exported = await store.export_session(data["id"])
    assert exported is not None
    assert json.dumps(exported["pending"]) == json.dumps(data["pending"])
    state = await store.load(data["id"])
    assert state is not None and isinstance(state.pending, PendingApproval)
    assert state.pending.to_dict() == data["pending"]
    return store


def _results(state: Any) -> list[tuple[str, str, bool]]:
    return [(m.call_id, m.text, m.is_error) for m in state.messages
            if isinstance(m, ToolResult)]


async def test_a_response_with_one_call_decided_goes_on(backend: Backend) -> None:
    store = await _stored_as_before(backend, "main")
    runner = Runner(Team([Agent("billing", tools=[refund, lookup])]),
                    model=ScriptedModel([reply("Done.")]), store=store)
    state = await runner.get_session("m")
    assert state is not None and state.pending is not None
    assert state.pending.undecided() == ["c3"]
    assert state.pending.decisions["c1"].reason == "too much"
    assert state.pending.reasoning[0].model == "claude-x"

    result = await runner.approve("m", "c3")

    assert result.status is RunStatus.COMPLETED and result.output == "Done."
    assert ran == ["lookup A-1", "refund B-2"]  # the rejected call never ran
    state = await runner.get_session("m")
    assert state is not None and state.pending is None and state.status == "idle"
    said = _results(state)
    assert [cid for cid, _, _ in said] == ["c1", "c2", "c3"]
    assert "too much" in said[0][1] and said[0][2]
    assert said[1:] == [("c2", "A-1: paid 30", False), ("c3", "refunded 5.0 on B-2", False)]
    assert state.messages[1].reasoning[0].model == "claude-x"  # type: ignore[union-attr]


async def test_a_client_tools_call_goes_on_with_its_result(backend: Backend) -> None:
    store = await _stored_as_before(backend, "client")
    runner = Runner(Team([Agent("billing")]), model=ScriptedModel([reply("As you said.")]),
                    store=store)
    state = await runner.get_session("c")
    assert state is not None and state.pending is not None
    assert state.pending.client == ("call_1",)
    assert [s.name for s in state.pending.client_tools or ()] == ["confirm"]

    result = await runner.submit_tool_result("c", "call_1", "yes")

    assert result.status is RunStatus.COMPLETED and result.output == "As you said."
    state = await runner.get_session("c")
    assert state is not None and _results(state) == [("call_1", "yes", False)]


async def test_a_delegates_call_goes_on_then_its_callers_transfer(backend: Backend) -> None:
    store = await _stored_as_before(backend, "delegated")
    team = Team([Agent("desk", tools=[lookup],
                       handoffs=[Handoff("billing", returns=True), Handoff("closing")]),
                 Agent("billing", tools=[lookup, refund]), Agent("closing")])
    model = ScriptedModel({"billing": [reply("Refunded 30 on A-1.")],
                           "closing": [reply("Bye.")]})
    runner = Runner(team, model=model, store=store)
    state = await runner.get_session("d")
    assert state is not None and state.pending is not None
    caller = state.pending.caller
    assert caller is not None and (caller.agent, caller.delegation) == ("desk", 1)
    planned = caller.transfer_record()
    assert planned is not None and (planned[0], planned[1].target) == (2, "closing")
    assert [m.text for m in state.pending.delegate_messages()] == ["", "A-1: paid 30"]

    result = await runner.approve("d", "b1")

    assert result.status is RunStatus.COMPLETED
    assert (result.agent, result.output) == ("closing", "Bye.")
    assert ran == ["refund A-1"]  # the lookups ran in the previous version's turn
    billing = [r for r in model.requests if r.agent == "billing"][-1]
    assert [m.text for m in billing.messages][-2:] == ["Refunding.", "refunded 30.0 on A-1"]
    state = await runner.get_session("d")
    assert state is not None and state.pending is None and state.active_agent == "closing"
    assert ("d2", "Refunded 30 on A-1.", False) in _results(state)


async def test_a_plain_dict_assigned_as_pending_is_stored_typed(backend: Backend) -> None:
    data = {**PREVIOUS["main"], "pending": None, "status": "idle"}
    store = backend.open()
    await store.import_session(data)
    async with store.lock("m"):
        state = await store.load("m")
        assert state is not None
        since = state.checkpoint()
        state.pending = PREVIOUS["main"]["pending"]  # type: ignore[assignment]
        state.status = "waiting_for_approval"  # type: ignore[assignment]
        await store.commit(state, since)
    assert isinstance(state.pending, PendingApproval)  # typed where the store wrote it
    runner = Runner(Team([Agent("billing", tools=[refund, lookup])]),
                    model=ScriptedModel([reply("Done.")]), store=backend.open())
    assert (await runner.approve("m", "c3")).output == "Done."
    assert ran == ["lookup A-1", "refund B-2"]
