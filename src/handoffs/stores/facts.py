"""The stats columns a store writes beside each handoff record, from the events of the
turn that made it (see `stores.stats` for what they mean and the report built on them).

Kept apart from the report so that a store's commit path imports only this.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..core.handoff import HandoffRecord
from .text import column

Row = tuple[str, str, str, bool, str | None, float, int, str | None, float | None]
"""(source, target, kind, accepted, rejection, at, turn, outcome, took) of one record."""

COLUMNS = ("source", "target", "kind", "accepted", "rejection", "at", "turn", "outcome",
           "took")

_WAITING = ("handed_off", "waiting_for_human", "waiting_for_approval")


def window(since: float | None, until: float | None) -> tuple[float, float]:
    """The bounds a query uses for `since` / `until` (None: unbounded)."""
    return (float("-inf") if since is None else float(since),
            float("inf") if until is None else float(until))


# -- the columns, made when a commit (or an import) writes records ------------------------


def _parts(events: Iterable[Any]) -> Iterator[tuple[str, float, int, Mapping[str, Any]]]:
    """(type, at, turn, data) of each event: `Event` objects, exported dicts, or the
    runtime's lazy events (read without building an `Event` each)."""
    parts = getattr(events, "parts", None)
    if parts is not None:
        yield from parts()
        return
    for e in events:
        yield _part(e)


def _last(events: Sequence[Any]) -> tuple[str, float, int, Mapping[str, Any]] | None:
    """`_part` of the last event (None: no event), without building the others (the
    runtime's lazy events answer `last()` themselves)."""
    last = getattr(events, "last", None)
    if last is not None:
        return last()  # type: ignore[no-any-return]
    return _part(events[-1]) if len(events) else None


def _part(e: Any) -> tuple[str, float, int, Mapping[str, Any]]:
    if isinstance(e, Mapping):
        return str(e.get("type", "")), float(e.get("at", 0.0)), int(e.get("turn", 0)), e
    return e.type, e.at, e.turn, e.data


Facts = tuple[dict[int, tuple[str, float]], dict[Any, float]]
"""How each turn ended (status, at) by turn, and when each delegation answered, by record."""


def facts(events: Iterable[Any]) -> Facts:
    """What the stats columns need from a set of events (a turn's, or a session's)."""
    ends: dict[int, tuple[str, float]] = {}
    returned: dict[Any, float] = {}
    for type_, at, turn, data in _parts(events):
        if type_ == "agent_returned":
            returned[data.get("record_id")] = at
        elif type_ in ("run_completed", "run_failed"):
            ends[turn] = _end(type_, at, data)
    return ends, returned


def turn_facts(events: Sequence[Any], delegations: bool) -> Facts:
    """`facts` of one turn's commit, reading only its last event (the turn's end, when it
    has one) unless the turn delegated: what the memory store can afford on every turn."""
    if delegations:
        return facts(events)
    part = _last(events)
    if part is None or part[0] not in ("run_completed", "run_failed"):
        return {}, {}
    return {part[2]: _end(part[0], part[1], part[3])}, {}


Kept = Facts | tuple[int, str, float]
"""`Facts` as the memory store keeps them per commit: a turn that ended and delegated
nothing is (turn, status, at), a third of the two dicts' size."""


def kept_turn(events: Sequence[Any], delegations: bool) -> Kept:
    """`turn_facts`, in the memory store's compact form (`Kept`)."""
    if not delegations:
        part = _last(events)
        if part is not None and part[0] in ("run_completed", "run_failed"):
            end = _end(part[0], part[1], part[3])
            return part[2], end[0], end[1]
    return turn_facts(events, delegations)


def expand(known: Kept) -> Facts:
    """The `Facts` of what `kept_turn` returned."""
    if len(known) == 3:
        turn, status, at = known
        return {turn: (status, at)}, {}
    return known


def final_outcome(records: Sequence[HandoffRecord], first: int, turn: int,
                  events: Sequence[Any]) -> tuple[int, str] | None:
    """A commit that ends turn `turn` after an earlier commit stored some of its records
    (the turn waited for a person's approval, so they got `waiting_for_approval`):
    (turn, the outcome those records get now). None for every other commit, after
    looking at one record (`first`: where this commit's own records start)."""
    if not 0 < first <= len(records) or records[first - 1].turn != turn or not events:
        return None
    part = _last(events)
    if part is None or part[0] not in ("run_completed", "run_failed") or part[2] != turn:
        return None
    outcome = _end(part[0], part[1], part[3])[0]
    return None if outcome == "waiting_for_approval" else (turn, outcome)


WAITING_FOR_APPROVAL = "waiting_for_approval"
"""The outcome a turn's records have until the turn goes on after the approval."""


def _end(type_: str, at: float, data: Mapping[str, Any]) -> tuple[str, float]:
    return ("failed" if type_ == "run_failed" else str(data.get("status", "completed")), at)


def rows_of(records: Sequence[HandoffRecord], known: Facts) -> list[Row]:
    """The stats columns of `records` given the facts of their turns."""
    ends, returned = known
    out: list[Row] = []
    handed_on: dict[tuple[int, str], float] = {}
    """When an agent next handed off (accepted) in a turn, scanning from the end."""
    for r in reversed(records):
        end = ends.get(r.turn)
        took: float | None = None
        if r.accepted:
            if r.returns:
                done = returned.get(r.id)
            else:
                done = handed_on.get((r.turn, r.target))
                if done is None and end is not None and end[0] not in _WAITING:
                    done = end[1]
            if done is not None:
                took = max(0.0, done - r.at)
            if not r.returns:  # a delegation's caller keeps working
                handed_on[(r.turn, r.source)] = r.at
        out.append((column(r.source) or "", column(r.target) or "", r.reason.value,
                    bool(r.accepted), column(r.rejection), float(r.at), int(r.turn),
                    end[0] if end is not None else None, took))
    out.reverse()
    return out
