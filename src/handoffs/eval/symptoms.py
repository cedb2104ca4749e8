"""What went wrong in a turn besides who answered it: the failure shapes multi-agent
studies count (MAST's step repetition and unawareness of termination, announced but
unmade handoffs), read from the turn's events and its model calls.

- **phantom handoff**: the answer the user got announces a transfer ("I'll transfer you to
  billing") and no transfer followed it (`core.narration`'s detector, over every other
  agent of the team, so a single agent that promises "billing" is caught too);
- **bounce**: the conversation went A → B → A within the turn;
- **repeated call**: a model call of a tool (a handoff tool too) by the same agent with the
  same arguments as an earlier one of the turn;
- **last-word answer**: the answer came from the runtime's converge step, which took the
  agent's tools away after steps without progress (`agent_nudged` with code
  `no_progress`) and delivered what it then said;
- **no_progress**: an agent was stopped for making no progress even so (the turn failed
  with `no_progress`, the team's fallback took over, or the policy's `stuck_answer` was
  given).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core.narration import Destination, destination, narrated

if TYPE_CHECKING:
    from ..core.events import Event
    from ..core.team import Team
    from .recording import ModelCall

NO_PROGRESS = "no_progress"
"""The code of an agent stopped for making no progress (`runtime.decisions.converge`)."""

SYMPTOMS: tuple[tuple[str, str, str], ...] = (
    ("phantom_handoffs", "phantom handoffs", "phantom"),
    ("bounces", "bounces (A→B→A)", "bounce"),
    ("repeated_calls", "repeated calls", "repeat"),
    ("last_word_answers", "last-word answers", "last word"),
    ("no_progress", "no_progress", "no_progress"),
)
"""Each symptom's key (in `Symptoms.counts`, JSON and the rates), its name in reports and
its short name (a table's column), in report order."""


@dataclass(slots=True, frozen=True)
class Symptoms:
    """What one played turn showed (see the module)."""

    phantom_handoff: bool = False
    """The answer announced a transfer that was not made."""
    bounces: int = 0
    """How many times the conversation came back to an agent it had just left (A → B → A)."""
    repeated_calls: int = 0
    """Calls identical to an earlier call of the same agent in the turn."""
    last_word: bool = False
    """The answer was the agent's last word, said without tools."""
    no_progress: bool = False
    """An agent was stopped for making no progress."""

    def counts(self) -> dict[str, int]:
        """Each symptom as a number (1 or 0 for the yes-or-no ones), by key."""
        return {"phantom_handoffs": int(self.phantom_handoff), "bounces": self.bounces,
                "repeated_calls": self.repeated_calls,
                "last_word_answers": int(self.last_word), "no_progress": int(self.no_progress)}


NONE = Symptoms()
"""A turn that showed none."""


def speakers(team: Team) -> dict[str, Destination]:
    """Every agent of `team` in the words an answer may name it by (for phantom handoffs)."""
    return {a.name: destination(a.name, a.name, a.label) for a in team.agents}


def symptoms_of(events: Sequence[Event], records: Mapping[str, Any],
                calls: Sequence[ModelCall], path: Sequence[str],
                names: Mapping[str, Destination], stuck_answer: str | None) -> Symptoms:
    """The symptoms of one turn from its events, handoff records (by id), model calls and
    path (`TurnResult.path`); `names`: `speakers` of the team the answer may name."""
    answer: tuple[str, str] | None = None  # the last text delivered, and who said it
    moved_after = False
    silenced: set[str] = set()  # agents given their last word
    last_word = no_progress = False
    for e in events:
        d = e.data
        kind = e.type
        if kind == "message":
            answer = (d["agent"], d["text"])
            moved_after = False
            last_word = d["agent"] in silenced and d["text"] != stuck_answer
            no_progress = no_progress or (d["agent"] in silenced and d["text"] == stuck_answer)
        elif kind == "agent_handoff" and not d["returns"]:
            moved_after = True
            record = records.get(d["record_id"])
            error = getattr(record, "extra", {}).get("error") or {}
            no_progress = no_progress or error.get("code") == NO_PROGRESS
        elif kind == "agent_nudged" and d["code"] == NO_PROGRESS:
            silenced.add(d["agent"])
        elif kind == "run_failed":
            no_progress = no_progress or d.get("code") == NO_PROGRESS
            answer, last_word = None, False
    phantom = False
    if answer is not None and not moved_after:
        agent, text = answer
        others = [dest for name, dest in names.items() if name != agent]
        phantom = narrated(text, others)[0]
    return Symptoms(
        phantom_handoff=phantom,
        bounces=sum(path[i] == path[i + 2] for i in range(len(path) - 2)),
        repeated_calls=_repeats(calls),
        last_word=last_word,
        no_progress=no_progress)


def _repeats(calls: Sequence[ModelCall]) -> int:
    seen: set[tuple[str, str, str]] = set()
    repeats = 0
    for call in calls:
        for c in call.calls:
            key = (call.agent, c["name"], _canonical(c["arguments"]))
            if key in seen:
                repeats += 1
            seen.add(key)
    return repeats


def _canonical(arguments: str) -> str:
    """Arguments compared as JSON (key order and spacing aside), else as written."""
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True,
                          separators=(",", ":"))
    except (json.JSONDecodeError, TypeError):
        return arguments


def rates(symptoms: Sequence[Symptoms]) -> dict[str, dict[str, float | int]]:
    """Per symptom over `symptoms` (one per turn): `turns` that showed it, `count` (how
    many times in all), and `rate` (turns that showed it / turns; 0.0 for no turns)."""
    total = len(symptoms)
    tally = {key: [0, 0] for key, _, _ in SYMPTOMS}  # turns showing it, times in all
    for s in symptoms:
        for key, n in s.counts().items():
            tally[key][0] += n > 0
            tally[key][1] += n
    return {key: {"turns": turns, "count": count, "rate": turns / total if total else 0.0}
            for key, (turns, count) in tally.items()}
