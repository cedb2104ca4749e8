"""`Idempotency-Key` on every route that changes a session, through real uvicorn: a
retry stores nothing and gets the first request's answer."""

from __future__ import annotations

from handoffs import Agent, HumanAgent, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer

from .conftest import OPERATOR_KEY, bearer, serving

OP = bearer(OPERATOR_KEY)
runs: list[str] = []


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    runs.append(order_id)
    return f"refunded {order_id}"


def keyed_runner() -> Runner:
    team = Team([Agent("triage", handoffs=["billing", "operator"]),
                 Agent("billing", tools=[refund], handoffs=["triage"]),
                 HumanAgent("operator", handoffs=["triage"])])
    model = ScriptedModel({"triage": [reply("hello"), transfer("operator")],
                           "billing": [call("refund", order_id="A-1"), reply("refunded")]})
    return Runner(team, model=model)


def test_a_retried_message_pick_decision_and_operator_reply_each_happen_once() -> None:
    runs.clear()
    with serving(keyed_runner) as served:
        sid, token = served.session()
        user = bearer(token)
        url = f"/v1/sessions/{sid}"

        said = [served.client.post(f"{url}/messages", json={"text": "hi"},
                                   headers={**user, "Idempotency-Key": "m-1"})
                for _ in range(2)]
        assert said[0].json() == said[1].json()

        picks = [served.client.post(f"{url}/agent", json={"agent": "billing"},
                                    headers={**user, "Idempotency-Key": "p-1"})
                 for _ in range(2)]
        assert picks[0].json()["record"]["id"] == picks[1].json()["record"]["id"]

        paused = served.client.post(f"{url}/messages", json={"text": "refund A-1"},
                                    headers={**user, "Idempotency-Key": "m-2"}).json()
        assert paused["status"] == "waiting_for_approval"
        [waiting] = served.client.get(f"{url}/approvals", headers=OP).json()["approvals"]
        decided = [served.client.post(f"{url}/approvals/{waiting['call_id']}",
                                      json={"approved": True},
                                      headers={**OP, "Idempotency-Key": "d-1"})
                   for _ in range(2)]
        assert [d.status_code for d in decided] == [200, 200]
        assert decided[0].json()["output"] == decided[1].json()["output"] == "refunded"
        assert runs == ["A-1"]

        reused = served.client.post(f"{url}/messages", json={"text": "another"},
                                    headers={**user, "Idempotency-Key": "m-1"})
        assert (reused.status_code, reused.json()["error"]["code"]) == \
            (409, "idempotency_key_reused")

        transcript = served.client.get(f"{url}/transcript", headers=user).json()
        users = [m["text"] for m in transcript["messages"] if m["kind"] == "user"]
        assert users == ["hi", "refund A-1"]
        assert len(transcript["handoffs"]) == 1  # the pick, once


def test_a_retried_operator_reply_is_stored_once() -> None:
    with serving(keyed_runner) as served:
        sid, token = served.session()
        url = f"/v1/sessions/{sid}"
        served.say(sid, token, "hi")
        served.say(sid, token, "a person please")
        replies = [served.client.post(f"{url}/human", json={"text": "Done, refunded."},
                                      headers={**OP, "Idempotency-Key": "h-1"})
                   for _ in range(2)]
        assert [r.status_code for r in replies] == [200, 200]
        assert replies[0].json()["status"] == replies[1].json()["status"]
        transcript = served.client.get(f"{url}/transcript", headers=bearer(token)).json()
        assert [m["text"] for m in transcript["messages"]].count("Done, refunded.") == 1
