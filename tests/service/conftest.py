"""A real uvicorn server on a real port of 127.0.0.1, in a thread of the test process,
and the helpers the server tests share."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from handoffs import Runner
from handoffs.examples.support import build_team, rule_model

OPERATOR_KEY = "operator-secret-for-tests"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Served:
    """A running server: its base URL and an HTTP client for it."""

    url: str
    client: httpx.Client

    def session(self, **body: Any) -> tuple[str, str]:
        """A new session's id and token."""
        r = self.client.post("/v1/sessions", json=body)
        assert r.status_code == 201, r.text
        d = r.json()
        return d["id"], d["token"]

    def say(self, sid: str, token: str, text: str, **kw: Any) -> httpx.Response:
        return self.client.post(f"/v1/sessions/{sid}/messages", json={"text": text},
                                headers=bearer(token), **kw)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@contextlib.contextmanager
def serving(make_runner: Callable[[], Runner], **settings: Any) -> Iterator[Served]:
    """Serve `make_runner()` (built in the server's own thread and loop) with uvicorn."""
    import uvicorn

    from handoffs.server import create_app

    settings.setdefault("operator_key", OPERATOR_KEY)
    port = free_port()
    config = uvicorn.Config(lambda: create_app(make_runner(), **settings), factory=True,
                            host="127.0.0.1", port=port, log_level="warning",
                            ws="websockets-sansio" if _has_sansio() else "auto")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=url, timeout=20) as client:
            yield Served(url, client)
    finally:
        server.should_exit = True
        thread.join(15)


def _has_sansio() -> bool:
    try:
        import uvicorn.protocols.websockets.websockets_sansio_impl  # noqa: F401
    except ImportError:
        return False
    return True


def support_runner(store: Any = None) -> Runner:
    return Runner(build_team(), model=rule_model(), store=store)


@pytest.fixture
def served() -> Iterator[Served]:
    with serving(support_runner) as s:
        yield s


def sse_events(response: httpx.Response, stop: Callable[[dict[str, Any]], bool]
               ) -> list[dict[str, Any]]:
    """Read SSE frames as events until `stop(event)` is true (comments skipped); each
    event keeps the SSE id it came with as `_id`."""
    events: list[dict[str, Any]] = []
    current: dict[str, str] = {}
    for line in response.iter_lines():
        if line == "":
            if "data" in current:
                event = json.loads(current["data"])
                event["_id"] = current.get("id")
                events.append(event)
                if stop(event):
                    return events
            current = {}
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        current[field] = value.removeprefix(" ")
    return events


def terminal(event: dict[str, Any]) -> bool:
    return event["type"] in ("run_completed", "run_failed")
