"""Who may open what, and bad input: every refusal is a JSON error with a stable code
and a fitting 4xx, never a 500."""

from __future__ import annotations

import pytest

from .conftest import OPERATOR_KEY, Served, bearer, serving, support_runner


def _error(r: object) -> tuple[int, str]:
    import httpx

    assert isinstance(r, httpx.Response)
    return r.status_code, r.json()["error"]["code"]


def test_a_session_opens_only_with_its_own_token_or_the_operator_key(served: Served) -> None:
    sid, token = served.session()
    _, other_token = served.session()
    path = f"/v1/sessions/{sid}"
    assert _error(served.client.get(path)) == (401, "unauthorized")
    assert _error(served.client.get(path, headers=bearer("wrong"))) == (403, "forbidden")
    assert _error(served.client.get(path, headers=bearer(other_token))) == (403, "forbidden")
    assert served.client.get(path, headers=bearer(token)).status_code == 200
    assert served.client.get(path, headers=bearer(OPERATOR_KEY)).status_code == 200
    assert _error(served.client.get("/v1/sessions/nope", headers=bearer(OPERATOR_KEY))) \
        == (404, "session_not_found")


def test_operator_routes_need_the_operator_key(served: Served) -> None:
    _, token = served.session()
    assert _error(served.client.get("/v1/sessions")) == (401, "unauthorized")
    assert _error(served.client.get("/v1/sessions", headers=bearer(token))) == \
        (403, "forbidden")
    assert served.client.get("/v1/sessions", headers=bearer(OPERATOR_KEY)).status_code == 200


def test_without_an_operator_key_operator_routes_are_off() -> None:
    with serving(support_runner, operator_key=None) as s:
        assert _error(s.client.get("/v1/sessions", headers=bearer("x"))) == (403, "forbidden")


@pytest.mark.parametrize("body,expected", [
    (b"{not json", (400, "invalid_json")),
    (b'{"text": 5}', (422, "validation_error")),
    (b'{"txt": "hi"}', (422, "validation_error")),
    (b"[]", (422, "validation_error")),
])
def test_malformed_bodies_are_refused_with_a_code(served: Served, body: bytes,
                                                  expected: tuple[int, str]) -> None:
    sid, token = served.session()
    r = served.client.post(f"/v1/sessions/{sid}/messages", content=body,
                           headers={**bearer(token), "content-type": "application/json"})
    assert _error(r) == expected


def test_sizes_beyond_the_limits_are_413() -> None:
    with serving(support_runner, max_body_bytes=10_000, max_message_chars=100) as s:
        sid, token = s.session()
        assert _error(s.say(sid, token, "x" * 20_000)) == (413, "body_too_large")
        assert _error(s.say(sid, token, "x" * 101)) == (413, "message_too_large")

        def chunks() -> object:
            for _ in range(20):
                yield b"x" * 1000

        r = s.client.post(f"/v1/sessions/{sid}/messages", content=chunks(),  # type: ignore[arg-type]
                          headers={**bearer(token), "content-type": "application/json"})
        assert _error(r) == (413, "body_too_large")


def test_unicode_nul_and_odd_text_round_trip(served: Served) -> None:
    sid, token = served.session()
    text = "héllo \x00 客服 \U0001f600 \u2028 end"
    r = served.say(sid, token, text)
    assert r.status_code == 200
    transcript = served.client.get(f"/v1/sessions/{sid}/transcript",
                                   headers=bearer(token)).json()
    assert transcript["messages"][0]["text"] == text
    lone = served.client.post(f"/v1/sessions/{sid}/messages",
                              content=b'{"text": "bad \\ud800 half"}',
                              headers={**bearer(token), "content-type": "application/json"})
    assert lone.status_code in (200, 400, 422)


def test_unknown_routes_and_methods_answer_in_the_error_shape(served: Served) -> None:
    assert _error(served.client.get("/v1/nothing")) == (404, "not_found")
    assert _error(served.client.put("/v1/team")) == (405, "method_not_allowed")


def test_a_session_id_in_the_path_that_no_store_accepts_is_not_found(served: Served) -> None:
    r = served.client.get("/v1/sessions/" + "x" * 300, headers=bearer(OPERATOR_KEY))
    assert _error(r) == (404, "session_not_found")


def test_refusing_an_unknown_agent_names_only_agents_the_user_may_pick(
        served: Served) -> None:
    sid, token = served.session()
    for r in (served.client.post(f"/v1/sessions/{sid}/agent", json={"agent": "nobody"},
                                 headers=bearer(token)),
              served.client.post("/v1/sessions", json={"agent": "nobody"})):
        assert _error(r) == (404, "unknown_target")
        message = r.json()["error"]["message"]
        assert message.endswith("Selectable agents: triage, billing, refunds, technical.")


def test_a_session_id_no_route_could_reach_is_refused(served: Served) -> None:
    r = served.client.post("/v1/sessions", json={"id": "team/alice"},
                           headers=bearer(OPERATOR_KEY))
    assert _error(r) == (400, "invalid_argument")
    assert "'/'" in r.json()["error"]["message"]
    sid, _ = served.session()
    export = served.client.get(f"/v1/sessions/{sid}/export", headers=bearer(OPERATOR_KEY))
    imported = served.client.post("/v1/sessions/import", json={**export.json(), "id": "a/b"},
                                  headers=bearer(OPERATOR_KEY))
    assert _error(imported) == (400, "invalid_argument")


def test_a_405_says_which_methods_are_allowed(served: Served) -> None:
    r = served.client.put("/v1/team")
    assert _error(r) == (405, "method_not_allowed")
    assert r.headers["allow"] == "GET"
    r = served.client.patch("/v1/sessions")
    assert set(r.headers["allow"].split(", ")) == {"GET", "POST"}
