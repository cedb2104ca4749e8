"""The memory store's turn marks (`stores.marks`): a turn's mark from what the last commit
kept, and a session's in-memory logs cut back to one."""

from __future__ import annotations

from typing import Any

from ..core.session import SessionState
from . import rows
from .marks import TurnMark


def before(sid: str, turn: int, kept: Any) -> TurnMark:
    """The mark of a turn that starts now, from what the session's last commit kept
    (`memory._Committed`, None when nothing was)."""
    if kept is None:
        return TurnMark(turn, 0, 0, 0, None)
    copy = SessionState(sid)
    kept.restore(copy)
    return TurnMark(turn, kept.messages, kept.records, kept.event_seq,
                    rows.header_text(copy))


def cut_events(chunks: list[tuple[int, Any, int]], events: int) -> list[tuple[int, Any, int]]:
    """The kept event chunks without the events numbered `events` and later."""
    out: list[tuple[int, Any, int]] = []
    for first, found, end in chunks:
        if first < events:
            n = min(len(found), events - first)
            out.append((first, found[:n], end - len(found) + n))
    return out


def cut_stats(commits: list[tuple[int, int, Any]], records: int) -> list[tuple[int, int, Any]]:
    """The per-commit record ranges without the records from `records` on."""
    return [(a, min(b, records), f) for a, b, f in commits if a < records]


def cut_turns(by_turn: dict[int, Any] | None, turn: int) -> None:
    """Forget, in place, what is kept for `turn` and later turns."""
    if by_turn:
        for t in [t for t in by_turn if t >= turn]:
            del by_turn[t]
