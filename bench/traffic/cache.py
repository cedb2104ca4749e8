"""Prompt-cache hits and cost of the traffic scenario, with the handoff's note in the history
(the stable prefix, issue 44) and in the system text (the layout before it).

    .venv/bin/python bench/traffic/cache.py            # prints the table (make bench-cache)
    .venv/bin/python bench/traffic/cache.py --json     # the figures as JSON
    .venv/bin/python bench/traffic/cache.py --before-src /tmp/old/src   # record the old
                                                        # layout with an older tree instead

handoffs plays the six turns of the traffic scenario (`scenario.py`; our default view,
`own_tools`) against the scripted Chat Completions server (`server.py`), which records
every request body. Each request is then read as an automatic prefix cache reads it
(OpenAI's): its prompt is the tools, then the messages, in order, as compact JSON; the
tokens it would read from the cache are the longest common prefix with the previous
request of the same agent in the conversation (tokens approximated as bytes / 4).
`cached (OpenAI rules)` applies OpenAI's own rules on top: nothing under a 1,024-token
prompt, and hits in 128-token steps.

The layout before issue 44 is the same traffic with the handoff's note moved back to the
end of the system text, as that code composed it (`compose` in `decisions/views.py`):
there while the target had not answered since the handoff, then only when it carried a
payload, an error or earlier results (never, in this scenario). `--before-src` records it
from an older checkout instead (the figures are the same).

Cost: the stated price table (gpt-4.1-mini, dollars per million tokens: input 0.40,
cached input 0.10, output 1.60; OpenAI charges no cache write), output tokens as the
server counts them (the answer's bytes / 4), the same in both layouts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import scenario  # noqa: E402
from server import TrafficServer  # noqa: E402

PRICES = {"input": 0.40, "cached_input": 0.10, "output": 1.60}
"""gpt-4.1-mini, US dollars per million tokens (the scenario's model)."""
NOTE_HEADS = ("# Handoff\n", "# Delegation\n")
TAKING_OVER = "\nAnswer the user now; do not mention the transfer."
KEEPS = ("\nPayload: ", "\nThe error to recover from: ", "\nResults of earlier steps:")
"""What keeps the old layout's note once the target has answered."""
MIN_TOKENS, STEP = 1024, 128
"""OpenAI: prompts from 1,024 tokens are cached, in 128-token increments."""


def record(src: Path, timeout: float = 120.0) -> list[dict[str, Any]]:
    """The request records of one conversation played by the tree at `src`."""
    server = TrafficServer(max_requests=200, max_seconds=timeout + 30).start()
    url = f"http://127.0.0.1:{server.port}/c{{conv}}/v1"
    env = {**os.environ, "PYTHONPATH": str(src)}
    env.pop("OPENAI_BASE_URL", None)
    env.pop("OPENAI_API_KEY", None)
    try:
        proc = subprocess.run(
            [sys.executable, str(HERE / "drive_handoffs.py"), "--base-url", url, "--reps", "1",
             "--view", "own_tools"], cwd=ROOT, capture_output=True, text=True, env=env,
            timeout=timeout)
    finally:
        server.stop()
    if proc.returncode != 0 or server.errors:
        raise SystemExit(f"the scenario did not play through: {proc.stderr.strip()[-800:]} "
                         f"{'; '.join(server.errors[:3])}")
    return sorted(server.records, key=lambda r: r["n"])


def note_in_system(body: dict[str, Any]) -> dict[str, Any]:
    """`body` as the layout before issue 44 sent it: the handoff's note taken out of the
    messages and put at the end of the system text, or left out once the target answered."""
    messages = [dict(m) for m in body["messages"]]
    at = next((i for i, m in enumerate(messages) if m.get("role") == "user"
               and isinstance(m.get("content"), str) and m["content"].startswith(NOTE_HEADS)),
              None)
    if at is None:
        return body
    note = messages.pop(at)["content"]
    answered = any(m.get("role") == "assistant" and m.get("content") for m in messages[at:])
    if answered:
        note = note.replace(TAKING_OVER, "") if any(k in note for k in KEEPS) else ""
    if note:
        system = messages[0]
        assert system.get("role") == "system", "the scenario's agents have instructions"
        system["content"] = f"{system['content']}\n\n{note}"
    return {**body, "messages": messages}


def prompt(body: dict[str, Any]) -> bytes:
    """What a prefix cache keys on: the tools, then each message, as compact JSON."""
    parts = [json.dumps(body.get("tools") or [], separators=(",", ":"), sort_keys=True)]
    parts += [json.dumps(m, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
              for m in body["messages"]]
    return "\n".join(parts).encode()


def common(a: bytes, b: bytes) -> int:
    """The length of the longest common prefix of `a` and `b`."""
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on equal prefixes (bytes compare in C)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def openai_hit(tokens: int, hit: int) -> int:
    """What OpenAI's cache would read of a `tokens`-token prompt sharing `hit` tokens."""
    if tokens < MIN_TOKENS or hit < MIN_TOKENS:
        return 0
    return hit // STEP * STEP


@dataclass
class Figures:
    """One layout's traffic, read as a prefix cache reads it."""

    requests: int = 0
    input_tokens: int = 0
    cached: int = 0
    cached_openai: int = 0
    output_tokens: int = 0
    system_changes: int = 0
    """Requests whose system text differs from the agent's previous request's."""

    def cost(self, cached: int) -> float:
        p = PRICES
        return ((self.input_tokens - cached) * p["input"] + cached * p["cached_input"]
                + self.output_tokens * p["output"]) / 1e6

    def to_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "input_tokens": self.input_tokens,
                "cached_tokens": self.cached, "cached_share": self.cached / self.input_tokens,
                "cached_tokens_openai": self.cached_openai,
                "cached_share_openai": self.cached_openai / self.input_tokens,
                "output_tokens": self.output_tokens, "system_changes": self.system_changes,
                "cost_uncached": self.cost(0), "cost": self.cost(self.cached),
                "cost_openai": self.cost(self.cached_openai)}


def measure(bodies: list[tuple[str, dict[str, Any]]]) -> Figures:
    """The figures of one conversation's requests, each with the agent that made it."""
    f = Figures()
    last: dict[str, tuple[bytes, str]] = {}
    for agent, body in bodies:
        text = prompt(body)
        tokens = len(text) // 4
        system = scenario.system_text(body)
        before = last.get(agent)
        hit = common(before[0], text) // 4 if before is not None else 0
        if before is not None and before[1] != system:
            f.system_changes += 1
        decision = scenario.decide(body)
        f.requests += 1
        f.input_tokens += tokens
        f.cached += hit
        f.cached_openai += openai_hit(tokens, hit)
        f.output_tokens += max(1, len(decision.text or decision.call_arguments) // 4)
        last[agent] = (text, system)
    return f


def table(rows: dict[str, Figures]) -> str:
    """The Markdown table of docs/benchmarks.md."""
    lines = ["| layout | requests | prompt tokens | cached (longest prefix, same agent) | "
             "cached (OpenAI rules) | system text changed | cost / conversation: no cache | "
             "longest prefix cached | OpenAI rules |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, f in rows.items():
        d = f.to_dict()
        lines.append(
            f"| {name} | {f.requests} | {f.input_tokens:,} | {f.cached:,} "
            f"({d['cached_share']:.1%}) | {f.cached_openai:,} ({d['cached_share_openai']:.1%}) "
            f"| {f.system_changes} | ${d['cost_uncached']:.5f} | ${d['cost']:.5f} "
            f"| ${d['cost_openai']:.5f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--src", type=Path, default=ROOT / "src", help="the tree to measure")
    p.add_argument("--before-src", type=Path, default=None,
                   help="record the old layout with this tree instead of moving the note")
    p.add_argument("--json", action="store_true", help="the figures as JSON")
    args = p.parse_args(argv)
    stable = [(r["agent"], r["body"]) for r in record(args.src)]
    if args.before_src is not None:
        before = [(r["agent"], r["body"]) for r in record(args.before_src)]
    else:
        before = [(agent, note_in_system(body)) for agent, body in stable]
    rows = {"note in the system text (before issue 44)": measure(before),
            "note in the history (stable prefix)": measure(stable)}
    if args.json:
        print(json.dumps({k: v.to_dict() for k, v in rows.items()}, indent=2))
    else:
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
