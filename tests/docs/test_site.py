"""The documentation site builds with `mkdocs build --strict`, and its generated parts
follow the code."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from handoffs.core.events import EVENT_TYPES
from handoffs.core.policy import REJECTION_CODES

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")


def _hook():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "generated", ROOT / "docs" / "_hooks" / "generated.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-d", str(tmp_path / "site")], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    events = (tmp_path / "site" / "concepts" / "events" / "index.html").read_text()
    assert all(f"<code>{t}</code>" in events for t in EVENT_TYPES)


def test_the_events_table_has_a_row_for_every_event_type() -> None:
    assert [kind for kind, _ in _hook().event_rows()] == list(EVENT_TYPES)


def test_the_policy_page_says_what_to_do_about_every_rejection_code() -> None:
    text = (ROOT / "docs" / "concepts" / "policy.md").read_text()
    for code in REJECTION_CODES:
        assert f"### `{code}`" in text, f"docs/concepts/policy.md has no section for {code}"
