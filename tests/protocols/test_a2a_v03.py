"""A team served over A2A answers clients of the protocol's version 0.3 too (the a2a-sdk
0.3.x client, in a venv of its own: `make a2a-v03-client`), on the same endpoint as 1.0
clients, with the same conversation and token rules."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.conftest import ServeProcess, handoffs_serve

pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")

HERE = Path(__file__).resolve().parent
VENV = HERE.parents[1] / ".test-venvs" / "a2a-v0.3"
V03 = VENV / "bin" / "python"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    with handoffs_serve(["--demo", "--store", "memory://", "--a2a"],
                        tmp_path_factory.mktemp("a2a03")) as s:
        yield s


def test_the_card_names_the_endpoint_for_0_3_clients(served: ServeProcess) -> None:
    card = httpx.get(served.url + "/.well-known/agent-card.json").json()
    assert card["url"] == served.url + "/a2a"
    versions = {i["protocolVersion"] for i in card["supportedInterfaces"]}
    assert versions == {"1.0", "0.3"}


def test_a_0_3_request_without_the_version_header_is_answered(served: ServeProcess) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "role": "user", "messageId": "m-1", "kind": "message",
        "parts": [{"kind": "text", "text": "hello"}]}}}
    answer = httpx.post(served.url + "/a2a", json=body, timeout=30).json()
    assert "error" not in answer, answer
    assert answer["result"]["kind"] == "task"
    assert answer["result"]["status"]["state"] == "completed"


def test_the_a2a_0_3_sdk_client_holds_a_conversation(served: ServeProcess) -> None:
    if not (VENV / ".installed").exists():
        if os.environ.get("CI") == "true":
            pytest.fail("no a2a-sdk 0.3 client venv: run `make a2a-v03-client`")
        pytest.skip("no a2a-sdk 0.3 client venv (`make a2a-v03-client` makes it)")
    out = subprocess.run([str(V03), str(HERE / "a2a_v03_client.py"), served.url],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert lines[0]["card_url"] == served.url + "/a2a"
    first, second = lines[1], lines[2]
    assert first["state"] == second["state"] == "completed"
    assert first["token"] and second["context"] == first["context"]
    assert first["artifacts"] and second["artifacts"]
