"""A caller's trace context reaches the turn: a real client sends `traceparent` from a
span of its own to a real uvicorn server (its own process, on a real port), over HTTP,
the WebSocket and the OpenAI-compatible endpoint, and the turn's `invoke_workflow` is in
the caller's trace, under the caller's span.

The server does it itself (`server.tracing`), so it holds with the oldest FastAPI the
`server` extra allows, which has no telemetry of its own: `make fastapi-oldest` (a step
of `make test`) installs that one, from PyPI, in `.test-venvs/`. With a recent FastAPI
and a global tracer provider, FastAPI's own server span sits between the two.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import propagate
from opentelemetry.sdk.trace import TracerProvider

from .conftest import free_port

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).with_name("trace_server.py")
OLDEST = re.search(r'"fastapi>=([0-9.]+)"',
                   (ROOT / "pyproject.toml").read_text()).group(1)  # type: ignore[union-attr]
OLDEST_PYTHON = ROOT / ".test-venvs" / f"fastapi-{OLDEST}" / "bin" / "python"


def pythons() -> list[Any]:
    oldest = pytest.param(
        str(OLDEST_PYTHON), id=f"fastapi-{OLDEST}", marks=pytest.mark.skipif(
            not OLDEST_PYTHON.exists() and os.environ.get("CI") != "true",
            reason=f"no {OLDEST_PYTHON.relative_to(ROOT)}: make fastapi-oldest installs it"))
    return [pytest.param(sys.executable, id="fastapi-this-venv"), oldest]


class Server:
    def __init__(self, python: str, spans: Path, global_provider: bool) -> None:
        assert Path(python).exists(), f"{python} is missing (make fastapi-oldest)"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.spans_file = spans
        args = [python, str(SERVER), str(self.port), str(spans)]
        if global_provider:
            args.append("global")
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, cwd=ROOT)
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError(f"the server did not start: {self.proc.stdout.read()}")  # type: ignore[union-attr]
            time.sleep(0.1)

    def spans(self) -> list[dict[str, Any]]:
        text = self.spans_file.read_text() if self.spans_file.exists() else ""
        return [json.loads(line) for line in text.splitlines()]

    def stop(self) -> str:
        self.proc.terminate()
        try:
            out, _ = self.proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        return out


@pytest.fixture(params=pythons())
def python(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=[False, True], ids=["runner-provider", "global-provider"])
def server(python: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Server]:
    s = Server(python, tmp_path / "spans.jsonl", request.param)
    yield s
    s.stop()


CLIENT = TracerProvider().get_tracer("client")


def caller(name: str) -> tuple[dict[str, str], str, str]:
    """Headers with the traceparent of a client span, and its trace and span ids."""
    headers: dict[str, str] = {}
    with CLIENT.start_as_current_span(name) as span:
        propagate.inject(headers)
        c = span.get_span_context()
    return headers, format(c.trace_id, "032x"), format(c.span_id, "016x")


def turn_under(server: Server, trace_id: str, span_id: str) -> dict[str, Any]:
    """The turn's `invoke_workflow` in that trace, checked to descend from that span
    (through FastAPI's own server spans, if it made some: they end after the response,
    so the chain may take a moment to be complete)."""
    deadline = time.monotonic() + 10
    while True:
        spans = [s for s in server.spans() if s["trace_id"] == trace_id]
        roots = [s for s in spans if s["name"] == "invoke_workflow"]
        by_id = {s["span_id"]: s for s in spans}
        top = roots[0] if roots else None
        while top is not None and top["parent_id"] in by_id:
            top = by_id[top["parent_id"]]
        if (top is not None and top["parent_id"] == span_id) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(roots) == 1, f"{len(roots)} turns in trace {trace_id}: {server.spans()}"
    assert top is not None and top["parent_id"] == span_id, spans
    return roots[0]


def test_http_websocket_and_openai_requests_continue_the_callers_trace(
        server: Server) -> None:
    created = httpx.post(f"{server.url}/v1/sessions", json={}).json()
    sid, token = created["id"], created["token"]
    auth = {"Authorization": f"Bearer {token}"}

    headers, trace_id, span_id = caller("POST message")
    reply = httpx.post(f"{server.url}/v1/sessions/{sid}/messages", json={"text": "hi"},
                       headers={**auth, **headers}, timeout=30)
    assert reply.status_code == 200, reply.text
    turn_under(server, trace_id, span_id)

    headers, trace_id, span_id = caller("websocket")
    asyncio.run(_over_websocket(server, sid, token, headers))
    turn_under(server, trace_id, span_id)

    headers, trace_id, span_id = caller("chat.completions")
    reply = httpx.post(f"{server.url}/v1/chat/completions", headers={
        "Authorization": "Bearer op-key", **headers}, json={
        "model": "team", "messages": [{"role": "user", "content": "I was charged twice"}]},
        timeout=30)
    assert reply.status_code == 200, reply.text
    turn_under(server, trace_id, span_id)

    # a request without a traceparent starts a trace of its own
    reply = httpx.post(f"{server.url}/v1/sessions/{sid}/messages", json={"text": "thanks"},
                       headers=auth, timeout=30)
    assert reply.status_code == 200
    assert len({s["trace_id"] for s in server.spans()
                if s["name"] == "invoke_workflow"}) == 4


async def _over_websocket(server: Server, sid: str, token: str,
                          headers: dict[str, str]) -> None:
    import websockets

    url = f"ws://127.0.0.1:{server.port}/v1/sessions/{sid}/ws?access_token={token}"
    async with websockets.connect(url, additional_headers=headers) as ws:
        await ws.send(json.dumps({"type": "message", "text": "and my refund?"}))
        while True:  # the session's events from its first; this is its second turn
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            assert frame["type"] not in ("run_failed", "error"), frame
            if frame["type"] == "run_completed" and frame["turn"] == 2:
                return
