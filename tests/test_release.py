"""What a release is made of: one version, a changelog entry for it, and an sdist and a
wheel that `python -m build` makes and `twine check` passes (offline: no build isolation,
the `release` extra brings build, twine and hatchling)."""

from __future__ import annotations

import importlib.metadata
import re
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import handoffs

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_lives_in_one_place() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?", handoffs.__version__)
    assert importlib.metadata.version("handoffs") == handoffs.__version__


def test_the_changelog_has_a_section_for_this_version() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    assert re.search(rf"^## {re.escape(handoffs.__version__)}\b", text, re.M)


def test_the_sdist_and_wheel_build_and_pass_twine_check(tmp_path: Path) -> None:
    pytest.importorskip("build", reason="the release extra is not installed")
    pytest.importorskip("twine", reason="the release extra is not installed")
    pytest.importorskip("hatchling", reason="the release extra is not installed")
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir",
                           str(tmp_path), str(ROOT)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    version = handoffs.__version__
    wheel = tmp_path / f"handoffs-{version}-py3-none-any.whl"
    sdist = tmp_path / f"handoffs-{version}.tar.gz"
    assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in tmp_path.iterdir())

    checked = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                              str(wheel), str(sdist)], capture_output=True, text=True,
                             timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("handoffs/__init__.py", "handoffs/py.typed",
                   "handoffs/server/static/index.html", "handoffs/cli/__main__.py"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith(("tests/", "bench/"))]
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "handoffs = handoffs.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()
    with tarfile.open(sdist) as tar:
        members = tar.getnames()
    assert f"handoffs-{version}/CHANGELOG.md" in members
    assert f"handoffs-{version}/src/handoffs/__init__.py" in members
