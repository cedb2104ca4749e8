"""Talking to a team through a real server: sessions, turns as JSON and as SSE, the
session and its transcript, agent picks, queued messages."""

from __future__ import annotations

import concurrent.futures

from .conftest import Served, bearer, sse_events, terminal


def test_a_turn_with_a_handoff_answers_with_the_agent_that_spoke(served: Served) -> None:
    sid, token = served.session()
    r = served.say(sid, token, "I was charged twice on my invoice")
    assert r.status_code == 200, r.text
    result = r.json()
    assert result["agent"] == "billing" and result["status"] == "completed"
    assert result["active_agent"]["display_name"] == "Billing"
    assert [(h["source"], h["target"], h["accepted"]) for h in result["handoffs"]] == [
        ("triage", "billing", True)]
    session = served.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).json()
    assert session["active_agent"]["name"] == "billing" and session["turn"] == 1
    assert "token_sha256" not in session["metadata"]
    transcript = served.client.get(f"/v1/sessions/{sid}/transcript",
                                   headers=bearer(token)).json()
    first = transcript["messages"][0]
    assert (first["kind"], first["agent"]) == ("user", "triage")
    assert transcript["messages"][-1]["agent"] == "billing"
    assert transcript["handoffs"][0]["target"] == "billing"


def test_a_streamed_turn_sends_numbered_events_and_ends_with_the_terminal_one(
        served: Served) -> None:
    sid, token = served.session()
    with served.client.stream("POST", f"/v1/sessions/{sid}/messages",
                              json={"text": "I was charged twice"},
                              headers={**bearer(token), "Accept": "text/event-stream"}) as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        events = sse_events(r, terminal)
    types = [e["type"] for e in events]
    assert types[0] == "run_started" and types[-1] == "run_completed"
    assert types.index("agent_handoff") < types.index("agent_changed")
    changed = next(e for e in events if e["type"] == "agent_changed")
    assert (changed["previous"], changed["agent"]) == ("triage", "billing")
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert [e["_id"] for e in events] == [str(i) for i in range(len(events))]


def test_the_user_picks_an_agent_and_refusals_carry_the_policy_code(served: Served) -> None:
    sid, token = served.session()
    ok = served.client.post(f"/v1/sessions/{sid}/agent", json={"agent": "technical"},
                            headers=bearer(token))
    assert ok.status_code == 200 and ok.json()["active_agent"]["name"] == "technical"
    for agent, status, code in [("policy", 403, "not_user_selectable"),
                                ("nobody", 404, "unknown_target")]:
        r = served.client.post(f"/v1/sessions/{sid}/agent", json={"agent": agent},
                               headers=bearer(token))
        assert (r.status_code, r.json()["error"]["code"]) == (status, code)
    r = served.say(sid, token, "my dock keeps disconnecting")
    assert r.json()["agent"] == "technical"


def test_concurrent_messages_to_one_session_queue_and_none_is_lost(served: Served) -> None:
    sid, token = served.session()
    texts = [f"question number {i}" for i in range(8)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda t: served.say(sid, token, t), texts))
    assert all(r.status_code == 200 for r in results)
    assert sorted(r.json()["turn"] for r in results) == list(range(1, 9))
    transcript = served.client.get(f"/v1/sessions/{sid}/transcript",
                                   headers=bearer(token)).json()
    users = [m["text"] for m in transcript["messages"] if m["kind"] == "user"]
    assert sorted(users) == sorted(texts)


def test_respond_async_answers_202_and_the_events_follow(served: Served) -> None:
    sid, token = served.session()
    r = served.client.post(f"/v1/sessions/{sid}/messages", json={"text": "hello"},
                           headers={**bearer(token), "Prefer": "respond-async"})
    assert r.status_code == 202, r.text
    accepted = r.json()
    assert accepted["turn"] == 1 and r.headers["location"] == accepted["events"]
    with served.client.stream("GET", accepted["events"], headers=bearer(token)) as s:
        events = sse_events(s, terminal)
    assert events[0]["seq"] == accepted["first_seq"] and events[0]["type"] == "run_started"


def test_a_client_chosen_session_id_needs_the_operator_key(served: Served) -> None:
    from .conftest import OPERATOR_KEY

    r = served.client.post("/v1/sessions", json={"id": "sms:+15550100"})
    assert (r.status_code, r.json()["error"]["code"]) == (403, "forbidden")
    r = served.client.post("/v1/sessions", json={"id": "sms:+15550100", "channel": "sms"},
                           headers=bearer(OPERATOR_KEY))
    assert r.status_code == 201 and r.json()["id"] == "sms:+15550100"
    again = served.client.post("/v1/sessions", json={"id": "sms:+15550100"},
                               headers=bearer(OPERATOR_KEY))
    assert (again.status_code, again.json()["error"]["code"]) == (409, "session_exists")
    token = r.json()["token"]
    assert served.say("sms:+15550100", token, "hi").status_code == 200


def test_deleting_a_session_forgets_it(served: Served) -> None:
    from .conftest import OPERATOR_KEY

    sid, token = served.session()
    served.say(sid, token, "hi")
    assert served.client.delete(f"/v1/sessions/{sid}", headers=bearer(token)).status_code \
        == 204
    r = served.client.get(f"/v1/sessions/{sid}", headers=bearer(OPERATOR_KEY))
    assert (r.status_code, r.json()["error"]["code"]) == (404, "session_not_found")


def test_the_team_health_and_config(served: Served) -> None:
    team = served.client.get("/v1/team").json()
    by_name = {a["name"]: a for a in team["agents"]}
    assert by_name["operator"]["human"] and not by_name["policy"]["user_selectable"]
    kinds = {(r["source"], r["target"]): r["kind"] for r in team["routes"]}
    assert kinds[("billing", "policy")] == "delegation"
    assert kinds[("technical", "billing")] == "next_turn"
    assert kinds[("triage", "billing")] == "transfer"
    assert team["mermaid"].startswith(("flowchart", "graph"))
    assert served.client.get("/healthz").json() == {"ok": True}
    assert served.client.get("/readyz").json()["ok"] is True
    config = served.client.get("/v1/config").json()
    assert config["operator_routes"] is True and config["entry"] == "triage"
