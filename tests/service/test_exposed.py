"""What a server exposed to the internet needs: a rate limit per client on new sessions
and turns, session ids nobody can guess, security headers, the operator key kept out of
the command line, and a person users cannot pick unless the team says so."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import openai
import pytest

from handoffs import HumanAgent, Runner, Team
from handoffs.examples.support import build_team, rule_model

from .conftest import OPERATOR_KEY, Served, bearer, handoffs_serve, serving, support_runner


def _code(r: httpx.Response) -> tuple[int, str]:
    return r.status_code, r.json()["error"]["code"]


def test_a_client_over_its_rate_is_told_when_to_retry_and_the_operator_is_not_limited(
        ) -> None:
    with serving(support_runner, rate_limit="4/min") as s:
        sid, token = s.session()                                  # 1
        assert s.say(sid, token, "hello").status_code == 200      # 2
        client = openai.OpenAI(base_url=s.url + "/v1", api_key="unused", max_retries=0)
        client.chat.completions.create(model="team", messages=[   # 3: a throw-away turn
            {"role": "user", "content": "hi"}])
        assert s.say(sid, token, "and again").status_code == 200  # 4
        refused = [s.client.post("/v1/sessions", json={}), s.say(sid, token, "more")]
        for r in refused:
            assert _code(r) == (429, "too_many_requests")
            assert 1 <= int(r.headers["retry-after"]) <= 15
        with pytest.raises(openai.RateLimitError):
            client.chat.completions.create(model="team", messages=[
                {"role": "user", "content": "hi"}])
        # Reading is not limited, and the operator key never is.
        assert s.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).status_code == 200
        op = s.client.post("/v1/sessions", json={}, headers=bearer(OPERATOR_KEY))
        assert op.status_code == 201
        transcript = s.client.get(f"/v1/sessions/{sid}/transcript", headers=bearer(token))
        assert [m["text"] for m in transcript.json()["messages"] if m["kind"] == "user"] \
            == ["hello", "and again"]  # a refused message is not stored


def test_the_rate_limit_applies_to_websocket_messages() -> None:
    from websockets.sync.client import connect

    with serving(support_runner, rate_limit="2/min") as s:
        sid, token = s.session()
        url = s.url.replace("http", "ws") + f"/v1/sessions/{sid}/ws?access_token={token}"
        with connect(url) as ws:
            ws.send(json.dumps({"type": "message", "text": "hello"}))
            while json.loads(ws.recv(10))["type"] != "run_completed":
                pass
            ws.send(json.dumps({"type": "message", "text": "again"}))
            assert json.loads(ws.recv(10))["error"]["code"] == "too_many_requests"


def test_handoffs_serve_takes_a_rate_limit_and_refuses_a_bad_one(tmp_path: Path) -> None:
    with handoffs_serve(["--demo", "--store", "memory://", "--rate-limit", "2/h"],
                        tmp_path) as s:
        codes = [httpx.post(s.url + "/v1/sessions", json={}).status_code for _ in range(3)]
        assert codes == [201, 201, 429]
    with pytest.raises(RuntimeError, match="Invalid rate limit '2 per hour'"), \
            handoffs_serve(["--demo", "--rate-limit", "2 per hour"], tmp_path):
        pass


def test_session_ids_are_random(served: Served) -> None:
    ids = [served.session()[0] for _ in range(20)]
    assert len(set(ids)) == 20
    assert all(i.startswith("s_") and len(i) >= 2 + 22 for i in ids)  # 128 bits
    assert len({i[:8] for i in ids}) == 20  # no shared prefix, no counter


def test_the_page_carries_security_headers(served: Served) -> None:
    for path in ("/", "/operator", "/static/js/main.js", "/static/app.css"):
        r = served.client.get(path)
        assert r.status_code == 200, path
        csp = r.headers["content-security-policy"]
        assert "script-src 'self'" in csp and "style-src 'self'" in csp
        assert "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
        assert r.headers["x-frame-options"] == "DENY"
        assert r.headers["x-content-type-options"] == "nosniff"
    api = served.client.get("/v1/team")
    assert api.headers["x-content-type-options"] == "nosniff"
    assert api.headers["x-frame-options"] == "DENY"
    assert "content-security-policy" not in served.client.get("/docs").headers  # its CDN


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_the_operator_key_comes_from_a_file(tmp_path: Path, how: str) -> None:
    key_file = tmp_path / "operator.key"
    key_file.write_text("key-from-a-file\n")
    args = ["--demo", "--store", "memory://"]
    env: dict[str, str | None] = {"HANDOFFS_OPERATOR_KEY": None}
    if how == "flag":
        args += ["--operator-key-file", str(key_file)]
    else:
        env["HANDOFFS_OPERATOR_KEY_FILE"] = str(key_file)
    with handoffs_serve(args, tmp_path, env) as s:
        assert httpx.get(s.url + "/v1/sessions", headers=bearer("key-from-a-file")) \
            .status_code == 200
        assert _code(httpx.get(s.url + "/v1/sessions", headers=bearer(OPERATOR_KEY))) == \
            (403, "forbidden")
        assert "operator routes on" in s.output()
        assert "key-from-a-file" not in s.output()


def test_a_human_agent_is_not_user_selectable_unless_the_team_says_so(
        served: Served) -> None:
    agents = {a["name"]: a for a in served.client.get("/v1/team").json()["agents"]}
    assert agents["operator"]["human"] and not agents["operator"]["user_selectable"]
    sid, token = served.session()
    r = served.client.post(f"/v1/sessions/{sid}/agent", json={"agent": "operator"},
                           headers=bearer(token))
    assert _code(r) == (403, "not_user_selectable")
    assert _code(served.client.post("/v1/sessions", json={"agent": "operator"})) == \
        (403, "not_user_selectable")

    support = build_team()
    desk = HumanAgent("desk", description="A person at the front desk.",
                      user_selectable=True)
    team = Team([*support.agents, desk], entry="triage")
    with serving(lambda: Runner(team, model=rule_model())) as s:
        agents = {a["name"]: a for a in s.client.get("/v1/team").json()["agents"]}
        assert agents["desk"]["user_selectable"] and not agents["operator"]["user_selectable"]
        models = [m["id"] for m in s.client.get("/v1/models").json()["data"]]
        assert "team/desk" in models and "team/operator" not in models
        sid, token = s.session()
        picked = s.client.post(f"/v1/sessions/{sid}/agent", json={"agent": "desk"},
                               headers=bearer(token))
        assert picked.status_code == 200
        session = s.client.get(f"/v1/sessions/{sid}", headers=bearer(token)).json()
        assert session["status"] == "waiting_for_human"


def test_the_rate_limiter_stays_bounded_under_a_flood_of_addresses(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from handoffs.server import ratelimit

    monkeypatch.setattr(ratelimit, "MAX_CLIENTS", 100)
    limiter = ratelimit.RateLimiter(ratelimit.Rate.parse("2/h"))
    for i in range(5_000):
        assert limiter.take(f"10.0.{i // 256}.{i % 256}") == 0.0  # each one's first
    assert len(limiter._buckets) <= 100
    assert [limiter.take("192.0.2.1") for _ in range(2)] == [0.0, 0.0]
    assert limiter.take("192.0.2.1") == pytest.approx(1800, abs=1)  # 2/h: one per 30 min
