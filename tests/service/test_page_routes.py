"""The routes the page's newer parts stand on (issue 43), through a real server: the
operator's queue (oldest first, why and how long, no forks), a fork a chat page can
continue (a token of its own) and a fork at a model call with another answer, a
recorded model call made again with edits (on the official OpenAI SDK against a local
stub), and the team's suggested prompts."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from handoffs import Runner, Team
from handoffs.errors import TeamError
from handoffs.examples.support import SUGGESTED_PROMPTS, build_team, rule_model
from handoffs.telemetry.config import Telemetry
from wire.openai_api import OpenAIWire, completion
from wire.server import FakeServer

from .conftest import OPERATOR_KEY, Served, bearer, serving, sse_events, terminal

OP = bearer(OPERATOR_KEY)


@pytest.fixture
def openai_stub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    server = FakeServer(OpenAIWire()).start()
    monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    yield server
    server.stop()


@pytest.fixture
def inspected() -> Iterator[Served]:
    with serving(lambda: Runner(build_team(), model=rule_model(), inspect=True,
                                telemetry=Telemetry(capture_content=True))) as s:
        yield s


def _escalated(served: Served) -> tuple[str, str]:
    sid, token = served.session()
    assert served.client.post(f"/v1/sessions/{sid}/agent", json={"agent": "technical"},
                              headers=bearer(token)).status_code == 200
    assert served.say(sid, token, "Can a person look at my account?").json()["status"] == \
        "waiting_for_human"
    return sid, token


def test_the_queue_lists_waiting_customers_oldest_first_with_why_and_not_forks(
        inspected: Served) -> None:
    first, token = _escalated(inspected)
    time.sleep(0.05)
    second, _ = _escalated(inspected)
    assert inspected.say(first, token, "Hello, are you there?").json()["turn"] == 2
    # A fork of the first before its second turn waits for a human too; it is the
    # operator's copy, not a customer.
    fork = inspected.client.post(f"/v1/sessions/{first}/fork", json={"turn": 2}, headers=OP)
    assert fork.status_code == 201, fork.text
    assert fork.json()["status"] == "waiting_for_human"
    listed = inspected.client.get("/v1/sessions", params={"status": "waiting_for_human"},
                                  headers=OP).json()["sessions"]
    assert fork.json()["id"] in [s["id"] for s in listed]  # the listing of every session

    q = inspected.client.get("/v1/queue", headers=OP)

    assert q.status_code == 200, q.text
    body = q.json()
    assert [s["id"] for s in body["sessions"]] == [first, second] and body["count"] == 2
    top = body["sessions"][0]
    assert top["reason"] == "escalation" and top["agent"] == "operator"
    assert top["source"] == "technical" and "asks for a person" in top["explanation"]
    assert top["waited"] >= body["sessions"][1]["waited"] >= 0
    assert inspected.client.get("/v1/queue").status_code == 401


def test_a_fork_with_a_token_is_opened_by_that_token_and_deleted_by_it(
        inspected: Served) -> None:
    sid, token = inspected.session()
    inspected.say(sid, token, "I was charged twice for A-1001")
    made = inspected.client.post(f"/v1/sessions/{sid}/fork", json={"turn": 2, "token": True},
                                 headers=OP)
    assert made.status_code == 201, made.text
    fork = made.json()
    own = bearer(fork["token"])
    assert inspected.client.get(f"/v1/sessions/{fork['id']}", headers=bearer(token)
                                ).status_code in (401, 403)
    opened = inspected.client.get(f"/v1/sessions/{fork['id']}", headers=own)
    assert opened.status_code == 200
    assert opened.json()["metadata"]["forked_from"]["session"] == sid
    assert inspected.say(fork["id"], fork["token"], "thanks").status_code == 200
    assert inspected.client.delete(f"/v1/sessions/{fork['id']}", headers=own).status_code == 204
    assert inspected.client.get(f"/v1/sessions/{fork['id']}", headers=OP).status_code == 404


def _events(served: Served, sid: str, turns: int) -> list[dict[str, Any]]:
    """The session's stored events (read by the operator) until `turns` turns ended."""
    ended = 0

    def last(event: dict[str, Any]) -> bool:
        nonlocal ended
        ended += terminal(event)
        return ended >= turns

    with served.client.stream("GET", f"/v1/sessions/{sid}/events", headers=OP,
                              params={"after": -1}) as r:
        return sse_events(r, last)


