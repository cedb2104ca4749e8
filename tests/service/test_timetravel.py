"""The operator's fork, rewind and replay routes (issue 31), on memory, SQLite and
PostgreSQL, through a real server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from handoffs import Runner
from handoffs.examples.support import build_team, rule_model
from stores.conftest import PG_DSN, drop_schema, require_pg

from .conftest import OPERATOR_KEY, Served, bearer, serving

OP = bearer(OPERATOR_KEY)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "memory":
        yield "memory://"
    elif request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'sessions.db'}"
    else:
        asyncio.run(require_pg())
        schema = f"handoffs_test_{uuid.uuid4().hex[:12]}"
        yield f"{PG_DSN}?schema={schema}"
        asyncio.run(drop_schema(schema))


@pytest.fixture
def served(store_url: str) -> Iterator[Served]:
    with serving(lambda: Runner(build_team(), model=rule_model(), store=store_url)) as s:
        yield s


def _two_turns(served: Served) -> tuple[str, str]:
    sid, token = served.session()
    for text in ("My invoice is wrong", "my app crashes on login"):
        assert served.say(sid, token, text).status_code == 200
    return sid, token


def test_fork_route_makes_a_linked_copy_for_the_operator_only(served: Served) -> None:
    sid, token = _two_turns(served)

    as_user = served.client.post(f"/v1/sessions/{sid}/fork", json={"turn": 2},
                                 headers=bearer(token))
    forked = served.client.post(f"/v1/sessions/{sid}/fork", json={"turn": 2}, headers=OP)

    assert as_user.status_code == 403
    assert forked.status_code == 201, forked.text
    fork = forked.json()
    assert fork["id"].startswith(f"{sid}-fork-") and fork["turn"] == 1
    assert fork["active_agent"] == "billing"
    assert fork["metadata"]["forked_from"]["session"] == sid
    assert "token_sha256" not in fork["metadata"]
    state = served.client.get(f"/v1/sessions/{sid}/state", headers=OP).json()
    assert [f["session"] for f in state["metadata"]["forks"]] == [fork["id"]]
    bad = served.client.post(f"/v1/sessions/{sid}/fork", json={"turn": 9}, headers=OP)
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid_turn"
    gone = served.client.post("/v1/sessions/nope/fork", json={"turn": 1}, headers=OP)
    assert gone.status_code == 404
    # The fork is the operator's: the customer's token opens the original, not the fork.
    assert served.client.get(f"/v1/sessions/{sid}/transcript",
                             headers=bearer(token)).status_code == 200
    mine = served.client.get(f"/v1/sessions/{fork['id']}/transcript", headers=bearer(token))
    assert mine.status_code in (401, 403, 404), mine.text
    assert served.client.get(f"/v1/sessions/{fork['id']}/transcript",
                             headers=OP).status_code == 200


def test_rewind_route_cuts_the_session_and_it_goes_on_from_there(served: Served) -> None:
    sid, token = _two_turns(served)

    rewound = served.client.post(f"/v1/sessions/{sid}/rewind", json={"turn": 2},
                                 headers=OP)

    assert rewound.status_code == 200, rewound.text
    body = rewound.json()
    assert body["turn"] == 1 and body["active_agent"] == "billing"
    kept = body["metadata"]["rewinds"][-1]["kept_as"]
    assert served.client.get(f"/v1/sessions/{kept}/state", headers=OP).json()["turn"] == 2
    again = served.say(sid, token, "thanks, that's all")
    assert again.status_code == 200 and again.json()["turn"] == 2


def test_replay_route_reports_the_routing_turn_by_turn(served: Served) -> None:
    sid, _ = _two_turns(served)

    replayed = served.client.post(f"/v1/sessions/{sid}/replay", json={"from_turn": 1},
                                  headers=OP)

    assert replayed.status_code == 200, replayed.text
    found = replayed.json()
    assert [t["routing"] for t in found["turns"]] == ["same", "same"]
    assert found["turns"][1]["new"]["agent"] == "technical"
    assert found["totals"]["model_calls"] > 0 and found["totals"]["prompt_bytes"] > 0


def test_a_replays_fork_is_the_operators(served: Served) -> None:
    sid, token = _two_turns(served)
    replayed = served.client.post(f"/v1/sessions/{sid}/replay", json={"from_turn": 2},
                                  headers=OP)
    assert replayed.status_code == 200, replayed.text
    fork_id = replayed.json()["replay_id"]
    mine = served.client.get(f"/v1/sessions/{fork_id}/transcript", headers=bearer(token))
    assert mine.status_code in (401, 403, 404), mine.text
    assert served.client.get(f"/v1/sessions/{fork_id}/transcript",
                             headers=OP).status_code == 200


def test_a_retried_fork_returns_the_first_fork_and_makes_no_other(served: Served) -> None:
    sid, _ = _two_turns(served)
    headers = {**OP, "Idempotency-Key": "f-1"}
    made = [served.client.post(f"/v1/sessions/{sid}/fork", json={"turn": 2, "token": True},
                               headers=headers) for _ in range(2)]
    assert [r.status_code for r in made] == [201, 201], made[1].text
    assert made[0].json()["id"] == made[1].json()["id"]
    fork = made[1].json()
    opened = served.client.get(f"/v1/sessions/{fork['id']}", headers=bearer(fork["token"]))
    assert opened.status_code == 200  # the retry's token opens it
    original = served.client.get(f"/v1/sessions/{sid}", headers=OP).json()
    assert len(original["metadata"]["forks"]) == 1


def test_a_retried_rewind_cuts_nothing_more(served: Served) -> None:
    sid, _ = _two_turns(served)
    served.say(sid, _, "thanks")
    headers = {**OP, "Idempotency-Key": "w-1"}
    cut = [served.client.post(f"/v1/sessions/{sid}/rewind", json={"turn": 2},
                              headers=headers) for _ in range(2)]
    assert [r.status_code for r in cut] == [200, 200], cut[1].text
    assert cut[0].json()["turn"] == cut[1].json()["turn"] == 1
    session = served.client.get(f"/v1/sessions/{sid}", headers=OP).json()
    assert len(session["metadata"]["rewinds"]) == 1
