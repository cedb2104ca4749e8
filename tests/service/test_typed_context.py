"""A team's typed session context over real HTTP: a session's own token sees the public
fields the team declares (`Team(context_public=...)`) in `GET /v1/sessions/{id}` and in
`context_changed` events, the operator key sees all of it (and `/state`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from handoffs import Agent, RunContext, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply

from .conftest import OPERATOR_KEY, Served, bearer, serving, sse_events, terminal


class Airline(BaseModel):
    passenger_name: str | None = None
    account_number: str | None = None
    seat_number: str | None = None
    flight_number: str | None = None


@tool
def verify(ctx: RunContext[Airline], account: str) -> str:
    """Verify the customer's account."""
    ctx.context.account_number = account
    return "verified"


@tool
def change_seat(ctx: RunContext[Airline], seat: str) -> str:
    """Move the passenger to another seat."""
    ctx.context.seat_number = seat
    return f"Seat {seat}."


def _runner() -> Runner:
    team = Team([Agent("seats", tools=[verify, change_seat])], context_type=Airline,
                context_public=("flight_number", "seat_number"))
    return Runner(team, model=ScriptedModel([
        call("verify", account="ACC-991"), call("change_seat", seat="12A"),
        reply("Done.")]))


@pytest.fixture
def served() -> Iterator[Served]:
    with serving(_runner) as s:
        yield s


OPERATOR = bearer(OPERATOR_KEY)


def _turn(served: Served, sid: str, token: str, text: str) -> list[dict[str, Any]]:
    with served.client.stream("POST", f"/v1/sessions/{sid}/messages", json={"text": text},
                              headers={**bearer(token), "Accept": "text/event-stream"}) as r:
        assert r.status_code == 200, r.read()
        return sse_events(r, terminal)


def test_a_customer_sees_the_public_fields_and_the_operator_all_of_them(
        served: Served) -> None:
    r = served.client.post("/v1/sessions", json={"context": {"passenger_name": "Ada",
                                                             "flight_number": "FLT-1"}},
                           headers=OPERATOR)
    assert r.status_code == 201, r.text
    sid, token = r.json()["id"], r.json()["token"]
    customer = served.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).json()
    assert customer["context"] == {"flight_number": "FLT-1", "seat_number": None}

    events = _turn(served, sid, token, "verify me and move me to 12A")
    changed = [e for e in events if e["type"] == "context_changed"]
    # the account's event is left out, the seat's goes (cut to the public fields)
    assert [e["changed"] for e in changed] == [{"seat_number": "12A"}]
    assert "account_number" not in str(events)

    customer = served.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).json()
    assert customer["context"] == {"flight_number": "FLT-1", "seat_number": "12A"}
    operator = served.client.get(f"/v1/sessions/{sid}", headers=OPERATOR).json()
    assert operator["context"] == {"passenger_name": "Ada", "account_number": "ACC-991",
                                   "seat_number": "12A", "flight_number": "FLT-1"}
    state = served.client.get(f"/v1/sessions/{sid}/state", headers=OPERATOR).json()
    assert state["context"] == operator["context"]


def test_an_event_that_changed_only_private_fields_never_reaches_a_customer() -> None:
    team = Team([Agent("seats", tools=[verify])], context_type=Airline,
                context_public=("seat_number",))
    with serving(lambda: Runner(team, model=ScriptedModel([
            call("verify", account="ACC-1"), reply("ok")]))) as served:
        sid, token = served.session()
        mine = _turn(served, sid, token, "verify me")
        assert [e["type"] for e in mine if e["type"] == "context_changed"] == []
        with served.client.stream("GET", f"/v1/sessions/{sid}/events",
                                  headers=OPERATOR) as r:
            stored = sse_events(r, terminal)
        assert [e["changed"] for e in stored if e["type"] == "context_changed"] == [
            {"account_number": "ACC-1"}]


def test_a_customer_cannot_choose_the_context(served: Served) -> None:
    refused = served.client.post("/v1/sessions", json={"context": {"account_number": "X"}})
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    sid, token = served.session()
    r = served.client.post(f"/v1/sessions/{sid}/messages", headers=bearer(token),
                           json={"text": "hi", "context": {"account_number": "X"}})
    assert r.status_code == 403, r.text
    operator = served.client.get(f"/v1/sessions/{sid}", headers=OPERATOR).json()
    assert operator["context"]["account_number"] is None


def test_the_operator_stream_carries_every_changed_field(served: Served) -> None:
    sid, _ = served.session()
    events = _turn(served, sid, OPERATOR_KEY, "verify me and move me to 12A")
    assert [e["changed"] for e in events if e["type"] == "context_changed"] == [
        {"account_number": "ACC-991"}, {"seat_number": "12A"}]


def test_a_callable_projection_masks_what_a_customer_sees() -> None:
    def masked(fields: Any) -> dict[str, Any]:
        out = {k: v for k, v in fields.items() if k in ("seat_number", "account_number")}
        if out.get("account_number"):
            out["account_number"] = "****" + out["account_number"][-2:]
        return out

    team = Team([Agent("seats", tools=[verify, change_seat])], context_type=Airline,
                context_public=masked)
    with serving(lambda: Runner(team, model=ScriptedModel([
            call("verify", account="ACC-991"), call("change_seat", seat="3A"),
            reply("ok")]))) as served:
        sid, token = served.session()
        mine = _turn(served, sid, token, "verify, then seat 3A")
        assert [e["changed"] for e in mine if e["type"] == "context_changed"] == [
            {"account_number": "****91"}, {"seat_number": "3A"}]
        shown = served.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).json()
        assert shown["context"] == {"account_number": "****91", "seat_number": "3A"}
