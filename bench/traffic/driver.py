"""What every framework's traffic driver shares (stdlib only: runs in every venv).

A driver builds the scenario's team in its framework, with the framework's own OpenAI-
compatible model class pointed at the traffic server, and plays the six user turns of
:mod:`scenario` as one conversation, ``--reps`` times (a fresh conversation each time, at
``--base-url`` with ``{conv}`` replaced by the conversation's number). It times each turn
(``time.perf_counter`` around the framework's call, HTTP hops to the server included) and,
outside the timing, checks the turn's answer and the agent that gave it, read from the
framework's own result. It prints one JSON object; a failed check exits 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import scenario

API_KEY = "sk-traffic-bench"
"""Sent to the local server, which ignores it (some clients refuse to start without one)."""


class CheckFailed(Exception):
    pass


@dataclass
class Answer:
    """One turn's outcome, as the framework reports it."""

    text: str
    agent: str


class Driver:
    """One framework's side: build a conversation, play one turn, read its outcome."""

    framework = ""
    version = ""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args

    async def conversation(self, base_url: str, conv: int) -> Any:
        raise NotImplementedError

    async def turn(self, conv: Any, text: str) -> Any:
        """Play one user turn (timed)."""
        raise NotImplementedError

    async def outcome(self, conv: Any, result: Any) -> Answer:
        """The turn's answer and final agent, from the framework's result (not timed)."""
        raise NotImplementedError

    async def close(self, conv: Any) -> None:
        return None

    def label(self) -> str:
        return self.framework


async def play(driver: Driver, args: argparse.Namespace) -> dict[str, Any]:
    turns: list[dict[str, Any]] = []
    for rep in range(args.reps):
        conv = await driver.conversation(args.base_url.format(conv=rep), rep)
        for k, text in enumerate(scenario.USER):
            t0 = time.perf_counter()
            result = await driver.turn(conv, text)
            dt = time.perf_counter() - t0
            got = await driver.outcome(conv, result)
            where = f"conversation {rep} turn {k + 1}"
            if got.text.strip() != scenario.ANSWERS[k]:
                raise CheckFailed(f"{where}: answer {got.text!r} != {scenario.ANSWERS[k]!r}")
            if got.agent != scenario.ANSWERED_BY[k]:
                raise CheckFailed(f"{where}: answered by {got.agent!r}, "
                                  f"not {scenario.ANSWERED_BY[k]!r}")
            turns.append({"conversation": rep, "turn": k, "wall_s": dt, "agent": got.agent})
        await driver.close(conv)
    return {"turns": turns, "conversations": args.reps}


def parse(argv: list[str] | None, views: tuple[str, ...] = ()) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Play the traffic scenario against the server.")
    p.add_argument("--base-url", required=True,
                   help="OpenAI base URL with {conv}, e.g. http://127.0.0.1:8000/c{conv}/v1")
    p.add_argument("--reps", type=int, default=3, help="conversations, one after another")
    if views:
        p.add_argument("--view", choices=views, default=views[0])
    return p.parse_args(argv)


def main(make: Callable[[argparse.Namespace], Driver], argv: list[str] | None = None,
         views: tuple[str, ...] = ()) -> None:
    args = parse(argv, views)
    driver = make(args)
    try:
        body = asyncio.run(play(driver, args))
    except CheckFailed as exc:
        print(f"{driver.label()}: check failed: {exc}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps({"framework": driver.framework, "label": driver.label(),
                      "version": driver.version, "python": sys.version.split()[0],
                      "view": getattr(args, "view", None), **body}))
