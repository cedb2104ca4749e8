"""bench/eval_real.py needs a real server and minutes, so it never runs here: only its
arguments are checked, and that it refuses to start without a server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import eval_real


def test_the_defaults_aim_at_the_local_small_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HANDOFFS_EVAL_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8082/v1")

    args = eval_real.parse_args([])

    assert args.model == "openai:qwen2.5-coder-0.5b?text_tool_calls=true"
    assert args.base_url == "http://127.0.0.1:8082/v1"
    assert (args.concurrency, args.repeat, args.cases, args.label) == (1, 1, None, "")
    assert args.out.endswith("bench/results")


def test_options_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    args = eval_real.parse_args(["--model", "openai:m", "--tag", "refund", "--tag", "fr",
                                 "--limit", "5", "--label", "after", "--max-steps", "8"])

    assert (args.model, args.tag, args.limit, args.label, args.max_steps) == (
        "openai:m", ["refund", "fr"], 5, "after", 8)
    with pytest.raises(SystemExit):
        eval_real.parse_args(["--limit", "0"])


def test_without_a_server_it_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)

    assert eval_real.main([]) == 2
    assert "Set OPENAI_BASE_URL" in capsys.readouterr().err


def test_the_single_agent_baseline_is_written_beside_the_team(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # offline (the keyword rule model) so it needs no server; --base-url is not called
    code = eval_real.main(["--model", "offline", "--base-url", "http://127.0.0.1:9/v1",
                           "--sample", "4", "--repeat", "2", "--baseline", "single",
                           "--out", str(tmp_path), "--label", "t"])

    assert code == 0
    (written,) = tmp_path.glob("eval-real-*-t.json")
    result = json.loads(written.read_text())
    assert result["baseline"]["name"] == "single"
    assert result["baseline"]["conversations"] == result["conversations"] == 8
    assert "per_route" in result and result["repeat"] == 2
    out = capsys.readouterr().out
    assert "baseline single: turn accuracy" in out and "pass^k k=1" in out
