"""The entry agent's first routing decision on a real model, alone: one model call per
case instead of whole conversations, so a routing mode, a route order or a prompt can be
compared on every labelled case in minutes (issue 42, "the route list's order is not a
signal: measure it").

    bash ../shared/real-llm/setup.sh serve          # a real small model, offline
    export OPENAI_BASE_URL=http://127.0.0.1:8082/v1 OPENAI_API_KEY=local
    .venv/bin/python bench/routing_decision.py --routing tools --order declared,reversed
    .venv/bin/python bench/routing_decision.py --routing choice --repeat 3
    .venv/bin/python bench/routing_decision.py --routing calibrated --order declared,reversed
    .venv/bin/python bench/routing_decision.py --routing choice+examples --train 0.5

For each case's first user message (the conversation starts at the team's entry agent),
the runtime builds the entry agent's request exactly as a turn does (`Runner.run`, the
team routing by `--routing`), and the first model response is the decision: the transfer
tool it called, or the agent itself when it answered (`tools`); the `route` of its
constrained choice, or `invalid` (`choice`). Every later model call of the turn is
answered offline ("ok"), so each case costs one real call, cut short once it decided:
an answer is streamed and its first words are enough (a call written as text is held
back by the adapter until it is whole, at most 100 tokens); a choice gets 40 tokens.
The right decision is the first hop from the entry agent towards any agent the case
accepts (billing for a refund case: refunds is reached through billing). `--order
reversed` reverses every agent's routes; `--order declared,reversed` plays both, side by
side, in one run (alternating case by case, so a slow spell of the machine falls on
both). `--repeat k` plays every case k times: pass^k is the share of cases decided right
every time. `--prompt` tries other forms of the choice's question. Writes
bench/results/routing-decision-<date>[-<label>].json and prints per route, the
confusion table and how often each option was chosen. Never part of `make test`.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime as dt
import json
import os
import re
import statistics
import sys
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DEFAULT_MODEL = "openai:qwen2.5-coder-0.5b?text_tool_calls=true"
ORDERS = ("declared", "reversed")
ANSWER_CHARS = 24
"""Shown text this long (the adapter holds back what may be a call) is an answer."""
MAX_TOKENS = {"tools": 100, "choice": 40, "calibrated": 12}
"""Output tokens of the decision call: enough for a whole transfer call written as text
(a call cut short is a 500 from llama-server: it cannot parse it), or a choice's name
(a calibrated choice reads its route's first token: 12 are enough)."""
CALLED = re.compile(r'"name"\s*:\s*"transfer_to_(\w+)"')
ROUTED = re.compile(r'"route"\s*:\s*"([^"]+)"')


class FirstCall:
    """A model whose first call per case goes to the real model (and is kept); every
    later call of the turn is answered "ok" offline."""

    def __init__(self, inner: Any, max_tokens: int, early: bool = False) -> None:
        self.inner = inner
        self.max_tokens = max_tokens
        self.early = early
        """Stream, and stop at the first words of an answer: the agent answers itself
        (a text tool call is held back by the adapter until it is whole)."""
        self.seen: list[tuple[Any, Any, float]] = []  # (request, response, seconds)
        self.armed = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, request: Any) -> Any:
        from handoffs.models.base import ModelResponse

        if not self.armed and request.logprobs is None:  # (a calibrated choice and its
            return ModelResponse(text="ok")               # priors all go to the model)
        self.armed = False
        started = time.monotonic()
        # The decision is in the first tokens (a call's or a choice's name): the rest of
        # an answer costs minutes on a small machine and decides nothing.
        request = dataclasses.replace(request, settings={**request.settings,
                                                         "max_tokens": self.max_tokens})
        try:
            response = await (self._answer_or_call(request) if self.early
                              else self.inner.complete(request))
        except Exception as exc:  # kept as the decision `error`, then the turn's to handle
            self.seen.append((request, exc, time.monotonic() - started))
            raise
        self.seen.append((request, response, time.monotonic() - started))
        return response

    async def _answer_or_call(self, request: Any) -> Any:
        from handoffs.models.base import ModelResponse, TextDelta

        text = ""
        pieces = self.inner.stream(request)
        try:
            async for piece in pieces:
                if isinstance(piece, TextDelta):
                    text += piece.text
                    if len(text.strip()) >= ANSWER_CHARS:  # words, not a call: answered
                        return ModelResponse(text=text)
                    continue
                return piece
        finally:
            await pieces.aclose()  # the server stops generating
        return ModelResponse(text=text)

    async def stream(self, request: Any) -> AsyncIterator[Any]:
        yield await self.complete(request)


