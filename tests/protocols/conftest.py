"""A remote A2A agent in a process of its own on a real port (built with the a2a-sdk's own
server classes: remote_billing.py), for the RemoteAgent tests."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.conftest import free_port
from telemetry.conftest import otel  # noqa: F401  (the traced-turn fixture, shared)

HERE = Path(__file__).resolve().parent

pytest.importorskip("a2a", reason="the a2a-sdk is not installed (the `a2a` extra)")


@dataclass
class Remote:
    """A running remote agent: its URL, its process, the messages it received."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def entries(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def received(self) -> list[dict[str, Any]]:
        """The messages it received."""
        return [e for e in self.entries() if "text" in e]

    def cancelled(self) -> list[str]:
        """The tasks a CancelTask reached."""
        return [e["cancel"] for e in self.entries() if "cancel" in e]


@contextlib.contextmanager
def remote_billing(tmp: Path) -> Iterator[Remote]:
    port = free_port()
    log = tmp / f"remote-{port}.jsonl"
    out = open(tmp / f"remote-{port}.out", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, str(HERE / "remote_billing.py"), str(port)],
                            env={**os.environ, "REMOTE_LOG": str(log)},
                            stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(url + "/.well-known/agent-card.json", timeout=1).is_success:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the remote billing agent did not start: "
                                   + (tmp / f"remote-{port}.out").read_text())
            time.sleep(0.05)
        yield Remote(url, proc, log)
    finally:
        proc.terminate()
        proc.wait(10)
        out.close()


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[Remote]:
    with remote_billing(tmp_path) as r:
        yield r
