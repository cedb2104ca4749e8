"""Handoff statistics from what a store already holds: which routes are used, refused,
and followed by failures.

    stats = await store.handoff_stats(since=time.time() - 86400)
    print(format_stats(stats))

Every handoff record is stored with plain columns beside its JSON body (schema 3):
`source`, `target`, `kind` (the record's reason), `accepted`, `rejection`, `at`, `turn`,
and two facts known when the turn that made it is committed:

- `outcome`: how that turn ended (`completed`, `handed_off`, `waiting_for_human`,
  `failed`; NULL for a record made outside a turn, such as a user's pick);
- `took`: seconds from the handoff until the target's work ended: a delegate's answer, or
  for a transfer the target's own next handoff in that turn, else the end of the turn
  (NULL when refused, or when the turn then ended waiting for the next message or for a
  human, so the target had not worked yet).

Per route (source, target, kind) a report gives the requests, how many were accepted,
the refusals by code, the share of accepted handoffs whose turn then failed or ended
with a human, and the median of `took`. SQLite and PostgreSQL compute it in SQL over an
index of those columns; the memory store keeps the same rows in Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .facts import COLUMNS, Facts, Row, facts, rows_of, turn_facts, window

__all__ = ["COLUMNS", "Facts", "HandoffStats", "RouteStats", "Row", "aggregate", "facts",
           "format_stats", "from_sql", "rows_of", "turn_facts", "window"]


@dataclass(slots=True, frozen=True)
class RouteStats:
    """How one route (source → target, of one kind) went."""

    source: str
    target: str
    kind: str
    """The records' reason: `llm`, `programmatic`, `user_request`, `error_recovery`, ..."""
    requests: int
    accepted: int
    refused: Mapping[str, int] = field(default_factory=dict)
    """Refused requests by rejection code."""
    failed: int = 0
    """Accepted handoffs whose turn then ended failed."""
    escalated: int = 0
    """Accepted handoffs whose turn then ended waiting for a human."""
    median_seconds: float | None = None
    """The median time the target then took (None: no accepted handoff with a time)."""

    @property
    def failed_share(self) -> float:
        return self.failed / self.accepted if self.accepted else 0.0

    @property
    def escalated_share(self) -> float:
        return self.escalated / self.accepted if self.accepted else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "kind": self.kind,
                "requests": self.requests, "accepted": self.accepted,
                "refused": dict(self.refused), "failed": self.failed,
                "escalated": self.escalated, "failed_share": self.failed_share,
                "escalated_share": self.escalated_share,
                "median_seconds": self.median_seconds}


@dataclass(slots=True, frozen=True)
class HandoffStats:
    """What `store.handoff_stats(since, until)` returns: one line per route, busiest first."""

    routes: tuple[RouteStats, ...]
    since: float | None = None
    """Unix time of the first record counted (inclusive); None: from the beginning."""
    until: float | None = None
    """Unix time the window ends (exclusive); None: up to now."""

    @property
    def requests(self) -> int:
        return sum(r.requests for r in self.routes)

    def to_dict(self) -> dict[str, Any]:
        return {"since": self.since, "until": self.until,
                "routes": [r.to_dict() for r in self.routes]}


# -- aggregation -------------------------------------------------------------------------


class Tally:
    """Counts per route, filled from SQL rows or Python rows, then made into stats."""

    __slots__ = ("routes",)

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str, str], dict[str, Any]] = {}

    def route(self, source: str, target: str, kind: str) -> dict[str, Any]:
        key = (source, target, kind)
        found = self.routes.get(key)
        if found is None:
            found = self.routes[key] = {"requests": 0, "accepted": 0, "refused": {},
                                        "failed": 0, "escalated": 0, "median": None}
        return found

    def stats(self, since: float | None, until: float | None) -> HandoffStats:
        lines = [RouteStats(s, t, k, d["requests"], d["accepted"], dict(d["refused"]),
                            d["failed"], d["escalated"], d["median"])
                 for (s, t, k), d in self.routes.items()]
        lines.sort(key=lambda r: (-r.requests, r.source, r.target, r.kind))
        return HandoffStats(tuple(lines), since, until)


