"""`handoffs eval`: play labelled conversations against a team and report who answered.

    handoffs eval                                   the support team on its own cases, offline
    handoffs eval app.py:team cases.jsonl --model openai:gpt-4.1-mini --min-accuracy 0.9
    handoffs eval app.py:team cases.jsonl --repeat 3 --baseline single   pass^k, one agent
    handoffs eval app.py:team --from-session s-42 -o cases.jsonl    label a stored session
    handoffs eval app.py:team --from-store sqlite:///prod.db --since 7d --model M2
                                                    production traffic on another model
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO, TYPE_CHECKING

from ..errors import HandoffsError

if TYPE_CHECKING:
    from ..core.team import Team
    from ..eval.cases import Case
    from ..eval.report import EvalReport
    from ..models.prices import Prices
    from ..runtime.runner import Runner

CASE_SUFFIXES = (".jsonl", ".json", ".yaml", ".yml")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], team_help: str,
               store_help: str) -> None:
    """The `eval` command's options."""
    p = sub.add_parser(
        "eval", help="measure routing: play labelled conversations, report who answered",
        description="Play each case (one or more user messages) in a fresh session and "
        "report turn and case accuracy, the confusion matrix, refusals and failures by "
        "code, symptoms (phantom handoffs, bounces, repeated calls, last-word answers, "
        "no_progress), model calls, prompt bytes, tokens, latency and cost per resolved "
        "conversation; with --repeat, pass^k; with --baseline single, one agent holding "
        "every tool beside the team. With --from-store, replay stored sessions' user "
        "messages instead and report where the answering agent differs. Exit 1 below "
        "--min-accuracy.")
    p.add_argument("args", nargs="*", metavar="[TEAM] [CASES]",
                   help=f"TEAM: {team_help}; CASES: a .jsonl (or .yaml) case file "
                   "(default for the support team: its own cases)")
    p.add_argument("--model", action="append", default=[], metavar="M",
                   help="the model every agent uses; repeat to compare side by side; "
                   "'offline' for the offline rule-based model (default: the runner's own, "
                   "HANDOFFS_MODEL, an API key's, else offline)")
    p.add_argument("--history", action="append", default=[], metavar="VIEW",
                   help="the default history view (own_tools, full, conversation, "
                   "last_user, none, summary; default: the runner's, else own_tools); "
                   "repeat to compare side by side")
    p.add_argument("--repeat", type=int, default=1, metavar="K",
                   help="play every case K times, each in a fresh session, and report "
                   "pass^1..pass^K per case and overall (tau-bench) and accuracy's spread "
                   "across plays")
    p.add_argument("--baseline", default=None, metavar="single",
                   help="also play the cases with one agent holding every tool of the team "
                   "(instructions merged, no routes), reported beside the team")
    p.add_argument("--routing", action="append", default=[], metavar="MODE",
                   help="how every agent routes: tools, choice (one constrained choice per "
                   "message), calibrated (that choice corrected for the model's leaning), "
                   "or any of them +examples (routes taught by the --train cases); repeat "
                   "to compare side by side")
    p.add_argument("--train", type=float, default=None, metavar="SHARE",
                   help="the share of cases (0.5) that only teach: routes get examples from "
                   "them, the other cases are played (never the same case on both sides)")
    p.add_argument("--concurrency", type=int, default=4,
                   help="cases played at once (1 for a local server; default 4)")
    p.add_argument("--max-steps", type=int, default=None, help="model calls per turn")
    p.add_argument("--tag", action="append", default=[],
                   help="only the cases with this tag (repeatable: any of them)")
    p.add_argument("--min-accuracy", default=None, metavar="A",
                   help="exit 1 when a run's turn accuracy is under A (0.9 or 90%%); with "
                   "--from-store, when the share of turns the same agent answered is")
    p.add_argument("--prices", default=None, metavar="FILE",
                   help="a JSON price table (per model: input, cached_input, cache_write, "
                   "output, dollars per million tokens) to report cost per conversation; "
                   "without one no cost is shown")
    p.add_argument("--json", action="store_true", help="the report as JSON on stdout")
    p.add_argument("--html", default=None, metavar="FILE",
                   help="also write the report as one HTML page")
    p.add_argument("--store", default=None,
                   help="where the played sessions go (default memory://); with "
                   f"--from-session, where they are read from ({store_help})")
    p.add_argument("--from-session", action="append", default=[], metavar="ID",
                   help="write a case file from stored sessions (labels: who answered)")
    p.add_argument("-o", "--output", default=None,
                   help="with --from-session: the case file to write (default: stdout)")
    p.add_argument("--from-store", default=None, metavar="URL",
                   help="replay the user messages of the sessions stored at URL (only read: "
                   "the replays run in a scratch memory store) on TEAM and --model, and "
                   "report per turn where the answering agent differs")
    p.add_argument("--since", default=None, metavar="WHEN",
                   help="with --from-store: sessions active in this window (30m, 24h, 7d, "
                   "or a Unix time)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="with --from-store: at most N sessions, the most recent first")


def eval_command(args: argparse.Namespace, color: bool) -> int:
    """Run `handoffs eval` as parsed; the exit status."""
    from .loading import load_target, team_of

    spec, cases_path = _positionals(args.args)
    if args.from_session:
        return _from_sessions(args)
    if args.since is not None or args.limit is not None:
        raise HandoffsError("--since and --limit choose stored sessions to replay: give "
                            "--from-store URL too.", code="invalid_argument")
    prices = _prices(args.prices)
    target = load_target(spec)
    team = team_of(target)
    cases = _cases(cases_path, team, spec)
    if args.tag:
        cases = [c for c in cases if set(c.tags) & set(args.tag)]
        if not cases:
            raise HandoffsError(f"No case has a tag among {', '.join(args.tag)}.",
                                code="invalid_case")
    threshold = _threshold(args.min_accuracy)
    models: list[str | None] = args.model or [_default_model(target)]
    named = ", ".join(m or "the runner's own" for m in models)
    print(f"handoffs eval: {len(cases)} cases; model {named}", file=sys.stderr)
    if args.train is not None:
        from ..eval.examples import split_cases

        taught, played = split_cases(cases, args.train)
        print(f"handoffs eval: {len(taught)} cases teach the routes (examples), the other "
              f"{len(played)} are played", file=sys.stderr)
    report = _run(target, cases, models, args)
    for run in report.runs:
        run.prices = prices
    if args.html:
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(report.html())
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False, default=str))
    else:
        sys.stdout.write(report.text(color))
    if threshold is not None:
        low = report.below(threshold)
        for run in low:
            print(f"below --min-accuracy {threshold:.1%}: {run.label} scored "
                  f"{run.accuracy:.1%}", file=sys.stderr)
        return 1 if low else 0
    return 0


