"""Fixtures of the eval tests: case files, fake provider servers, a browser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from handoffs.eval import Case, parse_jsonl  # noqa: E402
from wire.openai_api import OpenAIWire  # noqa: E402
from wire.server import FakeServer  # noqa: E402

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update"]


def chromium_path() -> str | None:
    path = os.environ.get("HANDOFFS_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return path if os.path.exists(path) else None


def cases(*items: dict[str, Any]) -> list[Case]:
    """`items` read as a case file's lines."""
    return parse_jsonl("".join(json.dumps(c) + "\n" for c in items))


def write_cases(path: Path, *cases: dict[str, Any]) -> Path:
    """`cases` as a JSON Lines file at `path`."""
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases),
                    encoding="utf-8")
    return path


ROOT = TESTS.parent
Handoffs = Callable[..., "subprocess.CompletedProcess[str]"]


def offline_env(**extra: str) -> dict[str, str]:
    """The environment of a person with no model configured: no keys, plain output."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HANDOFFS_MODEL",
                        "HANDOFFS_STORE", "OPENAI_BASE_URL")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT / "src"), str(ROOT),
                                                      env.get("PYTHONPATH"))))
    env["NO_COLOR"] = "1"
    env.update(extra)
    return env


@pytest.fixture
def handoffs(tmp_path: Path) -> Handoffs:
    """`handoffs(*args)` runs the command as a user would, in a temporary directory."""

    def run(*args: str, env: dict[str, str] | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "handoffs.cli", *args], cwd=tmp_path,
                              env=env or offline_env(), capture_output=True, text=True,
                              timeout=timeout)

    return run


@pytest.fixture
def openai_server() -> Iterator[FakeServer]:
    server = FakeServer(OpenAIWire()).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium through Playwright; skipped (failed under CI=true) without it."""
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "the playwright package is not installed (pip install -e '.[dev]')"
    if missing is None and chromium_path() is None:
        missing = "no Chromium at /usr/bin/chromium (make chromium installs it)"
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests need a browser under CI: {missing}")
        pytest.skip(f"browser tests skipped: {missing}")
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS)
        yield b
        b.close()
