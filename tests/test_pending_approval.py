"""`SessionState.pending` as a typed value: `core.pending.PendingApproval`, whose stored
form is the dict earlier versions kept, key for key, and which still reads as it."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from handoffs.core.pending import CallDecision, PendingApproval, pending_of
from handoffs.core.session import SessionState

PREVIOUS: dict[str, Any] = json.loads(
    (Path(__file__).parent / "stores" / "previous_pending.json").read_text())


def _escalated() -> dict[str, Any]:
    """The delegated shape with a caller whose tool escalated a failure."""
    d = copy.deepcopy(PREVIOUS["delegated"]["pending"])
    d["caller"]["escalate"] = ["tool_error", "Tool 'lookup' failed: down", "desk"]
    return d


SHAPES = {**{k: v["pending"] for k, v in PREVIOUS.items()}, "escalated": _escalated()}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_the_stored_form_reads_back_key_for_key(name: str) -> None:
    stored = SHAPES[name]
    pending = PendingApproval.from_dict(stored)
    assert json.dumps(pending.to_dict()) == json.dumps(stored)
    state = SessionState.from_dict({**PREVIOUS[name if name in PREVIOUS else "delegated"],
                                    "pending": stored})
    assert json.dumps(state.to_dict()["pending"]) == json.dumps(stored)
    assert json.dumps(state.snapshot().to_dict()["pending"]) == json.dumps(stored)


def test_its_fields_are_typed() -> None:
    pending = PendingApproval.from_dict(SHAPES["escalated"])
    assert (pending.agent, pending.waiting, pending.record) == (
        "billing", ("b1",), "feedfacecafe000001")
    call = pending.call("b1")
    assert call is not None and (call.name, json.loads(call.arguments)) == (
        "refund", {"order_id": "A-1", "amount": 30})
    caller = pending.caller
    assert caller is not None and caller.escalate == (
        "tool_error", "Tool 'lookup' failed: down", "desk")
    results = caller.tool_results()
    assert [r.text if r else None for r in results] == ["A-1: paid 30", None, None]
    assert pending.undecided() == ["b1"]
    decided = pending.decided("b1", CallDecision(True, "fine"))
    assert decided.undecided() == [] and pending.undecided() == ["b1"]  # a new value
    assert decided.to_dict()["decisions"] == {"b1": {"approved": True, "reason": "fine"}}
    client = PendingApproval.from_dict(SHAPES["client"])
    answered = client.decided("call_1", CallDecision(True, "", "yes", False))
    assert answered.to_dict()["decisions"]["call_1"] == {
        "approved": True, "reason": "", "result": "yes", "is_error": False}


def test_it_reads_as_the_dict_it_was() -> None:
    stored = SHAPES["delegated"]
    pending = PendingApproval.from_dict(stored)
    assert pending["waiting"] == ["b1"] and pending["caller"]["agent"] == "desk"
    assert "caller" in pending and "client" not in pending
    assert pending.get("decisions") == {} and pending.get("client", ()) == ()
    assert pending == stored and dict(pending) == stored
    assert {**pending, "decisions": {}} == stored
    with pytest.raises(KeyError):
        pending["nope"]


def test_a_dict_in_the_stored_form_is_made_typed() -> None:
    stored = SHAPES["main"]
    typed = pending_of(stored)
    assert isinstance(typed, PendingApproval) and typed.to_dict() == stored
    assert pending_of(typed) is typed and pending_of(None) is None
    state = SessionState("s")
    state.pending = stored  # type: ignore[assignment]
    assert state.header()["pending"] == stored and isinstance(state.pending, PendingApproval)
