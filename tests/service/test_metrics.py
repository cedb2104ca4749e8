"""`handoffs serve --metrics`: the turns and handoffs of the process at GET /metrics."""

from __future__ import annotations

from pathlib import Path

import httpx

from .conftest import bearer
from .test_processes import handoffs_serve


def test_metrics_count_the_turns_and_handoffs_the_server_ran(tmp_path: Path) -> None:
    with handoffs_serve("memory://", tmp_path, "--metrics") as (url, _):
        created = httpx.post(url + "/v1/sessions", json={}).json()
        before = httpx.get(url + "/metrics")
        r = httpx.post(f"{url}/v1/sessions/{created['id']}/messages",
                       json={"text": "I was charged twice"},
                       headers=bearer(created["token"]), timeout=30)
        assert r.status_code == 200, r.text
        after = httpx.get(url + "/metrics")

    assert before.status_code == 200 and after.headers["content-type"].startswith("text/plain")
    assert "handoffs_handoff_requests" not in before.text
    lines = [x for x in after.text.splitlines() if x.startswith("handoffs_handoff_requests")]
    assert lines and all('outcome="accepted"' in x for x in lines)
    assert any(x.startswith("handoffs_turns") for x in after.text.splitlines())
