"""What the side-by-side benchmark runs: the frameworks, the figures, the report's rows.

Shared by bench/compare.py (which runs them) and bench/render.py (which writes the report).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
PG_DSN_ENV = "HANDOFFS_BENCH_PG_DSN"
OURS = "handoffs"


@dataclass(frozen=True)
class Framework:
    name: str
    label: str
    python: Path
    script: Path


FRAMEWORKS = {
    f.name: f
    for f in (
        Framework(OURS, "handoffs", ROOT / ".venv/bin/python", BENCH / "ours.py"),
        Framework("openai-agents", "OpenAI Agents SDK",
                  ROOT / ".bench-venvs/openai-agents/bin/python",
                  BENCH / "peers/peer_openai_agents.py"),
        Framework("langgraph", "LangGraph + swarm", ROOT / ".bench-venvs/langgraph/bin/python",
                  BENCH / "peers/peer_langgraph.py"),
        Framework("autogen", "AutoGen Swarm", ROOT / ".bench-venvs/autogen/bin/python",
                  BENCH / "peers/peer_autogen.py"),
        Framework("strands", "Strands Swarm", ROOT / ".bench-venvs/strands/bin/python",
                  BENCH / "peers/peer_strands.py"),
    )
}
PEERS = [n for n in FRAMEWORKS if n != OURS]


@dataclass(frozen=True)
class Figure:
    key: str  # name in the results
    cli: str  # --figure passed to the script
    who: tuple[str, ...]  # frameworks that have it
    every_round: bool
    metrics: tuple[str, ...]  # JSON fields summarised
    extra: tuple[str, ...] = ()
    python: Path | None = None  # ours under another interpreter (None: the framework's own)


NEWER = ROOT / ".bench-venvs/newer/bin/python"
"""handoffs installed under the newest CPython found on PATH (3.12+), by `make bench-peers`:
`runner.stream` starts its turn's task eagerly there, so its streamed figure is run there
too (skipped when that venv is missing)."""


ALL = (OURS, *PEERS)
FIGURES = (
    Figure("per_handoff", "per_handoff", ALL, True, ("per_handoff_s", "median_s", "median_h0_s")),
    Figure("turn", "turn", ALL, True, ("median_s",)),
    Figure("persisted_turn", "persisted_turn", (OURS, "langgraph"), True,
           ("median_s", "db_bytes")),
    Figure("persisted_turn_pg", "persisted_turn_pg", (OURS,), True, ("median_s",)),
    Figure("history", "history", (OURS,), True,
           ("per_handoff_at_10_s", "per_handoff_at_100_s", "per_handoff_at_1000_s",
            "per_handoff_at_10000_s")),
    Figure("streamed", "streamed", (OURS,), True, ("median_s", "median_run_s")),
    Figure("streamed_newer", "streamed", (OURS,), True, ("median_s", "median_run_s"),
           python=NEWER),
    Figure("memory", "memory", ALL, False, ("peak_per_conv_bytes", "retained_per_conv_bytes")),
    Figure("memory_rss", "memory", ALL, False, ("rss_retained_per_conv_bytes",), ("--rss",)),
    Figure("import", "import", ALL, True, ("median_s",)),
    Figure("import_bare", "import_bare", (OURS,), True, ("median_s",)),
)
FIG = {f.key: f for f in FIGURES}

# Rows of the main table: (label, figure, metric, unit).
MAIN_ROWS = (
    ("(a) per handoff", "per_handoff", "per_handoff_s", "s"),
    ("(b) whole turn, H=1", "turn", "median_s", "s"),
    ("(c) peak memory / conversation", "memory", "peak_per_conv_bytes", "B"),
    ("(c) retained memory / conversation", "memory", "retained_per_conv_bytes", "B"),
    ("(c) retained RSS / conversation", "memory_rss", "rss_retained_per_conv_bytes", "B"),
    ("(d) import, fresh interpreter", "import", "median_s", "s"),
    ("(e) persisted turn, SQLite, H=1", "persisted_turn", "median_s", "s"),
)
# Rows of the table of our own figures (e): (label, figure, metric, unit).
OURS_ROWS = (
    ("per handoff, 10 earlier messages", "history", "per_handoff_at_10_s", "s"),
    ("per handoff, 100 earlier messages", "history", "per_handoff_at_100_s", "s"),
    ("per handoff, 1,000 earlier messages", "history", "per_handoff_at_1000_s", "s"),
    ("per handoff, 10,000 earlier messages", "history", "per_handoff_at_10000_s", "s"),
    ("turn H=1, `runner.run`", "streamed", "median_run_s", "s"),
    ("turn H=1, `runner.stream` (all events consumed)", "streamed", "median_s", "s"),
    ("turn H=1, persisted, SQLite store", "persisted_turn", "median_s", "s"),
    ("turn H=1, persisted, PostgreSQL store", "persisted_turn_pg", "median_s", "s"),
    ("import handoffs (bare, lazy)", "import_bare", "median_s", "s"),
    ("import handoffs.runtime.runner", "import", "median_s", "s"),
)

CHECKS = {
    OURS: "answer `done`, final agent `agent_H` and accepted handoffs == H, read from "
          "`RunResult` (`output`, `agent`, `handoffs`)",
    "openai-agents": "`result.final_output`, `result.last_agent.name`, number of "
                     "`HandoffOutputItem` in `result.new_items`",
    "langgraph": "last message is an `AIMessage` `done` named for the active agent; "
                 "`result[\"active_agent\"]`; handoff `ToolMessage`s counted in chain order",
    "autogen": "last `TextMessage` from `agent_H` is `done`; `HandoffMessage`s counted, "
               "source/target checked in chain order",
    "strands": "`result.status == COMPLETED`; `node_history` exactly `agent_0 … agent_H`; "
               "answer read from `results[\"agent_H\"]`",
}

TRAFFIC_ONLY = ("adk",)
"""Frameworks in the traffic run (f) only (no overhead script)."""