def _variant(name: str) -> None:
    """Experimental forms of the constrained choice's prompt (`--prompt`), patched over
    `RoutingChoice.choice_request`; `current` is the library's own."""
    if name == "current":
        return
    from handoffs.core.messages import UserMessage
    from handoffs.core.output import OutputSpec
    from handoffs.models import routing as r
    from handoffs.models.strict import strict_compatible

    def choice_request(self: Any, request: Any, options: list[Any]) -> Any:
        if name in ("described", "reason_first"):  # what each is for, then its name;
            lines = [f"- {_what(o)}: \"{o.target.name}\"" for o in options]  # self last
            lines.append(f'- anything else (you answer it yourself): "{self.agent}"')
        else:
            lines = [f'- "{o.target.name}": {o.spec.description}' for o in options]
            lines.append(f'- "{self.agent}": none of the above: you answer it yourself.')
        question = ("Who should handle the user's latest message? The options:\n"
                    + "\n".join(lines) + "\nAnswer only with a JSON object: \"route\" (one "
                    "of the names above) and \"reason\" (why, in a few words).")
        system = r._without(request.system, self.handoff_text)
        schema = r._schema(self.agent, options)
        schema["properties"]["route"]["enum"] = [*(o.target.name for o in options), self.agent]
        if name == "reason_first":  # the model writes why before it names the route
            props = schema["properties"]
            schema["properties"] = {"reason": props.pop("reason"), **props}
            schema["required"] = ["reason", *(k for k in schema["required"] if k != "reason")]
        spec = OutputSpec(r.CHOICE_NAME, schema, strict_compatible(schema), None)
        messages = request.messages
        if name in ("none_last", "described", "reason_first"):
            system = (f"{system}\n\n" if system else "") + question
        elif name == "ask_last":
            messages = (*messages, UserMessage(question, self.agent))
        return dataclasses.replace(request, system=system, messages=tuple(messages),
                                   tools=(), tool_choice=None, output=spec,
                                   parallel_tool_calls=None)

    r.RoutingChoice.choice_request = choice_request  # type: ignore[method-assign]


def _what(route: Any) -> str:
    """What a route is for: its target's description (its tool's, without the
    "Hand the conversation to X:" lead-in)."""
    text = route.target.description or route.spec.description
    return text.rstrip(".")


def first_hops(team: Any) -> dict[str, str]:
    """For every agent the entry agent can reach by one-way routes, the first hop of the
    shortest way there (the entry agent itself for itself)."""
    entry = team.entry
    hops = {entry: entry}
    queue = deque([entry])
    while queue:
        name = queue.popleft()
        for route in team.plan(name).routes.values():
            target = route.target.name
            if route.handoff.returns or target in hops:
                continue
            hops[target] = target if name == entry else hops[name]
            queue.append(target)
    return hops


def reordered(team: Any, order: str) -> Any:
    from handoffs.eval.examples import rebuilt

    if order == "declared":
        return team
    agents = [a if not a.handoffs else dataclasses.replace(a, handoffs=tuple(reversed(a.handoffs)))
              for a in team.agents]
    return rebuilt(team, agents)


