"""bench/live_events.py runs end to end (a small run: two sessions, one turn each), every
subscriber on B sees each event once and in order, and its docs section renders."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from stores.conftest import PG_DSN, require_pg

BENCH = Path(__file__).resolve().parents[2] / "bench"


async def test_the_live_events_bench_runs_and_reports(tmp_path: Path) -> None:
    await require_pg()
    env = {"HANDOFFS_BENCH_PG_DSN": PG_DSN, "LIVE_BENCH_PIECES": "5",
           "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(BENCH / "live_events.py"), "--sessions", "2",
                           "--turns", "1", "--rounds", "1"], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    res = json.loads(done.stdout)
    for run in (res["other_process"], res["same_process"]):
        assert run["events"] == 2 * (3 + 5)  # run_started, agent_started, 5 deltas, message
        assert run["repeated_or_out_of_order"] == 0
        assert 0 < run["p50_ms"] <= run["p99_ms"] <= run["max_ms"]
    sys.path.insert(0, str(BENCH))
    import live_events

    text = live_events.section({**res, "args": {"sessions": 2, "turns": 1}})
    assert "| on B (the turn runs on A) | 16 |" in text
