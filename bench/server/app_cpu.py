"""CPU per request of the HTTP app itself: the ASGI callable driven in process, no
socket, no HTTP client, no uvicorn, so what it measures moves little with the machine's
load (the latency in `run.py` moves with it a lot on a shared machine).

    PYTHONPATH=src python bench/server/app_cpu.py
    PYTHONPATH=/tmp/base/src python bench/server/app_cpu.py   # an earlier tree, to compare

The support team, the offline model, the memory store. Rows: `GET /healthz` (the
framework's floor), `GET /v1/sessions/{id}` (a session's route: match, token, load),
`POST /v1/sessions/{id}/messages` (a turn with one handoff, JSON answer) and the same
turn as `runner.run` in process; each the median of 7 rounds of 300, in CPU time.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
import uuid
from typing import Any

from handoffs import Runner
from handoffs.cli.offline import offline_model
from handoffs.examples.support import build_team
from handoffs.server import create_app

TEXT = "I was charged twice on my invoice"


async def call(app: Any, method: str, path: str, payload: Any = None,
               token: str | None = None) -> Any:
    """One request through the ASGI app; its JSON answer."""
    body = json.dumps(payload).encode() if payload is not None else b""
    headers = [(b"host", b"bench"), (b"content-type", b"application/json"),
               (b"content-length", str(len(body)).encode())]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "headers": headers,
             "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80), "state": {}}
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.Event().wait()  # the client never disconnects
        raise AssertionError

    out: list[bytes] = []

    async def send(message: dict[str, Any]) -> None:
        out.append(message.get("body", b""))

    await app(scope, receive, send)
    text = b"".join(out)
    return json.loads(text) if text else None


async def main() -> None:
    team = build_team()
    runner = Runner(team, model=offline_model(team), store="memory://")
    app = create_app(runner, operator_key="bench")

    async def healthz(_: Any) -> None:
        await call(app, "GET", "/healthz")

    async def session(s: Any) -> None:
        await call(app, "GET", f"/v1/sessions/{s['id']}", token=s["token"])

    async def turn(s: Any) -> None:
        r = await call(app, "POST", f"/v1/sessions/{s['id']}/messages", {"text": TEXT},
                       s["token"])
        assert r["agent"] == "billing", r

    async def in_process(_: Any) -> None:
        await runner.run(f"bench-{uuid.uuid4().hex}", TEXT)

    rows = {"GET /healthz": healthz, "GET /v1/sessions/{id}": session,
            "POST /v1/sessions/{id}/messages": turn, "runner.run (in process)": in_process}
    async with app.router.lifespan_context(app):
        got: dict[str, list[float]] = {k: [] for k in rows}
        for r in range(8):
            for name, f in rows.items():
                made = [await call(app, "POST", "/v1/sessions", {}) for _ in range(300)]
                c0 = time.process_time()
                for s in made:
                    await f(s)
                if r:  # the first round warms up
                    got[name].append((time.process_time() - c0) / len(made))
    for name, xs in got.items():
        print(f"{name:34} {statistics.median(xs) * 1e6:6.0f} us CPU")


if __name__ == "__main__":
    asyncio.run(main())
