"""What the inspector reads over HTTP: model calls for the operator key only, and the
session's stored state."""

from __future__ import annotations

import os
from typing import Any

from handoffs import Runner
from handoffs.examples.support import build_team, rule_model
from handoffs.telemetry import Telemetry

from .conftest import OPERATOR_KEY, Served, bearer, serving, sse_events, terminal


def inspected() -> Runner:
    return Runner(build_team(), model=rule_model(), inspect=True,
                  telemetry=Telemetry(capture_content=True))


def stored_events(served: Served, sid: str, secret: str) -> list[dict[str, Any]]:
    with served.client.stream("GET", f"/v1/sessions/{sid}/events",
                              headers=bearer(secret)) as r:
        return sse_events(r, terminal)


def test_model_calls_reach_the_operator_key_only() -> None:
    with serving(inspected) as served:
        sid, token = served.session()
        assert served.say(sid, token, "I was charged twice for A-1001").status_code == 200
        as_user = stored_events(served, sid, token)
        as_operator = stored_events(served, sid, OPERATOR_KEY)
        hidden = {"model_request", "model_response"}
        assert not {e["type"] for e in as_user} & hidden
        assert {e["type"] for e in as_operator} >= hidden
        # Everything else is the same, with the same numbers.
        assert [e["seq"] for e in as_user] == \
            [e["seq"] for e in as_operator if e["type"] not in hidden]
        # The turn's own stream (Accept: text/event-stream) leaves them out too.
        with served.client.stream(
                "POST", f"/v1/sessions/{sid}/messages", json={"text": "thanks"},
                headers={**bearer(token), "Accept": "text/event-stream"}) as r:
            streamed = sse_events(r, terminal)
        assert streamed and not {e["type"] for e in streamed} & hidden
        config = served.client.get("/v1/config").json()
        assert config["inspect"] is True and config["trace_url"] is None


def test_the_state_route_shows_shared_memory_and_the_view_to_the_operator() -> None:
    with serving(inspected, trace_url="http://traces.example/{trace_id}") as served:
        sid, token = served.session()
        served.say(sid, token, "I was charged twice for A-1001")
        assert served.client.get(f"/v1/sessions/{sid}/state",
                                 headers=bearer(token)).status_code == 403
        state = served.client.get(f"/v1/sessions/{sid}/state",
                                  headers=bearer(OPERATOR_KEY)).json()
        assert state["active_agent"] == "refunds"
        assert state["shared"]["last_order"] == "A-1001"
        assert state["shared"]["handoff_context"]["source_agent"] == "billing"
        assert state["view"]["mode"] == "conversation"
        assert "token_sha256" not in state["metadata"]
        missing = served.client.get("/v1/sessions/nope/state", headers=bearer(OPERATOR_KEY))
        assert missing.status_code == 404
        assert served.client.get("/v1/config").json()["trace_url"] == \
            "http://traces.example/{trace_id}"


def test_the_page_files_are_compressed_and_the_inspector_is_served() -> None:
    with serving(inspected) as served:
        page = served.client.get("/inspect")
        assert page.status_code == 200 and "inspector" in page.text.lower()
        js = served.client.get("/static/js/chat.js", headers={"Accept-Encoding": "gzip"})
        assert js.headers.get("content-encoding") == "gzip"
        # The event stream is never compressed: it must reach the client as written.
        sid, token = served.session()
        with served.client.stream("GET", f"/v1/sessions/{sid}/events",
                                  headers={**bearer(token), "Accept-Encoding": "gzip"}) as r:
            assert "content-encoding" not in r.headers


def test_serve_inspect_flag_turns_inspection_on(monkeypatch: Any) -> None:
    from handoffs.cli.serve import ENV, build_app

    monkeypatch.setenv(ENV, '{"team": null, "offline": true, "store": "memory://", '
                       '"inspect": true}')
    monkeypatch.delenv("HANDOFFS_MODEL", raising=False)
    app = build_app()
    assert app.state.service.runner.inspector is not None
    assert os.environ[ENV]


def test_serve_moves_what_it_built_out_of_the_collectors_reach(monkeypatch: Any) -> None:
    import gc

    from handoffs.cli.serve import ENV, build_app

    monkeypatch.setenv(ENV, '{"team": null, "offline": true, "store": "memory://", '
                       '"gc_freeze": true}')
    monkeypatch.delenv("HANDOFFS_MODEL", raising=False)
    before = gc.get_freeze_count()
    try:
        app = build_app()
        assert gc.get_freeze_count() > before
        assert gc.is_tracked(app) and app.state.service.runner is not None
    finally:
        gc.unfreeze()