def decision(response: Any, mode: str, entry: str, result: Any = None) -> str:
    """What the first response decided: an agent's name, `invalid` (a choice that names
    none), or `error` (the call failed: a server's 500 on malformed output, say). A
    calibrated choice's decision is the turn's first handoff (or the entry agent)."""
    if isinstance(response, Exception):
        return "error"
    if mode.startswith("calibrated"):
        made = [r for r in getattr(result, "handoffs", ()) if r.source == entry]
        return made[0].target if made else entry
    if mode.startswith("choice"):  # the JSON may be cut short: its route comes first
        routed = ROUTED.search(response.text)
        return routed.group(1) if routed else "invalid"
    for call in response.tool_calls:
        if call.name.startswith("transfer_to_"):
            return call.name.removeprefix("transfer_to_")
    called = CALLED.search(response.text)  # a call written as text, cut short
    return called.group(1) if called else entry


async def play(args: argparse.Namespace) -> dict[str, Any]:
    from handoffs import Runner
    from handoffs.cli.loading import load_target, team_of
    from handoffs.eval import load_cases, support_cases
    from handoffs.eval.examples import split_cases, with_examples, with_routing
    from handoffs.models.registry import get_model

    _variant(args.prompt)
    base = team_of(load_target(args.team))
    cases = load_cases(args.cases) if args.cases else support_cases()
    taught: list[Any] = []
    if args.train:
        taught, cases = split_cases(cases, args.train)
    mode, _, examples = args.routing.partition("+")
    if examples and not taught:
        raise SystemExit("--routing ...+examples needs --train SHARE")
    hops = first_hops(base)
    entry = base.entry
    orders = args.order.split(",")
    teams = {}
    for order in orders:
        team = with_routing(reordered(base, order), mode)
        teams[order] = with_examples(team, taught) if examples else team
    if args.model == "offline":  # the keyword rule model: checks this script, no server
        from handoffs.cli.offline import offline_model

        inner = offline_model(base)
    else:
        inner = get_model(args.model)
    plays: dict[str, list[dict[str, Any]]] = {o: [] for o in orders}
    started = time.monotonic()
    # One runner per order, so a calibrated choice asks its priors once (on the first case).
    models = {o: FirstCall(inner, MAX_TOKENS[mode], early=mode == "tools") for o in orders}
    runners = {o: Runner(teams[o], model=models[o], max_steps=4) for o in orders}
    for k in range(args.repeat):
        for i, case in enumerate(cases):
            first = case.turns[0]
            right = sorted({hops[a] for a in first.agents if a in hops})
            for order in (orders if i % 2 == 0 else orders[::-1]):
                model = models[order]
                model.armed, model.seen = True, []
                done = await runners[order].run(f"{case.id}-{order}-{k}", first.user)
                if not model.seen:
                    continue
                request, response, seconds = model.seen[0]
                decided = decision(response, args.routing, entry, done)
                plays[order].append({
                    "case": case.id, "play": k, "user": first.user, "right": right,
                    "decided": decided, "ok": decided in right, "seconds": round(seconds, 2),
                    "answer": (response.text if not isinstance(response, Exception)
                               else f"{type(response).__name__}: {response}")[:300],
                    "calls": [c.name for c in getattr(response, "tool_calls", ())],
                    "options": [s.name for s in request.tools] or (
                        request.output.schema["properties"]["route"]["enum"]
                        if request.output is not None else [])})
        print(f"  play {k + 1}/{args.repeat}: {time.monotonic() - started:.0f} s",
              file=sys.stderr, flush=True)
    return {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "label": args.label, "model": args.model, "routing": args.routing,
            "prompt": args.prompt,
            "train": args.train, "repeat": args.repeat, "cases": len(cases),
            "orders": {o: figures(p, args.repeat) for o, p in plays.items()},
            "plays": plays}


