"""`SessionStatus`: a session's status is a typed value in Python and the same plain
string as before in JSON and in every store."""

from __future__ import annotations

import json

from handoffs import Agent, HumanAgent, Runner, SessionState, SessionStatus, Team
from handoffs.testing import ScriptedModel, transfer

from .conftest import Backend

STORED_BEFORE = {  # a session as a handoffs without SessionStatus exported it
    "schema": 1, "id": "old-1", "active_agent": "operator", "shared": {}, "channel": None,
    "version": 3, "turn": 1, "view": {}, "status": "waiting_for_human",
    "created_at": 1.0, "updated_at": 2.0, "metadata": {},
    "messages": [{"kind": "user", "text": "a person please", "agent": "bot"}], "handoffs": [],
}


def test_a_status_is_its_string_and_compares_equal_to_it() -> None:
    assert SessionStatus("waiting_for_approval") is SessionStatus.WAITING_FOR_APPROVAL
    assert SessionStatus.IDLE == "idle" and f"{SessionStatus.RUNNING}" == "running"
    assert SessionState("s").status is SessionStatus.IDLE
    assert json.dumps({"status": SessionStatus.INTERRUPTED}) == '{"status": "interrupted"}'


def test_a_session_exported_before_reads_back_typed_and_writes_the_same_json() -> None:
    state = SessionState.from_dict(STORED_BEFORE)

    assert state.status is SessionStatus.WAITING_FOR_HUMAN
    out = state.to_dict()
    assert type(out["status"]) is str and out["status"] == "waiting_for_human"
    assert json.loads(state.to_json())["status"] == "waiting_for_human"


async def test_every_store_keeps_the_status_an_older_export_had(backend: Backend) -> None:
    store = backend.open()
    await store.import_session(STORED_BEFORE)

    loaded = await store.load("old-1")
    exported = await store.export_session("old-1")

    assert loaded is not None and loaded.status is SessionStatus.WAITING_FOR_HUMAN
    assert exported is not None and type(exported["status"]) is str
    assert exported["status"] == "waiting_for_human"
    listed = await store.list_sessions(status="waiting_for_human")
    assert [s.id for s in listed] == ["old-1"]


async def test_a_turn_handed_to_a_person_leaves_the_session_waiting_for_human(
        backend: Backend) -> None:
    team = Team([Agent("bot", handoffs=["operator"]), HumanAgent("operator")])
    runner = Runner(team, model=ScriptedModel([transfer("operator", reason="asks")]),
                    store=backend.open())

    await runner.run("s1", "a person please")

    state = await runner.get_session("s1")
    assert state is not None and state.status is SessionStatus.WAITING_FOR_HUMAN
    exported = await runner.store.export_session("s1")
    assert exported is not None and json.dumps(exported["status"]) == '"waiting_for_human"'
