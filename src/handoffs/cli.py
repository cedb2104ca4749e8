"""The `handoffs` command."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `handoffs` console script."""
    parser = argparse.ArgumentParser(
        prog="handoffs", description="A handoff runtime for multi-agent LLM systems.")
    sub = parser.add_subparsers(dest="command", metavar="command")
    demo = sub.add_parser("demo", help="play the support-team example")
    demo.add_argument("--model", default=None,
                      help="a real model, e.g. openai:gpt-4.1-mini (default: scripted, "
                      "or HANDOFFS_MODEL when set)")
    demo.add_argument("--scripted", action="store_true",
                      help="play the offline script even when a model or API key is set")
    demo.add_argument("--no-color", action="store_true", help="plain output")
    sub.add_parser("graph", help="print the support team's handoff graph (Mermaid)")
    args = parser.parse_args(argv)
    from .errors import HandoffsError

    try:
        return _command(parser, args)
    except HandoffsError as exc:
        print(f"handoffs: {exc}", file=sys.stderr)
        return 2


def _command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if args.command == "demo":
        from .demo import run_demo

        color = not args.no_color and sys.stdout.isatty() and "NO_COLOR" not in os.environ
        return asyncio.run(run_demo(model=args.model, color=color, scripted=args.scripted))
    if args.command == "graph":
        from .examples.support import build_team

        print(build_team().mermaid(), end="")
        return 0
    parser.print_help()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
