"""Nothing secret in a server's output or its anonymous answers: session tokens and the
operator key are masked in every request line (HTTP and WebSocket), the database
password never printed, and a store that is down is named to nobody but the log.
Real `handoffs serve` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import httpx

from stores.conftest import PG_DSN, drop_schema, require_pg

from .conftest import OPERATOR_KEY, SRC, bearer, free_port, handoffs_serve


def test_tokens_and_the_operator_key_are_masked_in_every_request_line(
        tmp_path: Path) -> None:
    from websockets.sync.client import connect

    with handoffs_serve(["--demo", "--store", "memory://", "--log-level", "info"],
                        tmp_path) as s:
        created = httpx.post(s.url + "/v1/sessions", json={}).json()
        sid, token = created["id"], created["token"]
        ws_url = s.url.replace("http", "ws") + f"/v1/sessions/{sid}/ws"
        with connect(f"{ws_url}?access_token={token}&after=-1") as ws:
            ws.send(json.dumps({"type": "message", "text": "I was charged twice"}))
            while json.loads(ws.recv(10))["type"] != "run_completed":
                pass
        with connect(f"{ws_url}?access_token={OPERATOR_KEY}") as ws:
            ws.send(json.dumps({"type": "select_agent", "agent": "billing"}))
            while json.loads(ws.recv(10))["type"] != "agent_selected":  # after the replay
                pass
        with connect(f"{ws_url}?access_token=wrong-{token}") as ws:
            assert json.loads(ws.recv(10))["error"]["code"] == "forbidden"
        with httpx.stream("GET", f"{s.url}/v1/sessions/{sid}/events?access_token={token}",
                          timeout=10) as r:
            assert r.status_code == 200
            next(r.iter_lines())
        assert httpx.get(f"{s.url}/v1/sessions?access_token={OPERATOR_KEY}").status_code \
            == 200
        s.proc.terminate()
        s.proc.wait(10)
        output = s.output()
    assert f"/v1/sessions/{sid}/ws?access_token=***" in output  # the lines are there...
    assert f"/v1/sessions/{sid}/events?access_token=***" in output
    assert token not in output and OPERATOR_KEY not in output  # ...without the secrets


def test_a_store_that_is_down_is_described_to_the_log_only(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    url = f"postgresql://app:hunter2@127.0.0.1:{port}/secretdb"
    with handoffs_serve(["--demo", "--store", url, "--log-level", "info"], tmp_path,
                        ready="/healthz") as s:
        for r in (httpx.get(s.url + "/readyz"), httpx.post(s.url + "/v1/sessions", json={})):
            assert r.status_code == 503
            error = r.json()["error"]
            assert error["code"] == "store_unavailable"
            for secret in ("127.0.0.1", str(port), "secretdb", "hunter2", "app"):
                assert secret not in error["message"]
        s.proc.terminate()
        s.proc.wait(10)
        output = s.output()
    assert f"store postgresql://app:***@127.0.0.1:{port}/secretdb" in output
    assert "hunter2" not in output
    assert f"Cannot reach PostgreSQL at PostgresStore('postgresql://127.0.0.1:{port}/secretdb'" \
        in output  # the details, for the operator of the server


def test_a_password_in_the_query_is_masked_too(tmp_path: Path) -> None:
    port = free_port()
    url = f"postgresql://127.0.0.1:{port}/secretdb?user=app&password=hunter2"
    with handoffs_serve(["--demo", "--store", url], tmp_path, ready="/healthz") as s:
        s.proc.terminate()
        s.proc.wait(10)
        output = s.output()
    assert "password=***" in output and "hunter2" not in output


def test_an_answer_with_a_bearer_header_is_not_logged_either(tmp_path: Path) -> None:
    with handoffs_serve(["--demo", "--store", "memory://", "--log-level", "debug"],
                        tmp_path) as s:
        created = httpx.post(s.url + "/v1/sessions", json={}).json()
        r = httpx.get(f"{s.url}/v1/sessions/{created['id']}", headers=bearer(created["token"]))
        assert r.status_code == 200
        s.proc.terminate()
        s.proc.wait(10)
        assert created["token"] not in s.output()


async def test_the_sessions_command_masks_the_password_too(tmp_path: Path) -> None:
    await require_pg()
    schema = f"handoffs_cli_{uuid.uuid4().hex[:12]}"
    host = PG_DSN.removeprefix("postgresql://")
    url = f"postgresql://postgres:hunter2@{host}?schema={schema}"
    try:
        for args in (["list"], ["delete", "nobody"]):
            done = subprocess.run(
                [sys.executable, "-m", "handoffs.cli", "sessions", *args, "--store", url],
                env={**os.environ, "PYTHONPATH": str(SRC)}, cwd=tmp_path,
                capture_output=True, text=True, timeout=60)
            said = done.stdout + done.stderr
            assert f"postgresql://postgres:***@{host}" in said and "hunter2" not in said
    finally:
        await drop_schema(schema)
