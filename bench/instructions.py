"""Our hot paths in CPU instructions (valgrind's callgrind): figures machine noise cannot move.

Wall-clock figures on a shared machine swing by ×1.5 or more between quiet and busy spells
(docs/benchmarks.md reports ranges for that reason). An instruction count does not: it
compares two commits, or one change, to within a fraction of a percent, whatever else runs.

    python bench/instructions.py                          # this checkout's src/
    python bench/instructions.py --src /tmp/old/src --src src   # two trees side by side
    python bench/instructions.py --json

Figures, per tree (each under the same interpreter, `--python`, default this one):

- turn H=1: instructions per `runner.run` turn with one handoff, on the in-memory store,
  the zero-latency chain model of bench/ours.py; (Ir(N2 turns) - Ir(N1 turns)) / (N2 - N1),
  so start-up and imports cancel out. The garbage collector is off while the turns run: a
  full collection costs tens of millions of instructions, depends on all the process holds,
  and would land in one tree's window and not another's.
- per handoff: (turn at H=5 - turn at H=1) / 4, as figure (a) does with times.
- turn H=1, stream: the same turn through `runner.stream`, every event consumed; and
  stream / run. (Instructions leave out the kernel: the event loop's epoll call costs a
  streamed turn more time than its instruction count shows.)
- turn H=1, SQLite: the `runner.run` turn on a SQLite store in a temporary folder (the
  persisted turn: the commit's encoding and SQL; the file system's own work is the
  kernel's and not counted).
- turn H=1, a 1 KB answer: the `runner.run` turn whose answering agent has a route of
  its own and answers about 1 KB of prose, so the checks an answer goes through before it
  reaches the user (a narrated handoff, an echoed refusal: `core.narration`) read a real
  answer's length, not four letters.
- import: `import handoffs.runtime.runner` in a fresh interpreter minus `pass`, bytecode
  cached (as figure (d) times it).

Needs valgrind (`make bench-instructions` installs Debian's when missing and root). Slow:
callgrind runs Python about 50 times slower; the default takes about two minutes per tree.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WARMUP = 20

# What the child runs: the public API only, so older trees run it too (no bench/ import).
CHILD = '''
import asyncio, collections, gc, json, os, sys
from handoffs import Agent, HandoffPolicy, Runner, Team
from handoffs.core.messages import ToolCall
from handoffs.models import ModelResponse, TextDelta

REPLY = ("Your refund of $129 is on its way: it reaches the card you paid with within "
         "five working days, and you get an email once it has left us. ") * 8

class ChainModel:
    """agent_i hands off to agent_{i+1}; the last answers `done` (bench/ours.py's model),
    or REPLY, a 1 KB answer."""
    def __init__(self, hops, answer="done"):
        self.hops, self.calls, self.answer = hops, 0, answer
    async def complete(self, request):
        self.calls += 1
        i = int(request.agent[6:])
        if i < self.hops:
            return ModelResponse("", (ToolCall(f"call_{self.calls}",
                                               f"transfer_to_agent_{i + 1}",
                                               '{"reason": "next"}'),))
        return ModelResponse(self.answer)
    async def stream(self, request):
        response = await self.complete(request)
        if response.text:
            yield TextDelta(response.text)
        yield response

async def main(hops, turns, mode, warmup):
    reply = mode == "reply"  # the answering agent has a route too: its answer is read
    agents = [Agent(f"agent_{i}", instructions=f"You are agent {i}.",
                    handoffs=[f"agent_{i + 1}"] if i < hops else ["agent_0"] if reply else ())
              for i in range(hops + 1)]
    team = Team(agents, policy=HandoffPolicy(max_handoffs_per_turn=max(hops, 5)))
    store = None
    if mode == "sqlite":
        import tempfile
        store = "sqlite:///" + tempfile.mkdtemp() + "/bench.db"
    answer = REPLY if reply else "done"
    runner = Runner(team, model=ChainModel(hops, answer), max_steps=hops + 5, store=store)
    for k in range(warmup):
        await runner.run(f"w{k}", "go")
    gc.disable()
    calls = None
    if os.environ.get("BENCH_COUNT_CALLS"):  # bench/guard.py: Python calls per function
        calls = collections.Counter()
        def count(frame, event, arg):
            if event == "call":
                code = frame.f_code
                calls[code.co_filename.rsplit("/", 1)[-1] + ":" + code.co_qualname] += 1
        sys.setprofile(count)
    for k in range(turns):
        if mode == "stream":
            events = [e async for e in runner.stream(f"c{k}", "go")]
            output = events[-1].result.output
        else:
            output = (await runner.run(f"c{k}", "go")).output
        assert output == answer, output
    if calls is not None:
        sys.setprofile(None)
        print(json.dumps({k: v / turns for k, v in calls.items()}))

hops, turns, mode, warmup = sys.argv[1:5]
asyncio.run(main(int(hops), int(turns), mode, int(warmup)))
'''


def instructions(python: str, src: Path, args: list[str], keep: Path | None = None) -> int:
    """Instructions callgrind counts for `python <args>` with `src` first on the path
    (its per-function counts written to `keep` when given)."""
    env = child_env(src)
    with tempfile.TemporaryDirectory() as tmp:
        out_file = keep or Path(tmp) / "cg.out"
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}", python,
             *args], env=env, capture_output=True, text=True, check=False)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if out.returncode != 0 or found is None:
        raise SystemExit(f"valgrind {python} {' '.join(args)[:60]} failed "
                         f"(exit {out.returncode}):\n{out.stderr[-2000:]}")
    return int(found.group(1))


def child_env(src: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(src))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # counted runs load bytecode, as users do
    env.pop("BENCH_COUNT_CALLS", None)  # a profiling hook under valgrind counts itself
    env["PYTHONHASHSEED"] = "0"  # the same string hashes, so the same dict probes, each run
    return env


def warm(python: str, src: Path) -> None:
    """Run the workloads once outside valgrind, so every counted run finds bytecode."""
    for args in (["-c", CHILD, "1", "1", "stream", "1"], ["-c", CHILD, "5", "1", "run", "1"],
                 ["-c", CHILD, "1", "1", "sqlite", "1"], ["-c", CHILD, "1", "1", "reply", "1"]):
        subprocess.run([python, *args], check=True, env=child_env(src))


def per_turn(python: str, src: Path, hops: int, mode: str, turns: tuple[int, int],
             keep: tuple[Path, Path] | None = None) -> float:
    """Instructions per turn of `hops` handoffs through `mode` ("run", "stream" or
    "sqlite"); the two runs' per-function counts written to `keep` when given."""
    n1, n2 = turns
    counts = [instructions(python, src, ["-c", CHILD, str(hops), str(n), mode, str(WARMUP)],
                           keep[i] if keep else None)
              for i, n in enumerate((n1, n2))]
    return (counts[1] - counts[0]) / (n2 - n1)


def measure(python: str, src: Path, turns: tuple[int, int]) -> dict[str, float]:
    """The figures for one tree (see the module docstring)."""
    warm(python, src)
    run1 = per_turn(python, src, 1, "run", turns)
    run5 = per_turn(python, src, 5, "run", turns)
    stream1 = per_turn(python, src, 1, "stream", turns)
    sqlite1 = per_turn(python, src, 1, "sqlite", turns)
    reply1 = per_turn(python, src, 1, "reply", turns)
    imported = (instructions(python, src, ["-c", "import handoffs.runtime.runner"])
                - instructions(python, src, ["-c", "pass"]))
    return {"turn_run": run1, "per_handoff": (run5 - run1) / 4, "turn_stream": stream1,
            "stream_ratio": stream1 / run1, "turn_sqlite": sqlite1, "turn_reply": reply1,
            "import": float(imported)}


ROWS = (("turn H=1, `runner.run`", "turn_run"), ("per handoff", "per_handoff"),
        ("turn H=1, `runner.stream`", "turn_stream"), ("stream / run", "stream_ratio"),
        ("turn H=1, SQLite store", "turn_sqlite"),
        ("turn H=1, a 1 KB answer read for narration", "turn_reply"),
        ("import handoffs.runtime.runner", "import"))


def table(results: dict[str, dict[str, float]]) -> str:
    names = list(results)
    lines = ["| instructions | " + " | ".join(names) + " |",
             "| --- |" + " --- |" * len(names)]
    for label, key in ROWS:
        cells = []
        for i, name in enumerate(names):
            v = results[name][key]
            cell = f"×{v:.3f}" if key == "stream_ratio" else f"{v / 1e3:,.1f} k"
            if i and key != "stream_ratio":
                cell += f" ({v / results[names[0]][key] - 1:+.1%})"
            cells.append(cell)
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--src", action="append", type=Path,
                   help="a tree holding the handoffs package (repeatable; default ./src)")
    p.add_argument("--python", default=sys.executable, help="the interpreter to count")
    p.add_argument("--turns", default="50,150", help="N1,N2 turns per figure")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("bench/instructions.py needs valgrind (Debian: apt-get install "
                         "valgrind; `make bench-instructions` does it as root)")
    n1, n2 = (int(x) for x in args.turns.split(","))
    if not 0 <= n1 < n2:
        p.error("--turns takes N1,N2 with 0 <= N1 < N2")
    python = shutil.which(args.python) or args.python
    results = {str(src): measure(python, src.resolve(), (n1, n2))
               for src in (args.src or [ROOT / "src"])}
    if args.json:
        print(json.dumps({"python": python, "turns": [n1, n2], "results": results},
                         indent=1))
    else:
        print(f"{python} ({n1} and {n2} turns per figure)\n")
        print(table(results))


if __name__ == "__main__":
    main()
