"""Routing on a real model: `handoffs eval` of the support team's cases against any
OpenAI-compatible server (llama.cpp's llama-server, vLLM, Ollama, OpenAI itself).

    bash ../shared/real-llm/setup.sh serve          # a real small model, offline
    OPENAI_BASE_URL=http://127.0.0.1:8082/v1 .venv/bin/python bench/eval_real.py
    .venv/bin/python bench/eval_real.py --model 'openai:qwen2.5-coder-0.5b?text_tool_calls=true' \\
        --base-url http://127.0.0.1:8082/v1 --sample 12 --label before

Plays every case (or those with --tag, --sample N spread over the file, the first --limit)
with `handoffs.eval.run_eval`, the engine of `handoffs eval`, one conversation at a time
by default (a local server answers one request at a time). Writes
bench/results/eval-real-<date>[-<label>].json (the figures, and every turn that did not
pass with what each agent saw) and the HTML report beside it, and prints routing accuracy
per route, model calls per conversation, failed turns and refusals by code, and how many
answers were raw call-shaped text. Never part of `make test` or CI: it needs a server and
takes minutes (10-50 s a turn on 2 cores, more on a busy machine).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DEFAULT_MODEL = "openai:qwen2.5-coder-0.5b?text_tool_calls=true"
CALL_SHAPED = re.compile(r'^\s*(```|\{\s*"name"|\[\s*\{\s*"name"|<tool_call>)')
"""An answer that is a tool call written as text, delivered to the user as it is."""


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/eval_real.py", description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", default=os.environ.get("HANDOFFS_EVAL_MODEL", DEFAULT_MODEL),
                   help=f"a model string (default: HANDOFFS_EVAL_MODEL or {DEFAULT_MODEL})")
    p.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"),
                   help="the OpenAI-compatible server (default: OPENAI_BASE_URL)")
    p.add_argument("--team", default=None, help="TEAM as `handoffs eval` takes it "
                   "(default: the built-in support team)")
    p.add_argument("--cases", default=None,
                   help="a case file (default: the support team's own cases)")
    p.add_argument("--tag", action="append", default=[], help="only cases with this tag")
    p.add_argument("--limit", type=int, default=None, help="only the first N cases")
    p.add_argument("--sample", type=int, default=None,
                   help="only N cases spread evenly over the file (every kind, quicker)")
    p.add_argument("--repeat", type=int, default=1, help="play every case N times")
    p.add_argument("--concurrency", type=int, default=1, help="cases at once (default 1)")
    p.add_argument("--max-steps", type=int, default=None, help="model calls per turn")
    p.add_argument("--turn-timeout", type=float, default=300.0,
                   help="seconds a turn may take (default 300)")
    p.add_argument("--routing", default=None, metavar="MODE",
                   help="how every agent routes: tools, choice, tools+examples, "
                   "choice+examples (default: as the team declares)")
    p.add_argument("--train", type=float, default=None, metavar="SHARE",
                   help="the share of cases that only teach the routes (examples); the "
                   "rest are played (the same split as handoffs eval --train)")
    p.add_argument("--baseline", default=None, choices=("single",),
                   help="also play the cases with one agent holding every tool of the "
                   "team (the single-agent baseline), reported beside the team")
    p.add_argument("--label", default="", help="a name for this run (before, after, ...)")
    p.add_argument("--out", default=str(RESULTS), help="the results folder")
    args = p.parse_args(argv)
    for name in ("limit", "sample"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name} must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if not args.base_url:
        print("bench/eval_real.py: no server. Set OPENAI_BASE_URL (or --base-url) to an "
              "OpenAI-compatible server; for a real small model offline: bash "
              "../shared/real-llm/setup.sh serve, then OPENAI_BASE_URL="
              "http://127.0.0.1:8082/v1", file=sys.stderr)
        return 2
    os.environ["OPENAI_BASE_URL"] = args.base_url
    os.environ.setdefault("OPENAI_API_KEY", "local")

    from handoffs import Runner
    from handoffs.cli.loading import load_target, team_of
    from handoffs.eval import load_cases, run_eval, support_cases

    team = team_of(load_target(args.team))
    cases = load_cases(args.cases) if args.cases else support_cases()
    if args.tag:
        cases = [c for c in cases if set(c.tags) & set(args.tag)]
    if args.sample and args.sample < len(cases):
        step = len(cases) / args.sample
        cases = [cases[int(i * step)] for i in range(args.sample)]
    cases = cases[: args.limit] if args.limit else cases
    runner = Runner(team, turn_timeout=args.turn_timeout)
    print(f"{len(cases)} cases on {args.model} at {args.base_url}", file=sys.stderr)
    started = time.monotonic()

    def progress(done: int, total: int) -> None:
        print(f"  {done}/{total} conversations, {time.monotonic() - started:.0f} s",
              file=sys.stderr, flush=True)

    report = asyncio.run(run_eval(runner, cases, model=args.model, repeat=args.repeat,
                                  concurrency=args.concurrency, progress=progress,
                                  max_steps=args.max_steps, routing=args.routing,
                                  train=args.train, baseline=args.baseline))
    run = report.run
    single = next((r for r in report.runs if r.baseline is not None), None)
    cases = list(run.cases)  # with --train, the played share only
    shaped = sum(1 for t in run.turns if t.status == "completed" and CALL_SHAPED.match(t.output))
    result: dict[str, Any] = {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "commit": _commit(), "label": args.label, "model": args.model,
        "base_url": args.base_url, "cases_file": args.cases or "support (built in)",
        "tags": args.tag, "limit": args.limit, "sample": args.sample,
        "case_ids": [c.id for c in cases], "turn_timeout": args.turn_timeout,
        "routing": args.routing, "train": args.train,
        "call_shaped_answers": shaped, **run.to_dict(),
    }
    if single is not None:
        result["baseline"] = {"name": single.baseline, **single.to_dict()}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"eval-real-{dt.date.today().isoformat()}" + (f"-{args.label}" if args.label else "")
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False,
                                                 default=str) + "\n", encoding="utf-8")
    (out / f"{stem}.html").write_text(report.html(f"handoffs eval: {args.model}"),
                                      encoding="utf-8")
    print(summary(result))
    if single is not None:
        print(baseline_summary(result["baseline"]))
    print(f"wrote {out / stem}.json and .html", file=sys.stderr)
    return 0


def summary(result: dict[str, Any]) -> str:
    """The figures the issue tracks, as text."""
    lines = [f"{result['model']} ({result['label'] or 'no label'}): {result['turns']} turns "
             f"in {result['conversations']} conversations",
             f"routing accuracy {result['routing_accuracy']:.1%}, turn accuracy "
             f"{result['accuracy']:.1%}, case accuracy {result['case_accuracy']:.1%}",
             "per route (expected agent: answered right / turns):"]
    if result.get("repeat", 1) > 1:
        plays = ", ".join(f"{a:.0%}" for a in result["accuracy_by_play"]["values"])
        lines.insert(2, "pass^k " + ", ".join(f"k={k} {v:.1%}" for k, v in
                                                result["pass_k"].items())
                     + f"; turn accuracy by play: {plays}")
    for route, r in result["per_route"].items():
        lines.append(f"  {route:<10} {r['right']:>3}/{r['turns']:<3} {r['accuracy']:.1%}")
    lines.append(f"model calls per conversation {result['model_calls_per_conversation']:.1f}"
                 f" ({result['model_calls']} calls)")
    failed = result["failed_turns"]
    lines.append("failed turns by code: " + (", ".join(f"{k} {v}" for k, v in failed.items())
                                             or "none"))
    refused = result["refusals"]
    lines.append("refusals by code: " + (", ".join(f"{k} {v}" for k, v in refused.items())
                                         or "none"))
    lines.append(f"answers that were call-shaped text: {result['call_shaped_answers']}")
    lines.append(f"prompt bytes per conversation {result['prompt_bytes_per_conversation']:.0f}"
                 f", latency p50 {result['latency_p50']:.1f} s, p95 "
                 f"{result['latency_p95']:.1f} s")
    return "\n".join(lines)


def baseline_summary(b: dict[str, Any]) -> str:
    """The single-agent baseline's figures beside the team's (no routing to judge)."""
    failed = ", ".join(f"{k} {v}" for k, v in b["failed_turns"].items()) or "none"
    return (f"baseline {b['name']}: turn accuracy {b['accuracy']:.1%}, case accuracy "
            f"{b['case_accuracy']:.1%}, model calls per conversation "
            f"{b['model_calls_per_conversation']:.1f} ({b['model_calls']} calls), failed "
            f"turns: {failed}, prompt bytes per conversation "
            f"{b['prompt_bytes_per_conversation']:.0f}, latency p50 {b['latency_p50']:.1f} s")


def _commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, timeout=10).stdout.strip() or None
    except OSError:
        return None


if __name__ == "__main__":
    raise SystemExit(main())
