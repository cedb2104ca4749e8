"""The operator's routes: sessions waiting for a human, the human's reply and hand-back,
export and import."""

from __future__ import annotations

from .conftest import OPERATOR_KEY, Served, bearer

OP = bearer(OPERATOR_KEY)


def _escalate(served: Served) -> tuple[str, str]:
    sid, token = served.session()
    served.client.post(f"/v1/sessions/{sid}/agent", json={"agent": "technical"},
                       headers=bearer(token))
    r = served.say(sid, token, "Can a human operator look at it?")
    assert r.json()["status"] == "waiting_for_human", r.text
    return sid, token


def test_an_operator_finds_the_waiting_session_and_hands_it_back(served: Served) -> None:
    sid, token = _escalate(served)
    served.session()  # another one, not waiting
    listing = served.client.get("/v1/sessions?status=waiting_for_human", headers=OP).json()
    assert [s["id"] for s in listing["sessions"]] == [sid]
    r = served.client.post(f"/v1/sessions/{sid}/human",
                           json={"text": "Sam here, fixed.", "handoff_to": "technical"},
                           headers=OP)
    assert r.status_code == 200, r.text
    assert r.json()["active_agent"]["name"] == "technical"
    refused = served.client.post(f"/v1/sessions/{sid}/human", json={"text": "again"},
                                 headers=OP)
    assert (refused.status_code, refused.json()["error"]["code"]) == \
        (409, "not_waiting_for_human")
    transcript = served.client.get(f"/v1/sessions/{sid}/transcript",
                                   headers=bearer(token)).json()
    assert any(m["agent"] == "operator" and m["text"] == "Sam here, fixed."
               for m in transcript["messages"])


def test_listing_pages_with_a_cursor(served: Served) -> None:
    for _ in range(5):
        served.session()
    first = served.client.get("/v1/sessions?limit=2", headers=OP).json()
    second = served.client.get(f"/v1/sessions?limit=2&cursor={first['next_cursor']}",
                               headers=OP).json()
    ids = [s["id"] for s in first["sessions"] + second["sessions"]]
    assert len(set(ids)) == 4
    bad = served.client.get("/v1/sessions?cursor=zz", headers=OP)
    assert (bad.status_code, bad.json()["error"]["code"]) == (400, "invalid_argument")


def test_export_then_import_keeps_the_session_and_its_token(served: Served) -> None:
    sid, token = served.session()
    served.say(sid, token, "I was charged twice")
    export = served.client.get(f"/v1/sessions/{sid}/export", headers=OP).json()
    assert served.client.delete(f"/v1/sessions/{sid}", headers=OP).status_code == 204
    r = served.client.post("/v1/sessions/import", json=export, headers=OP)
    assert r.status_code == 201, r.text
    again = served.client.post("/v1/sessions/import", json=export, headers=OP)
    assert (again.status_code, again.json()["error"]["code"]) == (409, "session_exists")
    session = served.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).json()
    assert session["active_agent"]["name"] == "billing"
    junk = served.client.post("/v1/sessions/import", json={"id": "x", "messages": 5},
                              headers=OP)
    assert junk.status_code in (400, 422) and "code" in junk.json()["error"]
