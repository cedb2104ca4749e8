"""The speed guard: CPU instructions of our hot paths against the budgets in bench/budgets.json.

    python bench/guard.py            # check this checkout (CI: .ci/run, `make bench-guard`)
    python bench/guard.py --update   # write today's counts as the budgets

Counts the figures of bench/instructions.py (an H=1 turn through `runner.run`, one
handoff, the streamed turn, the turn persisted on SQLite, the turn with a 1 KB answer,
`import handoffs.runtime.runner`)
under valgrind, which a noisy machine does not move, and fails when one exceeds its budget
by more than the file's tolerance (3%), printing the figure, the budget and which functions
grew (valgrind's own per-function counts, per turn, against those stored with the budgets).

Lowering a budget is `--update` in the same commit as the speed-up; raising one is the same
command, and the commit message says why the feature is worth it. Counts depend on the
interpreter: budgets are kept for the CPython minor version they were counted on, and
another version is told so and not checked (CI runs the one the budgets name).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import instructions as ins

BUDGETS = Path(__file__).resolve().parent / "budgets.json"
TOLERANCE = 0.03
TOP = 60
"""valgrind functions kept per figure in the budget file, the largest first (a function
not among them is not named when a figure grows: its count then is not known)."""

LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(.+?)\s*$")
Profile = dict[str, float]


def functions(out_file: Path) -> Profile:
    """Exclusive instructions per function of one callgrind run (callgrind_annotate)."""
    text = subprocess.run(["callgrind_annotate", "--threshold=100", str(out_file)],
                          capture_output=True, text=True, check=True).stdout
    found: Profile = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m and ":" in m.group(2) and "PROGRAM TOTALS" not in m.group(2):
            name = re.sub(r"\s*\[[^]]*\]$", "", m.group(2))  # the library's path
            name = name.rsplit("/", 1)[-1]  # the build folder's path
            found[name] = found.get(name, 0.0) + float(m.group(1).replace(",", ""))
    return found


def per_turn_profile(first: Profile, second: Profile, turns: int) -> Profile:
    return {k: (second.get(k, 0.0) - first.get(k, 0.0)) / turns
            for k in set(first) | set(second)}


def measure(python: str, src: Path, turns: tuple[int, int]) -> tuple[dict[str, float],
                                                                      dict[str, Profile]]:
    """The figures of bench/instructions.py and, per figure, instructions per function."""
    ins.warm(python, src)
    n1, n2 = turns
    figures: dict[str, float] = {}
    profiles: dict[str, Profile] = {}
    with tempfile.TemporaryDirectory() as tmp:
        def counted(key: str, hops: int, mode: str) -> None:
            keep = (Path(tmp) / f"{key}-1.out", Path(tmp) / f"{key}-2.out")
            figures[key] = ins.per_turn(python, src, hops, mode, turns, keep)
            profiles[key] = per_turn_profile(functions(keep[0]), functions(keep[1]), n2 - n1)

        counted("turn_run", 1, "run")
        counted("turn_run5", 5, "run")
        counted("turn_stream", 1, "stream")
        counted("turn_sqlite", 1, "sqlite")
        counted("turn_reply", 1, "reply")
        figures["per_handoff"] = (figures.pop("turn_run5") - figures["turn_run"]) / 4
        five = profiles.pop("turn_run5")
        profiles["per_handoff"] = {k: (five.get(k, 0.0) - profiles["turn_run"].get(k, 0.0))
                                   / 4 for k in set(five) | set(profiles["turn_run"])}
        keep = (Path(tmp) / "pass.out", Path(tmp) / "import.out")
        figures["import"] = float(
            ins.instructions(python, src, ["-c", "import handoffs.runtime.runner"], keep[1])
            - ins.instructions(python, src, ["-c", "pass"], keep[0]))
        profiles["import"] = per_turn_profile(functions(keep[0]), functions(keep[1]), 1)
    return figures, profiles


def python_calls(python: str, src: Path, hops: int, mode: str, turns: int = 20) -> Profile:
    """Python function calls per turn (a profile hook in bench/instructions.py's child,
    outside valgrind): which of our functions a growth comes from."""
    env = dict(ins.child_env(src), BENCH_COUNT_CALLS="1")
    out = subprocess.run([python, "-c", ins.CHILD, str(hops), str(turns), mode, "5"],
                         env=env, capture_output=True, text=True, check=True).stdout
    calls: Profile = json.loads(out.strip().splitlines()[-1])
    return calls


def all_calls(python: str, src: Path) -> dict[str, Profile]:
    calls = {key: python_calls(python, src, 1, mode)
             for key, mode in (("turn_run", "run"), ("turn_stream", "stream"),
                               ("turn_sqlite", "sqlite"), ("turn_reply", "reply"))}
    five = python_calls(python, src, 5, "run")
    one = calls["turn_run"]
    calls["per_handoff"] = {k: (five.get(k, 0.0) - one.get(k, 0.0)) / 4
                            for k in set(five) | set(one)}
    return calls


def top(profile: Profile) -> Profile:
    return dict(sorted(((k, round(v)) for k, v in profile.items() if v > 0),
                       key=lambda kv: -kv[1])[:TOP])


def grew(now: Profile, then: Profile, limit: int = 8, known_only: bool = False) -> list[str]:
    """The functions that grew most since the budgets were counted, one line each
    (`known_only`: only those the budget file holds a count for)."""
    keys = set(then) if known_only else set(now) | set(then)
    rows = sorted(((now.get(k, 0.0) - then.get(k, 0.0), k) for k in keys), reverse=True)
    return [f"      {d:+12,.1f}  {k} ({then.get(k, 0.0):,.1f} -> {now.get(k, 0.0):,.1f})"
            for d, k in rows[:limit] if d > 0.05]


def check(budgets: dict[str, object], figures: dict[str, float],
          profiles: dict[str, Profile], calls: dict[str, Profile],
          say: Callable[[str], None] = print) -> bool:
    """Whether every figure is within its budget; says each, and what grew where not."""
    tolerance = float(budgets.get("tolerance", TOLERANCE))  # type: ignore[arg-type]
    limits: dict[str, float] = budgets["figures"]  # type: ignore[assignment]
    stored: dict[str, Profile] = budgets.get("functions", {})  # type: ignore[assignment]
    stored_calls: dict[str, Profile] = budgets.get("calls", {})  # type: ignore[assignment]
    ok = True
    for key, budget in limits.items():
        value = figures[key]
        over = value / budget - 1
        verdict = "over budget" if over > tolerance else "ok"
        say(f"  {key:<12} {value:>14,.0f}  budget {budget:>14,.0f}  {over:+.1%}  {verdict}")
        if over > tolerance:
            ok = False
            say("    grew most (instructions per turn; valgrind's functions):")
            for line in grew(profiles.get(key, {}), stored.get(key, {}),
                             known_only=True) or ["      (none of those stored)"]:
                say(line)
            if key in calls:
                say("    Python calls per turn that grew most:")
                for line in grew(calls[key], stored_calls.get(key, {})) or ["      (none)"]:
                    say(line)
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--budgets", type=Path, default=BUDGETS)
    p.add_argument("--src", type=Path, default=ins.ROOT / "src")
    p.add_argument("--update", action="store_true", help="write today's counts as budgets")
    p.add_argument("--turns", default="50,150", help="N1,N2 turns per figure")
    args = p.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("bench/guard.py needs valgrind (`make valgrind` installs it as root)")
        return 1
    version = ".".join(platform.python_version_tuple()[:2])
    budgets = json.loads(args.budgets.read_text()) if args.budgets.exists() else {}
    if budgets and not args.update and budgets.get("python") != version:
        print(f"bench/guard.py: the budgets were counted on CPython {budgets.get('python')}, "
              f"this is {version}: instruction counts differ between versions, not checked")
        return 0
    n1, n2 = (int(x) for x in args.turns.split(","))
    figures, profiles = measure(sys.executable, args.src.resolve(), (n1, n2))
    calls = all_calls(sys.executable, args.src.resolve())
    if args.update:
        args.budgets.write_text(json.dumps({
            "python": version, "tolerance": budgets.get("tolerance", TOLERANCE),
            "figures": {k: round(v) for k, v in figures.items()},
            "functions": {k: top(v) for k, v in profiles.items()},
            "calls": {k: {f: round(n, 2) for f, n in sorted(v.items()) if n}
                      for k, v in calls.items()}}, indent=1) + "\n")
        print(f"wrote {args.budgets}")
        return 0
    print(f"instructions against {args.budgets.name} (CPython {version}, "
          f"tolerance {float(budgets.get('tolerance', TOLERANCE)):.0%}):")
    if check(budgets, figures, profiles, calls):
        return 0
    print("over budget: make it cheaper, or raise the budget (`python bench/guard.py "
          "--update`) and say in the commit message why the feature is worth it")
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
