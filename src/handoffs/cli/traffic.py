"""`handoffs eval --from-store URL`: the user messages of stored sessions replayed on TEAM
and a model, and where the answering agent differs, turn by turn (`eval.traffic`).

    handoffs eval app.py:team --from-store sqlite:///prod.db --since 7d --model M2
    handoffs eval new_app.py:team --from-store postgresql://... --limit 500 --json

The source store is only read; the replays run in a memory store (or in `--store`, which
keeps them, and must be another store).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from ..errors import HandoffsError


def traffic_command(args: argparse.Namespace, color: bool) -> int:
    """Run `handoffs eval --from-store` as parsed; the exit status (1 under
    `--min-accuracy`: the share of turns the same agent answered)."""
    from ..eval.traffic import replay_traffic
    from ..eval.traffic_render import traffic_html, traffic_text
    from .evaluate import ProgressBar, _default_model, _positionals, _threshold
    from .loading import load_target
    from .runners import describe_store, existing_store
    from .stats import parse_since

    spec, cases = _positionals(args.args)
    _refuse_case_options(args, cases)
    target = load_target(spec)
    source = existing_store(args.from_store)
    if args.store is not None and args.store == source:
        raise HandoffsError("--store is where the replays are kept; it cannot be the store "
                            "they are read from (--from-store), which is never written to.",
                            code="invalid_argument")
    since = parse_since(args.since)
    threshold = _threshold(args.min_accuracy)
    model = args.model[0] if args.model else _default_model(target)
    print(f"handoffs eval: replaying sessions of {describe_store(source)} on "
          f"{model or 'the runner’s own model'}", file=sys.stderr)
    bar = ProgressBar(sys.stderr, done="sessions replayed") if sys.stderr.isatty() else None
    try:
        found = asyncio.run(replay_traffic(
            source, target, model=model, since=since, limit=args.limit, scratch=args.store,
            concurrency=args.concurrency, progress=bar.update if bar else None,
            max_steps=args.max_steps))
    finally:
        if bar is not None:
            bar.close()
    if args.html:
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(traffic_html(found))
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps(found.to_dict(), indent=2, ensure_ascii=False, default=str))
    else:
        sys.stdout.write(traffic_text(found, color))
    if threshold is not None and found.agreement < threshold:
        print(f"below --min-accuracy {threshold:.1%}: the same agent answered "
              f"{found.agreement:.1%} of the replayed turns", file=sys.stderr)
        return 1
    return 0


def _refuse_case_options(args: argparse.Namespace, cases: str | None) -> None:
    """Options of case files mean nothing for stored traffic: say so, not ignore them."""
    given = [name for name, on in (
        ("case file", cases is not None), ("--repeat", args.repeat != 1),
        ("--baseline", args.baseline is not None), ("--history", bool(args.history)),
        ("--tag", bool(args.tag)), ("--from-session", bool(args.from_session)),
        ("-o", args.output is not None)) if on]
    if len(args.model) > 1:
        given.append("second --model")
    if given:
        raise HandoffsError(f"--from-store replays stored sessions once on one model; it "
                            f"takes no {', '.join(given)}.", code="invalid_argument")
