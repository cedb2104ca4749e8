"""A real uvicorn server on a real port of 127.0.0.1, in a thread of the test process;
a real `handoffs serve` process; and the helpers the server tests share."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from handoffs import Runner
from handoffs.examples.support import build_team, rule_model

OPERATOR_KEY = "operator-secret-for-tests"
SRC = Path(__file__).resolve().parents[2] / "src"


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


@dataclass
class ServeProcess:
    """A running `handoffs serve`: its URL, its process, and what it printed."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        """Everything the process wrote to stdout and stderr so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")


@contextlib.contextmanager
def handoffs_serve(args: Sequence[str], cwd: Path,
                   env: Mapping[str, str | None] | None = None,
                   ready: str = "/readyz") -> Iterator[ServeProcess]:
    """`handoffs serve ARGS --port P` in its own process (PYTHONPATH: this checkout; the
    operator key in the environment; no HANDOFFS_MODEL or HANDOFFS_STORE unless `env`
    says), once `ready` answers 200; terminated afterwards. Its output goes to a file,
    so a chatty server never blocks on a full pipe."""
    port = free_port()
    full = {**os.environ, "PYTHONPATH": str(SRC), "HANDOFFS_OPERATOR_KEY": OPERATOR_KEY}
    for name in ("HANDOFFS_MODEL", "HANDOFFS_STORE", "HANDOFFS_OPERATOR_KEY_FILE"):
        full.pop(name, None)
    for k, v in (env or {}).items():
        if v is None:
            full.pop(k, None)
        else:
            full[k] = v
    log = cwd / f"serve-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "handoffs.cli", "serve", *args,
                                 "--port", str(port)],
                                cwd=cwd, env=full, stdout=out, stderr=subprocess.STDOUT)
    served = ServeProcess(f"http://127.0.0.1:{port}", proc, log)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(served.url + ready, timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"handoffs serve did not start:\n{served.output()}")
            time.sleep(0.1)
        yield served
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
