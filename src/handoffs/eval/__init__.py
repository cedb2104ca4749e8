"""Measure routing: play labelled conversations against a team and see who answered.

    from handoffs.eval import load_cases, run_eval

    report = await run_eval(build_team(), load_cases("cases.jsonl"), model="offline")
    print(report.text())                       # accuracy, the confusion matrix, misroutes
    report.assert_accuracy(0.9)                # in a test

Cases are JSON Lines (or YAML with `handoffs[eval]`): per user message, the agent that
should answer and optionally the handoff path, kind, payload keys, "no handoff", tools
that must (not) be called. `handoffs eval TEAM cases.jsonl --model M` is the same from the
command line. Nothing here is imported by `import handoffs`.
"""

from .assertions import assert_routing
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
from .report import EvalReport
from .results import EvalRun
from .run import OFFLINE, play_case, run_eval, run_eval_sync
from .sessions import case_from_session, cases_from_store
from .support import SUPPORT_CASES, support_cases

__all__ = [
    "OFFLINE",
    "SUPPORT_CASES",
    "Case",
    "CaseError",
    "CaseTurn",
    "EvalReport",
    "EvalRun",
    "ModelCall",
    "Recorder",
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
    "play_case",
    "recording",
    "run_eval",
    "run_eval_sync",
    "support_cases",
]
