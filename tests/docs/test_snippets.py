"""Every code block of the documentation runs, and prints what the page says it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from .snippets import DOCS, ROOT, Block, blocks, matches, pages

RUNNABLE = ("python", "sh")


def run_blocks(found: list[Block], tmp_path: Path,
               env_extra: Mapping[str, str] | None = None) -> None:
    """Run a page's blocks in order in `tmp_path` and check each as its marks say."""
    steps: list[Block] = []
    expected: dict[int, Block] = {}
    for b in found:
        if b.skip:
            continue
        if b.output:
            assert steps, f"{b.page}:{b.line}: an output block needs a block before it"
            expected[len(steps) - 1] = b
            continue
        assert b.lang in RUNNABLE, (
            f"{b.page}:{b.line}: a ```{b.lang} block must run (python, sh), or be marked "
            "<!-- output -->, <!-- offline-error: CODE --> or <!-- not-run: reason -->")
        steps.append(b)
    if not steps:
        return
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    spec = tmp_path / "blocks.json"
    spec.write_text(json.dumps([{"page": b.page, "line": b.line, "lang": b.lang,
                                 "code": b.code} for b in steps]))
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "HANDOFFS_MODEL",
                        "HANDOFFS_STORE")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(ROOT / "src"),
                                                      env.get("PYTHONPATH"))))
    env["NO_COLOR"] = "1"
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, str(Path(__file__).with_name("run_page.py")),
                           str(spec)], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    for i, (b, r) in enumerate(zip(steps, results, strict=True)):
        if b.error is not None:
            assert not r["ok"], (f"{b.page}:{b.line} must fail offline with {b.error}, but "
                                 f"it ran and printed:\n{r['output']}")
            assert f"({b.error})" in r["output"], (
                f"{b.page}:{b.line} failed, but not with {b.error}:\n{r['output']}")
            continue
        assert r["ok"], f"{b.page}:{b.line} failed:\n{r['output']}"
        want = expected.get(i)
        if want is not None:
            assert matches(want.code, r["output"]), (
                f"{b.page}:{b.line} printed:\n{r['output']}\nbut {want.page}:{want.line} "
                f"says:\n{want.code}")


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_block_of_the_page_runs_as_shown(page: Path, tmp_path: Path) -> None:
    run_blocks(blocks(page), tmp_path)


def test_the_wildcards_of_output_blocks() -> None:
    assert matches("a\n...\nz", "a\nb\nc\nz\n")
    assert matches("id cli-...", "id cli-1234\n")
    assert not matches("a\nz", "a\nb\nz\n")
