"""`handoffs replay`: play a stored conversation again from a turn, on a team and model, and
print where each turn went then and now.

    handoffs replay app.py:team --session s-42 --from 2 --model openai:gpt-4.1-mini
    handoffs replay app.py:team --session s-42 --from 2 --json

The session is forked before the turn (the original is unchanged); see `runtime.replay`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..runtime.replay import Replay
    from .render import Painter


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], team_help: str,
               store_help: str) -> None:
    """The `replay` command's options."""
    p = sub.add_parser(
        "replay", help="play a stored session again from a turn and diff the routing",
        description="Fork the session before turn N, send its user messages from turn N "
        "on again to TEAM with its model (or --model), and print, per turn, the agent that "
        "answered then and now, the handoffs, and whether the routing is the same.")
    p.add_argument("team", nargs="?", default=None, help=f"TEAM: {team_help}")
    p.add_argument("--session", required=True, metavar="ID", help="the stored session")
    p.add_argument("--from", dest="from_turn", type=int, required=True, metavar="N",
                   help="the first turn played again (1 is the first user message)")
    p.add_argument("--model", default=None, metavar="M",
                   help="the model every agent uses ('offline' for the rule-based one; "
                   "default: the team's, HANDOFFS_MODEL, an API key's, else offline)")
    p.add_argument("--offline", action="store_true", help="the offline model for every agent")
    p.add_argument("--store", default=None, help=store_help)
    p.add_argument("--json", action="store_true", help="the replay as JSON")


def replay_command(args: Any, color: bool) -> int:
    """Run `handoffs replay`; the exit code (0, whatever the routing)."""
    from .loading import load_target
    from .render import Painter
    from .runners import existing_store, make_runner, store_url

    url = existing_store(store_url(args.store))
    setup = make_runner(load_target(args.team), args.model, url, args.offline)
    found = asyncio.run(_replay(setup.runner, args.session, args.from_turn))
    if args.json:
        print(json.dumps(found.to_dict(), ensure_ascii=False, indent=2))
        return 0
    p = Painter(setup.runner.team, color)
    for line in table(found, p):
        print(line)
    print(p.dim(f"model: {setup.model}"))
    return 0


async def _replay(runner: Any, session_id: str, from_turn: int) -> Replay:
    try:
        found: Replay = await runner.replay(session_id, from_turn)
    finally:
        await runner.store.close()
    return found


def table(found: Replay, p: Painter) -> list[str]:
    """The routing diff as lines: one row per turn, then the totals."""
    rows = [("turn", "user", "then", "now", "routing")]
    for t in found.turns:
        rows.append((str(t.turn), _clip(t.text, 32), t.original.hops, t.new.hops,
                     t.routing))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    out = []
    for i, r in enumerate(rows):
        cells = "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False))
        line = f"{cells}  {r[4]}"
        if i == 0:
            line = p.sgr(line, "1")
        elif r[4] != "same":
            line = cells + "  " + p.sgr(r[4], "33")
        out.append(line)
    tot = found.totals
    same = sum(1 for t in found.turns if t.routing == "same")
    out.append("")
    out.append(f"{same} of {len(found.turns)} turns routed the same; replayed in "
               f"{found.replay_id} ({tot.model_calls} model calls, {tot.prompt_bytes:,} "
               f"prompt bytes, {tot.tokens:,} tokens)")
    if found.stopped:
        out.append(p.sgr(f"stopped at {found.stopped}", "33"))
    return out


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[:n - 1] + "…"
