"""`handoffs serve`, `run` and `chat` on a loaded `Runner` use that runner as it was built:
its store, telemetry and limits; a flag given explicitly replaces that one setting only.
Real `handoffs` processes; the runners are in `built_app.py`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from handoffs.stores import PostgresStore, SQLiteStore
from stores.conftest import PG_DSN, drop_schema, require_pg

from .conftest import SRC, bearer, handoffs_serve

APP = Path(__file__).with_name("built_app.py")
CHARGED = "I was charged twice on my invoice"


def spans(tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "spans.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def app_env(tmp_path: Path, store: str) -> dict[str, str | None]:
    return {"APP_STORE": store, "APP_SPANS": str(tmp_path / "spans.jsonl")}


@pytest.fixture
async def pg_schema() -> Iterator[str]:
    await require_pg()
    schema = f"handoffs_built_{uuid.uuid4().hex[:12]}"
    yield schema
    await drop_schema(schema)


async def test_serve_uses_the_runners_own_postgres_store_telemetry_and_limits(
        tmp_path: Path, pg_schema: str) -> None:
    host = PG_DSN.removeprefix("postgresql://")
    store = f"postgresql://postgres:hunter2@{host}?schema={pg_schema}"
    with handoffs_serve([f"{APP}:runner"], tmp_path, app_env(tmp_path, store)) as s:
        created = httpx.post(s.url + "/v1/sessions", json={}).json()
        sid, token = created["id"], created["token"]
        r = httpx.post(f"{s.url}/v1/sessions/{sid}/messages", headers=bearer(token),
                       json={"text": CHARGED}, timeout=30)
        assert r.status_code == 200 and r.json()["agent"] == "billing"
        too_long = httpx.post(f"{s.url}/v1/sessions/{sid}/messages", headers=bearer(token),
                              json={"text": "x" * 61}, timeout=30)
        assert too_long.json()["error"]["code"] == "message_too_large"
        assert httpx.get(s.url + "/v1/config").json()["max_message_chars"] == 60
        output = s.output()
    assert f"store postgresql://postgres:***@{host}?schema={pg_schema}" in output
    assert "hunter2" not in output
    assert not (tmp_path / "handoffs.db").exists()
    direct = PostgresStore(f"{PG_DSN}?schema={pg_schema}")
    try:
        state = await direct.load(sid)
    finally:
        await direct.close()
    assert state is not None and state.messages[0].text == CHARGED
    workflows = [sp for sp in spans(tmp_path) if sp["name"].startswith("invoke_workflow")]
    assert workflows and {sp["provider"] for sp in workflows} == {"own"}
    assert workflows[0]["attributes"]["gen_ai.workflow.name"] == "acme-support"


async def test_an_explicit_store_flag_replaces_only_the_store(tmp_path: Path) -> None:
    env = app_env(tmp_path, f"sqlite:///{tmp_path / 'built.db'}")
    with handoffs_serve([f"{APP}:runner", "--store", "sqlite:///flag.db"], tmp_path, env) as s:
        created = httpx.post(s.url + "/v1/sessions", json={}).json()
        r = httpx.post(f"{s.url}/v1/sessions/{created['id']}/messages",
                       headers=bearer(created["token"]), json={"text": CHARGED}, timeout=30)
        assert r.status_code == 200
        assert "store sqlite:///flag.db" in s.output()
    flagged = SQLiteStore(tmp_path / "flag.db")
    built = SQLiteStore(tmp_path / "built.db")
    try:
        assert await flagged.load(created["id"]) is not None
        assert await built.load(created["id"]) is None
    finally:
        await flagged.close()
        await built.close()
    workflows = [sp for sp in spans(tmp_path) if sp["name"].startswith("invoke_workflow")]
    assert workflows and workflows[0]["attributes"]["gen_ai.workflow.name"] == "acme-support"


def handoffs(tmp_path: Path, *args: str, store: str = "sqlite:///built.db"
             ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), **app_env(tmp_path, store)}
    for name in ("HANDOFFS_MODEL", "HANDOFFS_STORE"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "handoffs.cli", *args], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=60)


def test_run_keeps_the_runners_telemetry_and_limits(tmp_path: Path) -> None:
    done = handoffs(tmp_path, "run", f"{APP}:runner", CHARGED, "--session", "s1")
    assert done.returncode == 0, done.stderr
    assert "store sqlite:///built.db" in done.stdout
    traced = spans(tmp_path)
    assert traced and {sp["provider"] for sp in traced} == {"own"}
    workflow = next(sp for sp in traced if sp["name"].startswith("invoke_workflow"))
    assert workflow["attributes"]["gen_ai.workflow.name"] == "acme-support"
    assert any(CHARGED in json.dumps(sp["attributes"]) for sp in traced)  # content captured

    refused = handoffs(tmp_path, "run", f"{APP}:runner", "y" * 61, "--session", "s2")
    assert refused.returncode == 2
    assert "the limit is 60 (Runner(max_message_chars=...))" in refused.stderr


def test_run_never_traces_a_runner_built_without_telemetry(tmp_path: Path) -> None:
    done = handoffs(tmp_path, "run", f"{APP}:untraced", CHARGED, "--session", "s1")
    assert done.returncode == 0, done.stderr
    assert spans(tmp_path) == []  # the global provider is set, but telemetry=False


def test_chat_uses_the_runners_own_store(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    env = {**os.environ, "PYTHONPATH": str(SRC), **app_env(tmp_path, "sqlite:///built.db")}
    for name in ("HANDOFFS_MODEL", "HANDOFFS_STORE"):
        env.pop(name, None)
    child = pexpect.spawn(sys.executable, ["-m", "handoffs.cli", "chat", f"{APP}:runner",
                                           "--session", "c1"],
                          cwd=str(tmp_path), env=env, encoding="utf-8", timeout=20,
                          dimensions=(50, 220))
    try:
        child.expect(r"\] you> ")
        assert "session c1 in sqlite:///built.db" in str(child.before)
        child.sendline(CHARGED)
        child.expect(r"\] you> ")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert not (tmp_path / "handoffs.db").exists()
    workflow = [sp for sp in spans(tmp_path) if sp["name"].startswith("invoke_workflow")]
    assert workflow and workflow[0]["attributes"]["gen_ai.workflow.name"] == "acme-support"