def aggregate(rows: Iterable[Row], since: float | None = None,
              until: float | None = None) -> HandoffStats:
    """Statistics over rows in Python (the memory store's way)."""
    lo, hi = window(since, until)
    tally = Tally()
    took: dict[tuple[str, str, str], list[float]] = {}
    for source, target, kind, accepted, rejection, at, _, outcome, t in rows:
        if not lo <= at < hi:
            continue
        d = tally.route(source, target, kind)
        d["requests"] += 1
        if accepted:
            d["accepted"] += 1
            d["failed"] += outcome == "failed"
            d["escalated"] += outcome == "waiting_for_human"
            if t is not None:
                took.setdefault((source, target, kind), []).append(t)
        else:
            code = rejection or "refused"
            d["refused"][code] = d["refused"].get(code, 0) + 1
    import statistics  # here, not at import: `import handoffs` stays light

    for key, values in took.items():
        tally.routes[key]["median"] = statistics.median(values)
    return tally.stats(since, until)


# -- SQL (the durable stores run these; see migration 3 for the columns and the index) ----

SQLITE_ROUTES = """
SELECT source, target, kind, count(*), sum(accepted),
  sum(accepted AND outcome = 'failed'), sum(accepted AND outcome = 'waiting_for_human'),
  sum(took IS NOT NULL)
FROM records WHERE source IS NOT NULL AND at >= ? AND at < ?
GROUP BY source, target, kind"""

SQLITE_REFUSED = """
SELECT source, target, kind, rejection, count(*)
FROM records WHERE source IS NOT NULL AND NOT accepted AND at >= ? AND at < ?
GROUP BY source, target, kind, rejection"""

SQLITE_MIDDLE = """
SELECT took FROM records
WHERE source = ? AND target = ? AND kind = ? AND took IS NOT NULL AND at >= ? AND at < ?
ORDER BY took LIMIT ? OFFSET ?"""
"""The middle one or two times of a route: SQLite has no median, and a window function
sorts the whole table; the index is in this order already, so this only steps through it."""

POSTGRES_ROUTES = """
SELECT source, target, kind, count(*), count(*) FILTER (WHERE accepted),
  count(*) FILTER (WHERE accepted AND outcome = 'failed'),
  count(*) FILTER (WHERE accepted AND outcome = 'waiting_for_human'),
  percentile_cont(0.5) WITHIN GROUP (ORDER BY took) FILTER (WHERE took IS NOT NULL)
FROM records WHERE source IS NOT NULL AND at >= $1 AND at < $2
GROUP BY source, target, kind"""

POSTGRES_REFUSED = """
SELECT source, target, kind, rejection, count(*)
FROM records WHERE source IS NOT NULL AND NOT accepted AND at >= $1 AND at < $2
GROUP BY source, target, kind, rejection"""


def from_sql(routes: Iterable[Sequence[Any]], refused: Iterable[Sequence[Any]],
             medians: Iterable[Sequence[Any]], since: float | None,
             until: float | None) -> HandoffStats:
    """Statistics from the durable stores' query results."""
    tally = Tally()
    for row in routes:
        d = tally.route(row[0], row[1], row[2])
        d["requests"], d["accepted"] = int(row[3]), int(row[4] or 0)
        d["failed"], d["escalated"] = int(row[5] or 0), int(row[6] or 0)
    for source, target, kind, code, n in refused:
        tally.route(source, target, kind)["refused"][code or "refused"] = int(n)
    for source, target, kind, median in medians:
        tally.route(source, target, kind)["median"] = float(median)
    return tally.stats(since, until)


# -- the report ----------------------------------------------------------------------------


def format_stats(stats: HandoffStats) -> str:
    """A plain-text table of the routes, for a terminal (`handoffs stats`): one line per
    route with its kind, requests, accepted, the failed and human shares (of accepted
    handoffs), the median time the target took, and the refusals by code."""
    if not stats.routes:
        return "No handoffs in this window."
    head = (f"{'route':<30} {'kind':<14} {'requests':>8} {'accepted':>8} {'failed':>7} "
            f"{'human':>6} {'median':>8}  refused")
    lines = [head]
    for r in stats.routes:
        route = f"{r.source} -> {r.target}"
        median = "-" if r.median_seconds is None else _seconds(r.median_seconds)
        refused = ", ".join(f"{code} {n}" for code, n in
                            sorted(r.refused.items(), key=lambda kv: (-kv[1], kv[0])))
        lines.append(f"{route:<30} {r.kind:<14} {r.requests:>8} {r.accepted:>8} "
                     f"{r.failed_share:>7.1%} {r.escalated_share:>6.1%} {median:>8}  "
                     f"{refused or '-'}".rstrip())
    return "\n".join(lines)


def _seconds(s: float) -> str:
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.1f} s"
