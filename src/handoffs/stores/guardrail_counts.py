"""How often each guardrail checked and tripped, from the stored event log (every verdict
is a `guardrail_checked` event): what `handoffs stats --guardrails` prints."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .base import SessionStore
from .costs import stored_events


@dataclass(slots=True)
class GuardrailCounts:
    """Per guardrail name and stage: how many checks, how many trips, how many of those
    answered with a reply."""

    counts: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    """(name, stage) -> [checks, trips, replies]."""

    def add(self, data: dict[str, Any]) -> None:
        """Count one `guardrail_checked` event's data."""
        c = self.counts.setdefault((data["name"], data.get("stage", "")), [0, 0, 0])
        c[0] += 1
        if not data.get("passed"):
            c[1] += 1
            if data.get("reply") is not None:
                c[2] += 1

    def to_dict(self) -> list[dict[str, Any]]:
        """One object per guardrail and stage, most checked first."""
        return [{"guardrail": name, "stage": stage, "checks": c[0], "trips": c[1],
                 "replies": c[2]} for (name, stage), c in self._sorted()]

    def text(self) -> str:
        """A small table for a terminal."""
        if not self.counts:
            return "guardrails: no check stored in this window"
        rows = [("guardrail", "stage", "checks", "trips", "replied")]
        rows += [(name, stage, str(c[0]), str(c[1]), str(c[2]))
                 for (name, stage), c in self._sorted()]
        widths = [max(len(r[i]) for r in rows) for i in range(5)]
        return "\n".join("  ".join(v.ljust(w) if i < 2 else v.rjust(w)
                                   for i, (v, w) in enumerate(zip(r, widths, strict=True)))
                         .rstrip() for r in rows)

    def _sorted(self) -> list[tuple[tuple[str, str], list[int]]]:
        return sorted(self.counts.items(), key=lambda kv: (-kv[1][0], kv[0]))


async def guardrail_counts(store: SessionStore, since: float | None = None) -> GuardrailCounts:
    """Every stored guardrail verdict since `since` (a Unix time; None: all), counted
    (stores that keep no events, like the memory store, have nothing to count)."""
    out = GuardrailCounts()
    async for _, events in stored_events(store, since):
        for e in events:
            if e.get("type") == "guardrail_checked" and (
                    since is None or e.get("at", 0) >= since):
                out.add(e)
    return out