def figures(plays: list[dict[str, Any]], repeat: int) -> dict[str, Any]:
    by_route: dict[str, list[bool]] = {}
    confusion: dict[str, Counter[str]] = {}
    by_case: dict[str, list[bool]] = {}
    for p in plays:
        want = "/".join(p["right"])
        by_route.setdefault(want, []).append(p["ok"])
        confusion.setdefault(want, Counter())[p["decided"]] += 1
        by_case.setdefault(p["case"], []).append(p["ok"])
    runs = [[p["ok"] for p in plays if p["play"] == k] for k in range(repeat)]
    accuracies = [sum(r) / len(r) for r in runs if r]
    return {
        "accuracy": sum(p["ok"] for p in plays) / len(plays) if plays else 0.0,
        "accuracy_per_run": accuracies,
        "pass_k": (sum(all(v) for v in by_case.values()) / len(by_case)) if by_case else 0.0,
        "per_route": {k: [sum(v), len(v)] for k, v in sorted(by_route.items())},
        "confusion": {k: dict(v) for k, v in sorted(confusion.items())},
        "chosen": dict(Counter(p["decided"] for p in plays)),
        "invalid": sum(p["decided"] == "invalid" for p in plays),
        "errors": sum(p["decided"] == "error" for p in plays),
        "seconds_p50": statistics.median(p["seconds"] for p in plays) if plays else 0.0,
    }


def summary(result: dict[str, Any]) -> str:
    lines = [f"{result['model']}, routing {result['routing']}, {result['cases']} cases x "
             f"{result['repeat']}" + (f", train {result['train']}" if result["train"] else "")]
    for order, f in result["orders"].items():
        runs = ", ".join(f"{a:.0%}" for a in f["accuracy_per_run"])
        lines.append(f"[{order}] accuracy {f['accuracy']:.1%} (runs: {runs}), pass^"
                     f"{result['repeat']} {f['pass_k']:.1%}, invalid {f['invalid']}, errors "
                     f"{f['errors']}, "
                     f"p50 {f['seconds_p50']:.1f} s")
        lines.append("  per route: " + ", ".join(f"{k} {r}/{n}"
                                                 for k, (r, n) in f["per_route"].items()))
        lines.append("  chosen: " + ", ".join(f"{k} {v}" for k, v in
                                              sorted(f["chosen"].items())))
        for want, got in f["confusion"].items():
            lines.append(f"    {want:<10} -> " + ", ".join(f"{k} {v}" for k, v in
                                                          sorted(got.items())))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/routing_decision.py",
                                description=__doc__.split("\n")[0])
    p.add_argument("--model", default=os.environ.get("HANDOFFS_EVAL_MODEL", DEFAULT_MODEL))
    p.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL"))
    p.add_argument("--team", default=None, help="TEAM as `handoffs eval` takes it")
    p.add_argument("--cases", default=None, help="a JSONL case file (default: support)")
    p.add_argument("--routing", default="tools",
                   help="tools, choice, calibrated, or any of them +examples")
    p.add_argument("--order", default="declared",
                   help="declared, reversed, or both: declared,reversed")
    p.add_argument("--prompt", default="current",
                   choices=("current", "none_last", "ask_last", "described", "reason_first"),
                   help="the choice's prompt: the library's, or an experimental form")
    p.add_argument("--train", type=float, default=None, metavar="SHARE")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--label", default="")
    p.add_argument("--out", default=str(RESULTS))
    args = p.parse_args(argv)
    if not args.base_url and args.model != "offline":
        print("bench/routing_decision.py: set OPENAI_BASE_URL (or --base-url); for a real "
              "small model offline: bash ../shared/real-llm/setup.sh serve",
              file=sys.stderr)
        return 2
    if any(o not in ORDERS for o in args.order.split(",")):
        p.error(f"--order: one or more of {', '.join(ORDERS)}")
    if args.base_url:
        os.environ["OPENAI_BASE_URL"] = args.base_url
    os.environ.setdefault("OPENAI_API_KEY", "local")
    result = asyncio.run(play(args))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"routing-decision-{dt.date.today().isoformat()}" + (
        f"-{args.label}" if args.label else "")
    (out / f"{stem}.json").write_text(json.dumps(result, indent=1, ensure_ascii=False)
                                      + "\n", encoding="utf-8")
    print(summary(result))
    print(f"wrote {out / stem}.json", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
