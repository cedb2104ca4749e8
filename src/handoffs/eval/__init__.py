"""Measure routing: play labelled conversations against a team and see who answered.

    from handoffs.eval import load_cases, run_eval

    report = await run_eval(build_team(), load_cases("cases.jsonl"), model="offline")
    print(report.text())                       # accuracy, the confusion matrix, misroutes
    report.assert_accuracy(0.9)                # in a test

Cases are JSON Lines (or YAML with `handoffs[eval]`): per user message, the agent that
should answer and optionally the handoff path, kind, payload keys, "no handoff", tools
that must (not) be called. `repeat=k` adds tau-bench's pass^k, `baseline="single"` plays
the cases with one agent holding every tool beside the team, and every turn is read for
symptoms (phantom handoffs, bounces, repeated calls, last-word answers, no_progress).
`replay_traffic` replays stored sessions on another model or team and counts where the
answering agent differs. `handoffs eval TEAM cases.jsonl --model M` is the same from the
command line. Nothing here is imported by `import handoffs`.
"""

from .assertions import assert_routing
from .baseline import SINGLE, single_agent_team
from .cases import (
    Case,
    CaseError,
    CaseTurn,
    check_cases,
    dump_jsonl,
    load_cases,
    parse_case,
    parse_jsonl,
    parse_yaml,
)
from .judge import TurnResult
from .recording import ModelCall, Recorder, recording
from .reliability import CaseReliability, Spread, pass_hat_k
from .report import EvalReport
from .results import EvalRun
from .run import OFFLINE, play_case, run_eval, run_eval_sync
from .sessions import case_from_session, cases_from_store
from .support import SUPPORT_CASES, support_cases
from .symptoms import Symptoms
from .traffic import Skipped, TrafficReplay, replay_traffic
from .traffic_render import traffic_html, traffic_text

__all__ = [
    "OFFLINE",
    "SINGLE",
    "SUPPORT_CASES",
    "Case",
    "CaseError",
    "CaseReliability",
    "CaseTurn",
    "EvalReport",
    "EvalRun",
    "ModelCall",
    "Recorder",
    "Skipped",
    "Spread",
    "Symptoms",
    "TrafficReplay",
    "TurnResult",
    "assert_routing",
    "case_from_session",
    "cases_from_store",
    "check_cases",
    "dump_jsonl",
    "load_cases",
    "parse_case",
    "parse_jsonl",
    "parse_yaml",
    "pass_hat_k",
    "play_case",
    "recording",
    "replay_traffic",
    "run_eval",
    "run_eval_sync",
    "single_agent_team",
    "support_cases",
    "traffic_html",
    "traffic_text",
]
