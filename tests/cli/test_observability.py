"""`--otlp [ENDPOINT]` (and the standard `OTEL_EXPORTER_OTLP_*` variables) trace `run`,
`chat`, `demo` and `serve` to a real OTLP/HTTP receiver; `--log-level` and
`HANDOFFS_LOG_LEVEL` print the library's logs in a readable form, so a turn that fails
under `serve` says why on the server's output, with its traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from telemetry.test_otlp_wire import Receiver, attributes

from .conftest import ROOT, TEAMS, Handoffs, offline_env


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.server.shutdown()
    r.server.server_close()


def names(receiver: Receiver) -> list[str]:
    return sorted(s.name for s in receiver.spans())


def test_run_traces_to_the_endpoint_given(handoffs: Handoffs, receiver: Receiver) -> None:
    done = handoffs("run", f"{TEAMS}:runner", "what is the derivative of x^2?",
                    "--store", "memory://", "--otlp", receiver.url)

    assert done.returncode == 0, done.stderr
    assert f"handoffs: tracing to {receiver.url} (OTLP/HTTP)" in done.stderr
    assert names(receiver) == ["chat", "chat", "execute_tool transfer_to_maths",
                               "invoke_agent front", "invoke_agent maths", "invoke_workflow"]
    assert receiver.metric_names() == set()  # traces only: metrics are `--metrics`'s


def test_the_standard_variables_turn_tracing_on(handoffs: Handoffs,
                                                receiver: Receiver) -> None:
    env = offline_env(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.url, OTEL_SERVICE_NAME="maths-bot")
    done = handoffs("run", f"{TEAMS}:runner", "derivative?", "--store", "memory://",
                    env=env)

    assert done.returncode == 0, done.stderr
    [root] = [s for s in receiver.spans() if s.name == "invoke_workflow"]
    assert attributes(root)["handoffs.turn"] == 1
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    request = ExportTraceServiceRequest.FromString(
        next(b for p, _, b in receiver.requests if p == "/v1/traces"))
    resource = {kv.key: kv.value.string_value
                for kv in request.resource_spans[0].resource.attributes}
    assert resource["service.name"] == "maths-bot"

    off = handoffs("run", f"{TEAMS}:runner", "derivative?", "--store", "memory://",
                   env={**env, "OTEL_SDK_DISABLED": "true"})
    assert off.returncode == 0 and "tracing" not in off.stderr


def test_demo_and_chat_take_the_flag(handoffs: Handoffs, receiver: Receiver) -> None:
    demo = handoffs("demo", "--otlp", receiver.url)
    assert demo.returncode == 0, demo.stderr
    assert "invoke_agent triage" in names(receiver)

    chat = handoffs("chat", f"{TEAMS}:runner", "--store", "memory://", "--otlp",
                    receiver.url, stdin="derivative?\n/quit\n")
    assert chat.returncode == 0, chat.stderr
    assert names(receiver).count("invoke_agent maths") >= 1


def test_a_flag_that_swallowed_the_team_is_refused(handoffs: Handoffs) -> None:
    done = handoffs("run", "--otlp", f"{TEAMS}:runner", "hi")

    assert done.returncode == 2
    assert "--otlp takes a URL" in done.stderr


READABLE = re.compile(r"^\d\d:\d\d:\d\d\.\d{3} (INFO|WARNING) handoffs\.[a-z.]+: .+ "
                      r"\[session=\S+ turn=\d+ agent=\S+( trace_id=[0-9a-f]{32} "
                      r"span_id=[0-9a-f]{16})?\]$")


@pytest.mark.parametrize("how", ["option", "environment"])
def test_log_level_prints_the_librarys_records_readably(handoffs: Handoffs, how: str,
                                                        receiver: Receiver) -> None:
    args = ["run", f"{TEAMS}:runner", "derivative?", "--store", "memory://", "--otlp",
            receiver.url]
    if how == "option":
        done = handoffs(*args, "--log-level", "info")
    else:
        done = handoffs(*args, env=offline_env(HANDOFFS_LOG_LEVEL="INFO"))

    lines = [ln for ln in done.stderr.splitlines() if " handoffs." in ln]
    assert [ln.split(": ", 1)[1].split(" [")[0] for ln in lines] == [
        "turn 1 of " + lines[0].split("turn 1 of ")[1].split(" ")[0] + " started with front",
        "handoff front -> maths accepted (llm)",
        "turn 1 of " + lines[0].split("turn 1 of ")[1].split(" ")[0] + " ended completed "
        "with maths"]
    assert all(READABLE.match(ln) for ln in lines), lines
    assert all("trace_id=" in ln for ln in lines)  # traced: each names its span

    quiet = handoffs("run", f"{TEAMS}:runner", "derivative?", "--store", "memory://")
    assert " handoffs." not in quiet.stderr  # the default for run: warnings only


def test_serve_logs_a_failed_turn_with_its_traceback_and_traces_it(
        tmp_path: Path, receiver: Receiver) -> None:
    from service.conftest import free_port

    port = free_port()
    env = offline_env()
    proc = subprocess.Popen(
        [sys.executable, "-m", "handoffs.cli", "serve", f"{TEAMS}:failing", "--store",
         "memory://", "--port", str(port), "--otlp", receiver.url],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "did not start"
            time.sleep(0.1)
        created = httpx.post(url + "/v1/sessions", json={}).json()
        reply = httpx.post(f"{url}/v1/sessions/{created['id']}/messages",
                           json={"text": "hi"}, timeout=30,
                           headers={"Authorization": f"Bearer {created['token']}"})
        assert reply.json()["error"]["code"] == "model_error"
    finally:
        proc.terminate()  # uvicorn stops gracefully: the spans are flushed at exit
        out, _ = proc.communicate(timeout=20)

    sid = created["id"]
    assert f"handoffs: tracing to {receiver.url} (OTLP/HTTP)" in out
    assert f"INFO handoffs.runtime.turn: turn 1 of {sid} started with solo" in out
    failed = next(ln for ln in out.splitlines() if "failed (model_error)" in ln)
    assert failed.split(" ", 1)[1].startswith(
        f"WARNING handoffs.runtime.turn: turn 1 of {sid} failed (model_error)")
    assert "trace_id=" in failed
    assert "Traceback (most recent call last)" in out
    assert "the provider is down" in out
    [root] = [s for s in receiver.spans(None) if s.name == "invoke_workflow"]
    assert attributes(root)["error.type"] == "model_error"


def test_serve_follows_handoffs_log_level(tmp_path: Path) -> None:
    from service.conftest import free_port

    port = free_port()
    env = offline_env(HANDOFFS_LOG_LEVEL="warning", PYTHONPATH=str(ROOT / "src"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "handoffs.cli", "serve", f"{TEAMS}:runner", "--store",
         "memory://", "--port", str(port)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)
        created = httpx.post(f"http://127.0.0.1:{port}/v1/sessions", json={}).json()
        httpx.post(f"http://127.0.0.1:{port}/v1/sessions/{created['id']}/messages",
                   json={"text": "derivative?"}, timeout=30,
                   headers={"Authorization": f"Bearer {created['token']}"})
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=20)
    assert "started with front" not in out  # INFO: below the level
    assert "GET /healthz" not in out  # uvicorn's access log follows the same level
    assert os.environ.get("HANDOFFS_LOG_LEVEL") is None  # the test's own env untouched