def test_a_recorded_call_made_again_with_edits_reaches_the_named_model_and_stores_nothing(
        inspected: Served, openai_stub: FakeServer) -> None:
    sid, token = inspected.session()
    inspected.say(sid, token, "I was charged twice for A-1001")
    before = inspected.client.get(f"/v1/sessions/{sid}/export", headers=OP).json()
    openai_stub.add(completion("I can help with that refund myself."))

    r = inspected.client.post(f"/v1/sessions/{sid}/rerun", headers=OP, json={
        "turn": 1, "call": 1, "system": "You are a terse assistant.", "window": 1,
        "tools": ["transfer_to_technical"], "model": "openai:gpt-4.1-mini"})

    assert r.status_code == 200, r.text
    body = r.json()
    assert body["agent"] == "triage" and body["model"] == "openai:gpt-4.1-mini"
    assert body["response"]["text"] == "I can help with that refund myself."
    assert body["recorded"]["tool_calls"][0]["name"] == "transfer_to_billing"
    sent = openai_stub.bodies[-1]
    assert sent["messages"][0] == {"role": "system", "content": "You are a terse assistant."}
    assert sent["messages"][1]["content"] == "I was charged twice for A-1001"
    assert len(sent["messages"]) == 2
    assert [t["function"]["name"] for t in sent["tools"]] == ["transfer_to_technical"]
    after = inspected.client.get(f"/v1/sessions/{sid}/export", headers=OP).json()
    assert after == before  # one model call; nothing of the session changed
    # The agent's own model, when none is named: the offline rules hand off again.
    own = inspected.client.post(f"/v1/sessions/{sid}/rerun", headers=OP,
                                json={"turn": 1, "call": 1}).json()
    assert own["response"]["tool_calls"][0]["name"] == "transfer_to_billing"
    missing = inspected.client.post(f"/v1/sessions/{sid}/rerun", headers=OP,
                                    json={"turn": 7, "call": 1})
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "call_not_recorded"
    bad = inspected.client.post(f"/v1/sessions/{sid}/rerun", headers=OP,
                                json={"turn": 1, "call": 1, "tools": ["rm_rf"]})
    assert bad.status_code == 400 and "did not offer 'rm_rf'" in bad.json()["error"]["message"]
    assert inspected.client.post(f"/v1/sessions/{sid}/rerun", headers=bearer(token),
                                 json={"turn": 1, "call": 1}).status_code == 403


