"""The `handoffs` command: chat with a team, run one turn, check and draw a team, measure
how it routes, and look after stored sessions.

TEAM is `path/to/file.py:NAME` or `package.module:NAME` naming a `Team`, a `Runner` or a
function returning one (see `handoffs.cli.loading`); left out, the built-in support team.
Only the standard library is used here, so the package without extras is all `handoffs chat`
needs; each command imports what it uses when it runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .render import Painter

EPILOG = """examples:
  handoffs chat                                  chat with the built-in support team
  handoffs chat examples/support.py:team         ... or with a team of yours
  handoffs run app.py:team "I was charged twice" --session s1
  handoffs check app.py:team                     exit 1 on errors
  handoffs graph app.py:team --format svg -o team.svg
  handoffs sessions list                         (in sqlite:///handoffs.db by default)
  handoffs eval app.py:team cases.jsonl --min-accuracy 0.9   who answers each case
  handoffs eval app.py:team --from-store sqlite:///prod.db --since 7d --model M2
  handoffs replay app.py:team --session s1 --from 2 --model M   where it goes now
  handoffs serve app.py:team --port 8000         the HTTP API, live events, the page
  handoffs worker app.py:team --temporal 127.0.0.1:7233 --task-queue q   durable turns

Offline (no --model, HANDOFFS_MODEL or API key) agents answer with a rule-based model:
the example teams' own rules, or keyword routing along your team's routes.
  handoffs demo --rules                          the demo on those rules, not a script
  handoffs serve --demo airline                  OpenAI's airline demo, offline"""


def _parser() -> argparse.ArgumentParser:
    from .. import __version__
    from .observability import add_options

    parser = argparse.ArgumentParser(
        prog="handoffs", description="A handoff runtime for multi-agent LLM systems.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"handoffs {__version__}")
    parser.add_argument("--no-color", action="store_true", help="plain output")
    parser.add_argument("--traceback", action="store_true",
                        help="on an error, print the whole traceback (and its cause)")
    sub = parser.add_subparsers(dest="command", metavar="command")

    demo = sub.add_parser("demo", help="play the support-team example (zero set-up)")
    demo.add_argument("--model", default=None,
                      help="a real model, e.g. openai:gpt-4.1-mini (default: scripted, "
                      "or HANDOFFS_MODEL when set)")
    demo.add_argument("--scripted", action="store_true",
                      help="play the offline script even when a model or API key is set")
    demo.add_argument("--rules", action="store_true",
                      help="play it offline on the rule-based model (keyword rules and "
                      "templates that answer any message), not the script")
    add_options(demo, "error")

    team_help = "FILE.py:NAME or package.module:NAME (default: the built-in support team)"

    def turn_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--session", default=None, help="session id (default: a new one)")
        p.add_argument("--model", default=None, help="e.g. openai:gpt-4.1-mini")
        p.add_argument("--store", default=None,
                       help="memory://, sqlite:///path.db or postgresql://... (default: a "
                       "loaded Runner's store, HANDOFFS_STORE, or sqlite:///handoffs.db)")
        p.add_argument("--offline", action="store_true",
                       help="the offline model for every agent, even when a key is set")
        add_options(p, "error")

    run = sub.add_parser("run", help="run one turn and print who answered and every handoff",
                         usage="handoffs run [-h] [options] [TEAM] MESSAGE")
    run.add_argument("args", nargs="+", metavar="[TEAM] MESSAGE",
                     help=f"TEAM: {team_help}; MESSAGE: the user's message")
    turn_options(run)
    run.add_argument("--json", action="store_true", help="the events as JSON lines")

    chat = sub.add_parser("chat", help="chat with a team in the terminal")
    chat.add_argument("team", nargs="?", default=None, metavar="TEAM", help=team_help)
    turn_options(chat)

    check = sub.add_parser("check", help="check a team statically; exit 1 on errors")
    check.add_argument("team", nargs="?", default=None, metavar="TEAM", help=team_help)
    check.add_argument("--json", action="store_true", help="findings as one JSON object")

    graph = sub.add_parser("graph", help="draw a team's handoff graph")
    graph.add_argument("team", nargs="?", default=None, metavar="TEAM", help=team_help)
    graph.add_argument("--format", choices=("mermaid", "dot", "svg"), default="mermaid")
    graph.add_argument("-o", "--output", default=None, help="write to FILE, not stdout")

    serve = sub.add_parser("serve", help="serve a team over HTTP (needs handoffs[server])")
    serve.add_argument("team", nargs="?", default=None, metavar="TEAM", help=team_help)
    serve.add_argument("--demo", nargs="?", const="support", default=None,
                       choices=("support", "airline"), metavar="support|airline",
                       help="a built-in example team on the offline model: the support "
                       "team (bare --demo) or the airline (OpenAI's customer-service demo)")
    serve.add_argument("--store", default=None,
                       help="memory://, sqlite:///path.db or postgresql://... (default: a "
                       "loaded Runner's store, HANDOFFS_STORE, or sqlite:///handoffs.db)")
    serve.add_argument("--model", default=None, help="e.g. openai:gpt-4.1-mini")
    serve.add_argument("--offline", action="store_true",
                       help="the offline model for every agent, even when a key is set")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--workers", type=int, default=1, help="server processes")
    serve.add_argument("--operator-key", default=None,
                       help="opens operator routes (default: HANDOFFS_OPERATOR_KEY); "
                       "other users of the machine can read a command line: prefer "
                       "--operator-key-file or the environment")
    serve.add_argument("--operator-key-file", default=None, metavar="PATH",
                       help="read the operator key from PATH (default: "
                       "HANDOFFS_OPERATOR_KEY_FILE)")
    serve.add_argument("--rate-limit", default=None, metavar="N/PERIOD",
                       help="per client: at most N new sessions and turns per PERIOD "
                       "(s, min, h), e.g. 30/min (default: no limit)")
    serve.add_argument("--cors", action="append", default=[], metavar="ORIGIN",
                       help="allow browser calls from ORIGIN (repeatable; default: none)")
    add_options(serve, "info")
    serve.add_argument("--metrics", action="store_true",
                       help="count handoffs, turns and model calls for GET /metrics "
                       "(needs handoffs[prometheus])")
    serve.add_argument("--inspect", action="store_true",
                       help="record every model call's request and response for the "
                       "inspector page (/inspect, operator key); texts only when "
                       "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true")
    serve.add_argument("--trace-url", default=None, metavar="URL",
                       help="link the inspector's turns to their traces, e.g. "
                       "http://localhost:16686/trace/{trace_id}")
    serve.add_argument("--a2a", action="store_true",
                       help="also serve the team as an A2A agent: its card at "
                       "/.well-known/agent-card.json, JSON-RPC at /a2a (needs handoffs[a2a])")
    serve.add_argument("--agui", action="store_true",
                       help="also stream turns as AG-UI events at POST /v1/agui "
                       "(needs handoffs[agui])")
    serve.add_argument("--mcp", action="store_true",
                       help="also serve the team as an MCP server at /mcp (Streamable "
                       "HTTP): its ask_team tool runs a turn (needs handoffs[mcp])")

    serve.add_argument("--temporal", default=None, metavar="HOST:PORT",
                       help="send turns to Temporal workflows run by `handoffs worker` "
                       "(needs handoffs[temporal])")
    serve.add_argument("--task-queue", default="handoffs", help="with --temporal: the "
                       "workers' task queue (default: handoffs)")

    worker = sub.add_parser("worker", help="run a team's turns as Temporal workflows "
                            "(needs handoffs[temporal])")
    worker.add_argument("team", nargs="?", default=None, metavar="TEAM", help=team_help)
    worker.add_argument("--temporal", required=True, metavar="HOST:PORT",
                        help="the Temporal server (e.g. 127.0.0.1:7233)")
    worker.add_argument("--task-queue", default="handoffs",
                        help="the task queue (default: handoffs)")
    worker.add_argument("--namespace", default="default")
    worker.add_argument("--store", default=None, help="the store the sessions live in "
                        "(default: a loaded Runner's store, HANDOFFS_STORE, or "
                        "sqlite:///handoffs.db); share it with `handoffs serve`")
    worker.add_argument("--model", default=None, help="e.g. openai:gpt-4.1-mini")
    worker.add_argument("--offline", action="store_true",
                        help="the offline model for every agent, even when a key is set")
    worker.add_argument("--tool-timeout", type=float, default=None, metavar="SECONDS",
                        help="one attempt of a tool call (default: 600)")
    worker.add_argument("--heartbeat", type=float, default=None, metavar="SECONDS",
                        help="a running tool's worker counts as dead after this long "
                        "without a heartbeat (default: 30)")

    sessions = sub.add_parser("sessions", help="list, show, export, import, delete, fork, "
                              "rewind sessions")
    actions = sessions.add_subparsers(dest="action", metavar="action", required=True)
    store_help = "the store (default: HANDOFFS_STORE or sqlite:///handoffs.db)"
    listing = actions.add_parser("list", help="the most recent sessions")
    listing.add_argument("--limit", type=int, default=50)
    listing.add_argument("--json", action="store_true", help="one JSON object a line")
    show = actions.add_parser("show", help="the transcript and the handoff timeline")
    show.add_argument("id")
    show.add_argument("--team", default=None, help=f"for agents' names and colours: {team_help}")
    show.add_argument("--json", action="store_true", help="the session as JSON")
    export = actions.add_parser("export", help="the session as JSON (to import elsewhere)")
    export.add_argument("id")
    export.add_argument("-o", "--output", default=None, help="write to FILE, not stdout")
    imp = actions.add_parser("import", help="store a session from an export")
    imp.add_argument("file", help="an export's file, or - for standard input")
    imp.add_argument("--replace", action="store_true", help="overwrite a session of that id")
    delete = actions.add_parser("delete", help="delete a session")
    delete.add_argument("id")
    fork = actions.add_parser("fork", help="a new session: this one as it was before a turn")
    fork.add_argument("id")
    fork.add_argument("--as", dest="new_id", default=None, metavar="NEW_ID",
                      help="the fork's id (default: ID-fork-<random>)")
    rewind = actions.add_parser("rewind", help="cut a session back to before a turn "
                                "(what is cut is kept, see undo-rewind)")
    rewind.add_argument("id")
    for p in (fork, rewind):
        p.add_argument("--turn", type=int, required=True, metavar="N",
                       help="the turn (1 is the first user message)")
    undo = actions.add_parser("undo-rewind", help="put back what the last rewind cut")
    undo.add_argument("id")
    for p in (fork, rewind, undo):
        p.add_argument("--json", action="store_true", help="the session as JSON")
    for p in (listing, show, export, imp, delete, fork, rewind, undo):
        p.add_argument("--store", default=None, help=store_help)
    from .replay import add_parser as add_replay

    add_replay(sub, team_help, store_help)
    from .evaluate import add_parser as add_eval

    add_eval(sub, team_help, store_help)
    stats = sub.add_parser("stats", help="per route: requests, refusals by code, failures")
    stats.add_argument("--store", default=None, help=store_help)
    stats.add_argument("--since", default=None, help="a window: 30m, 24h, 7d, or a Unix time")
    stats.add_argument("--json", action="store_true", help="the statistics as JSON")
    stats.add_argument("--prices", default=None, metavar="FILE",
                       help="a JSON price table (per model: input, cached_input, "
                       "cache_write, output, dollars per million tokens): also report the "
                       "cost per conversation; without one no cost is shown")
    stats.add_argument("--guardrails", action="store_true",
                       help="also count each guardrail's checks, trips and replies (read "
                       "from the stored events)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `handoffs` console script."""
    parser = _parser()
    args = parser.parse_args(argv)
    from ..errors import HandoffsError

    try:
        return _command(parser, args)
    except HandoffsError as exc:
        if args.traceback:
            import traceback

            traceback.print_exception(exc, file=sys.stderr)
        print(f"handoffs: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`handoffs run --json ... | head`): stop quietly, and keep
        # Python from complaining again when it flushes stdout at exit.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _command(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    from .render import Painter, use_color

    color = use_color(sys.stdout, args.no_color)
    if args.command in ("demo", "run", "chat"):
        from ..log import failures_shown_elsewhere
        from . import observability

        failures_shown_elsewhere()  # these print every failed turn themselves
        observability.setup(args, "error")  # --log-level, --otlp (serve: in its workers)
    if args.command == "demo":
        from ..demo import run_demo

        if args.rules and (args.model or args.scripted):
            parser.error("demo --rules plays the rule-based model; leave out --model and "
                         "--scripted")
        return asyncio.run(run_demo(model=args.model, color=color, scripted=args.scripted,
                                    rules=args.rules))
    if args.command == "check":
        return _check(args.team, args.json, Painter(None, color), args.traceback)
    from .loading import load_target, team_of

    if args.command == "graph":
        from .graph import render

        text = render(team_of(load_target(args.team)), args.format)
        if args.output:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
            print(f"wrote {args.output}", file=sys.stderr)
        else:
            sys.stdout.write(text)
        return 0
    if args.command in ("run", "chat"):
        from .runners import make_runner

        if args.command == "run":
            if len(args.args) > 2:
                parser.error("run takes [TEAM] MESSAGE; quote the message")
            spec, text = (None, args.args[0]) if len(args.args) == 1 else args.args
        else:
            spec, text = args.team, ""
        target = load_target(spec)
        setup = make_runner(target, args.model, args.store, args.offline)
        painter = Painter(setup.runner.team, color)
        if args.command == "chat":
            from .chat import Chat

            return Chat(setup, args.session, painter).loop()
        from .turn import new_session_id, run_once

        return asyncio.run(run_once(setup, args.session or new_session_id(), text, args.json,
                                    painter))
    if args.command == "serve":
        from .serve import serve

        demo = args.demo  # a built-in example: its team, on the offline model
        team = (None if demo == "support" else f"handoffs.examples.{demo}:build_team"
                ) if demo else args.team
        return serve(team, args.store, args.model,
                     args.offline or bool(demo), args.host, args.port, args.workers,
                     args.operator_key, args.cors, args.log_level, args.metrics,
                     args.operator_key_file, args.rate_limit, args.otlp, args.inspect,
                     args.trace_url, a2a=args.a2a, agui=args.agui, mcp=args.mcp,
                     temporal=args.temporal, task_queue=args.task_queue)
    if args.command == "worker":
        from .worker import worker

        return worker(args.team, args.temporal, args.task_queue, args.store, args.model,
                      args.offline, args.namespace, args.tool_timeout, args.heartbeat)
    if args.command == "sessions":
        from .runners import existing_store, store_url
        from .sessions import sessions_command

        team = team_of(load_target(args.team)) if getattr(args, "team", None) else None
        url = store_url(args.store)
        if args.action != "import":  # only an import may start a new database
            existing_store(url)
        return asyncio.run(sessions_command(args.action, url, args, Painter(team, color)))
    if args.command == "replay":
        from .replay import replay_command

        return replay_command(args, color)
    if args.command == "eval":
        if args.from_store:
            from .traffic import traffic_command

            return traffic_command(args, color)
        from .evaluate import eval_command

        return eval_command(args, color)
    if args.command == "stats":
        from .runners import existing_store, store_url
        from .stats import stats_command

        return asyncio.run(stats_command(existing_store(store_url(args.store)), args.since,
                                         args.json, args.prices, args.guardrails))
    parser.print_help()
    return 0


def _check(spec: str | None, as_json: bool, p: Painter, show_traceback: bool = False) -> int:
    from ..errors import HandoffsError
    from .check import Finding, check_team
    from .loading import load_target, team_of

    try:
        findings = check_team(team_of(load_target(spec)))
    except HandoffsError as exc:
        if show_traceback:
            import traceback

            traceback.print_exception(exc, file=sys.stderr)
        findings = [Finding("error", exc.code, str(exc))]
    errors = sum(1 for f in findings if f.level == "error")
    warnings = len(findings) - errors
    if as_json:
        print(json.dumps({"ok": errors == 0, "errors": errors, "warnings": warnings,
                          "findings": [f.to_dict() for f in findings]}, indent=2))
    else:
        for f in findings:
            head = p.error("error  ") if f.level == "error" else p.warn("warning")
            print(f"{head} {f.code}: {f.message}")
        summary = f"{errors} error{'s' * (errors != 1)}, {warnings} warning" \
                  f"{'s' * (warnings != 1)}"
        print(p.sgr(summary, "1" if errors else "32") if findings else p.sgr("ok: no problems "
              "found", "32"))
    return 1 if errors else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
