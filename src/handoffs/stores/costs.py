"""What each stored conversation cost, from its event log: every turn's terminal event
(`run_completed` / `run_failed`) says what the turn spent, per model (`usage_by_model`),
and a price table (`models.prices.Prices`) turns that into dollars (`handoffs stats
--prices`)."""

from __future__ import annotations

import statistics
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from ..core.usage import Usage
from ..models.prices import Prices, dollars
from .base import SessionStore

PAGE = 200


async def stored_events(store: SessionStore, since: float | None = None
                        ) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """Each stored session updated since `since` (None: all), newest first, with its
    event log (empty for stores that keep none), read a page of sessions at a time."""
    offset = 0
    while True:
        page = await store.list_sessions(limit=PAGE, offset=offset)
        offset += len(page)
        for summary in page:
            if since is not None and summary.updated_at < since:
                continue
            data = await store.export_session(summary.id)
            if data is not None:
                yield summary.id, list(data.get("events") or ())
        if len(page) < PAGE or (since is not None and page
                                and page[-1].updated_at < since):
            return
"""Sessions listed per page."""


@dataclass(slots=True)
class ConversationCosts:
    """The cost of the conversations of a window, in US dollars."""

    costs: dict[str, float] = field(default_factory=dict)
    """Per session id with token counts: what its turns in the window cost."""
    unreported: int = 0
    """Sessions whose turns in the window counted no tokens (offline models, or turns
    stored before turns recorded their usage)."""
    unpriced: list[str] = field(default_factory=list)
    """Models with tokens the price table has no price for (left out of the costs)."""

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready data (what `handoffs stats --json --prices` adds as
        `cost`)."""
        values = sorted(self.costs.values())
        return {"conversations": len(values), "unreported": self.unreported,
                "total": sum(values),
                "per_conversation": {"mean": statistics.fmean(values) if values else None,
                                     "median": statistics.median(values) if values else None,
                                     "max": values[-1] if values else None},
                "unpriced": self.unpriced, "by_session": dict(self.costs)}

    def text(self) -> str:
        """One paragraph for a terminal."""
        values = sorted(self.costs.values())
        if not values:
            line = "cost per conversation: no conversation in this window counted tokens"
        else:
            line = (f"cost per conversation ({len(values)} conversations): mean "
                    f"{dollars(statistics.fmean(values))}, median "
                    f"{dollars(statistics.median(values))}, max {dollars(values[-1])}; "
                    f"total {dollars(sum(values))}")
        if self.unreported:
            line += f"\n{self.unreported} conversations counted no tokens (not priced)"
        if self.unpriced:
            line += (f"\nno price for {', '.join(self.unpriced)}: their tokens are left "
                     "out")
        return line


async def conversation_costs(store: SessionStore, prices: Prices, since: float | None = None,
                             until: float | None = None) -> ConversationCosts:
    """What each session's turns of `[since, until)` (Unix times; None: unbounded) cost
    under `prices`, read from the store's event log (stores that keep no events, like
    the memory store, have nothing to read)."""
    out = ConversationCosts()
    unpriced: set[str] = set()
    async for sid, events in stored_events(store, since):
        by_model: dict[str, Usage] = {}
        for e in events:
            if e.get("type") not in ("run_completed", "run_failed"):
                continue
            at = e.get("at") or 0.0
            if (since is not None and at < since) or (until is not None and at >= until):
                continue
            for model, counts in (e.get("usage_by_model") or {}).items():
                by_model.setdefault(model, Usage()).add(Usage.from_dict(counts))
        if not any(u.input_tokens or u.output_tokens for u in by_model.values()):
            out.unreported += 1
            continue
        cost, missing = prices.cost(by_model)
        unpriced.update(missing)
        out.costs[sid] = cost
    out.unpriced = sorted(unpriced)
    return out
