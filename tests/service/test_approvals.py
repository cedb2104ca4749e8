"""Approving and rejecting tool calls over HTTP (operator key), through real uvicorn."""

from __future__ import annotations

from handoffs import Agent, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply

from .conftest import OPERATOR_KEY, bearer, serving

OP = bearer(OPERATOR_KEY)


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    return f"refunded {order_id}"


def approval_runner() -> Runner:
    model = ScriptedModel([call("refund", order_id="A-1"), reply("A-1 is refunded."),
                           call("refund", order_id="A-2"), reply("Not this time.")])
    return Runner(Team([Agent("billing", tools=[refund])]), model=model)


def test_an_operator_sees_the_waiting_call_and_approves_it() -> None:
    with serving(approval_runner) as served:
        sid, token = served.session()
        r = served.say(sid, token, "refund A-1")
        assert r.json()["status"] == "waiting_for_approval", r.text

        session = served.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).json()
        assert session["status"] == "waiting_for_approval"
        [waiting] = session["approvals"]
        assert (waiting["tool"], waiting["agent"]) == ("refund", "billing")
        listing = served.client.get("/v1/sessions?status=waiting_for_approval",
                                    headers=OP).json()
        assert [s["id"] for s in listing["sessions"]] == [sid]
        busy = served.say(sid, token, "hello?")
        assert (busy.status_code, busy.json()["error"]["code"]) == \
            (409, "waiting_for_approval")
        anonymous = served.client.post(f"/v1/sessions/{sid}/approvals/{waiting['call_id']}",
                                       json={"approved": True})
        assert anonymous.status_code == 401

        done = served.client.post(f"/v1/sessions/{sid}/approvals/{waiting['call_id']}",
                                  json={"approved": True}, headers=OP)
        assert done.status_code == 200, done.text
        assert (done.json()["status"], done.json()["output"]) == \
            ("completed", "A-1 is refunded.")
        again = served.client.post(f"/v1/sessions/{sid}/approvals/{waiting['call_id']}",
                                   json={"approved": True}, headers=OP)
        assert (again.status_code, again.json()["error"]["code"]) == \
            (409, "no_pending_approval")

        served.say(sid, token, "refund A-2")
        [second] = served.client.get(f"/v1/sessions/{sid}/approvals",
                                     headers=OP).json()["approvals"]
        no = served.client.post(f"/v1/sessions/{sid}/approvals/{second['call_id']}",
                                json={"approved": False, "reason": "fraud check"},
                                headers=OP)
        assert no.json()["output"] == "Not this time."
        transcript = served.client.get(f"/v1/sessions/{sid}/transcript",
                                       headers=bearer(token)).json()["messages"]
        assert any("fraud check" in m.get("text", "") and m.get("is_error")
                   for m in transcript)
        bad = served.client.post(f"/v1/sessions/{sid}/approvals/x", json={"approve": 1},
                                 headers=OP)
        assert (bad.status_code, bad.json()["error"]["code"]) == (422, "validation_error")