def test_a_fork_at_a_call_continues_with_the_chosen_answer_and_goes_on(
        inspected: Served) -> None:
    sid, token = inspected.session()
    inspected.say(sid, token, "hello")
    inspected.say(sid, token, "I was charged twice for A-1001")
    call = next(e for e in _events(inspected, sid, 2)
                if e["type"] == "model_request" and e["turn"] == 2)

    made = inspected.client.post(f"/v1/sessions/{sid}/fork", headers=OP, json={
        "turn": 2, "call": call["call"], "answer": "Let me check that order for you.",
        "token": True})

    assert made.status_code == 201, made.text
    fork = made.json()
    assert fork["turn"] == 2 and fork["active_agent"] == "triage"
    assert fork["metadata"]["forked_from"] == {**fork["metadata"]["forked_from"],
                                               "session": sid, "turn": 2,
                                               "call": call["call"]}
    t = inspected.client.get(f"/v1/sessions/{fork['id']}/transcript",
                             headers=bearer(fork["token"])).json()
    assert [(m["kind"], m["text"]) for m in t["messages"][-2:]] == [
        ("user", "I was charged twice for A-1001"),
        ("assistant", "Let me check that order for you.")]
    assert t["handoffs"] == []  # the original's handoff to billing came after the call
    events = _events(inspected, fork["id"], 2)
    assert [e["type"] for e in events[-2:]] == ["message", "run_completed"]
    assert events[-2]["text"] == "Let me check that order for you."
    # The fork goes on as any session: its next message is turn 3.
    nxt = inspected.say(fork["id"], fork["token"], "I was charged twice for A-1001")
    assert nxt.json()["turn"] == 3 and nxt.json()["agent"] == "refunds", nxt.text
    state = inspected.client.get(f"/v1/sessions/{sid}/state", headers=OP).json()
    assert state["metadata"]["forks"][-1]["call"] == call["call"]
    half = inspected.client.post(f"/v1/sessions/{sid}/fork", headers=OP,
                                 json={"turn": 2, "call": call["call"]})
    assert half.status_code == 400 and half.json()["error"]["code"] == "invalid_argument"


def test_a_retried_fork_at_a_call_returns_the_fork_it_made(inspected: Served) -> None:
    sid, token = inspected.session()
    inspected.say(sid, token, "I was charged twice for A-1001")
    call = next(e for e in _events(inspected, sid, 1) if e["type"] == "model_request")
    ask = {"turn": 1, "call": call["call"], "answer": "Let me check.", "token": True}
    headers = {**OP, "Idempotency-Key": "fa-1"}

    made = [inspected.client.post(f"/v1/sessions/{sid}/fork", headers=headers, json=ask)
            for _ in range(2)]

    assert [r.status_code for r in made] == [201, 201], made[1].text
    assert made[0].json()["id"] == made[1].json()["id"]
    fork = made[1].json()
    t = inspected.client.get(f"/v1/sessions/{fork['id']}/transcript",
                             headers=bearer(fork["token"])).json()
    assert [m["text"] for m in t["messages"]].count("Let me check.") == 1
    state = inspected.client.get(f"/v1/sessions/{sid}/state", headers=OP).json()
    assert len(state["metadata"]["forks"]) == 1


def test_the_team_declares_its_suggested_prompts(served: Served) -> None:
    assert served.client.get("/v1/team").json()["suggested_prompts"] == \
        list(SUGGESTED_PROMPTS)
    assert Team(build_team().agents).suggested_prompts == ()
    with pytest.raises(TeamError, match="a list of texts"):
        Team(build_team().agents, suggested_prompts="hi")  # type: ignore[arg-type]
    with pytest.raises(TeamError, match="non-empty"):
        Team(build_team().agents, suggested_prompts=["hi", " "])


def test_a_rewound_fork_is_still_opened_by_its_own_token_and_never_by_the_original(
        inspected: Served) -> None:
    sid, token = inspected.session()
    inspected.say(sid, token, "hello")
    inspected.say(sid, token, "I was charged twice for A-1001")
    made = inspected.client.post(f"/v1/sessions/{sid}/fork", json={"turn": 3, "token": True},
                                 headers=OP)
    assert made.status_code == 201, made.text
    fork = made.json()
    # The fork's turn marks before turn 3 are copies of the original's: rewinding to one
    # of them must not bring back the original customer's token.
    rewound = inspected.client.post(f"/v1/sessions/{fork['id']}/rewind", json={"turn": 2},
                                    headers=OP)
    assert rewound.status_code == 200, rewound.text

    assert inspected.client.get(f"/v1/sessions/{fork['id']}", headers=bearer(token)
                                ).status_code in (401, 403)
    assert inspected.client.get(f"/v1/sessions/{fork['id']}", headers=bearer(fork["token"])
                                ).status_code == 200
