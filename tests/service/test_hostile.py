"""A random and hostile corpus at every route (schemathesis, from the app's own OpenAPI
document): no 5xx, every error in the one shape with a code, every answer's status and
body as the document declares them, and nothing lost from a session that the corpus
could reach."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from starlette.testclient import TestClient

from handoffs.server import create_app

from .conftest import OPERATOR_KEY, support_runner

app = create_app(support_runner(), operator_key=OPERATOR_KEY, max_body_bytes=64_000,
                 max_message_chars=2_000)
schema = schemathesis.openapi.from_asgi("/openapi.json", app)

_client = TestClient(app)
_session = _client.post("/v1/sessions", json={}).json()
_client.post(f"/v1/sessions/{_session['id']}/messages", json={"text": "charged twice"},
             headers={"Authorization": f"Bearer {_session['token']}"})
KEYS = {"session token": _session["token"], "operator key": OPERATOR_KEY, "nothing": None}


def _check(response: Any) -> None:
    assert response.status_code < 500, (response.status_code, response.text[:500])
    if response.status_code >= 400:
        error = response.json()["error"]
        assert isinstance(error["code"], str) and error["code"]
        assert isinstance(error["message"], str)
        assert "Traceback" not in response.text


@pytest.mark.parametrize("who", list(KEYS))
@schema.exclude(path_regex=r".*/(events|ws)$").parametrize()
@settings(max_examples=25, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_no_input_makes_the_server_fail(case: Any, who: str) -> None:
    key = KEYS[who]
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = case.call(headers=headers)
    _check(response)
    case.validate_response(response, checks=[status_code_conformance,
                                             response_schema_conformance,
                                             content_type_conformance])


def test_the_session_the_corpus_could_reach_lost_nothing() -> None:
    state = _client.get(f"/v1/sessions/{_session['id']}/transcript",
                        headers={"Authorization": f"Bearer {_session['token']}"})
    if state.status_code == 404:  # the corpus may delete it with the operator key
        return
    texts = [m["text"] for m in state.json()["messages"] if m["kind"] == "user"]
    assert texts[0] == "charged twice"