def _run(target: Team | Runner, cases: list[Case], models: list[str | None],
         args: argparse.Namespace) -> EvalReport:
    import asyncio

    from ..eval.run import run_eval

    bar = ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    try:
        return asyncio.run(run_eval(
            target, cases, model=models, repeat=args.repeat,
            history=args.history or None, concurrency=args.concurrency,
            progress=bar.update if bar else None, store=args.store,
            max_steps=args.max_steps, baseline=args.baseline,
            routing=args.routing or None, train=args.train))
    finally:
        if bar is not None:
            bar.close()


def _prices(path: str | None) -> Prices | None:
    """`--prices FILE` read (before anything is played: a bad table fails at once)."""
    if path is None:
        return None
    from ..models.prices import Prices

    return Prices.load(path)


def _positionals(values: list[str]) -> tuple[str | None, str | None]:
    if len(values) > 2:
        raise HandoffsError("eval takes [TEAM] [CASES]: at most two names.",
                            code="invalid_argument")
    if len(values) == 2:
        return values[0], values[1]
    if len(values) == 1:
        is_cases = values[0].lower().endswith(CASE_SUFFIXES)
        return (None, values[0]) if is_cases else (values[0], None)
    return None, None


def _cases(path: str | None, team: Team, spec: str | None) -> list[Case]:
    from ..eval.cases import load_cases

    if path is not None:
        return load_cases(path)
    from .offline import example_of

    name = example_of(team)
    if name is not None:  # a built-in example team: its own labelled cases
        from ..eval.support import example_cases

        return example_cases(name)
    raise HandoffsError(f"Give a case file: handoffs eval {spec or 'TEAM'} cases.jsonl "
                        "(or write one from a stored session: --from-session ID).",
                        code="invalid_argument")


def _default_model(target: Team | Runner) -> str | None:
    from ..core.team import Team
    from ..demo import demo_model

    if not isinstance(target, Team) and target.model is not None:
        return None  # the runner's own model
    spec, _ = demo_model(None, os.environ)
    return spec or "offline"


def _threshold(text: str | None) -> float | None:
    if text is None:
        return None
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 1:
        raise HandoffsError(f"--min-accuracy takes a share from 0 to 1 (0.9) or a "
                            f"percentage (90%), not {text!r}.", code="invalid_argument")
    return value


def _from_sessions(args: argparse.Namespace) -> int:
    import asyncio

    from ..eval.cases import dump_jsonl
    from ..eval.sessions import cases_from_store
    from .runners import store_url

    url = store_url(args.store)
    cases = asyncio.run(cases_from_store(url, args.from_session))
    text = dump_jsonl(cases)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
        turns = sum(len(c.turns) for c in cases)
        print(f"wrote {args.output}: {len(cases)} case(s), {turns} turns labelled with "
              "the agent that answered. Check each label: it is what happened, not "
              "necessarily what should have.", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


class ProgressBar:
    """`[#######.......]  12/42 cases played` on one terminal line, redrawn in place."""

    def __init__(self, out: IO[str], width: int = 30, done: str = "cases played") -> None:
        self.out = out
        self.width = width
        self.done = done
        """What the count counts, as the bar says it."""

    def update(self, done: int, total: int) -> None:
        filled = self.width * done // max(total, 1)
        self.out.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} "
                       f"{self.done}")
        self.out.flush()

    def close(self) -> None:
        self.out.write("\r\033[K")
        self.out.flush()
