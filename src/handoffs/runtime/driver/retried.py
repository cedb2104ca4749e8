"""A retried request (an idempotency key already recorded) answered from the store.

The first request's turn is read back from the session's event log: its events from
the number recorded with the key, up to its terminal event, whose `result` is the
outcome. Nothing is stored and nothing runs again (`core.idempotency`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...core.events import TERMINAL_EVENTS, Event, StoredEvent
from ...core.idempotency import Seen
from ...errors import HandoffsError
from ...log import fields
from ..state.result import RunResult

if TYPE_CHECKING:
    from ..state.host import Host

PAGE = 1000

log = logging.getLogger("handoffs.runtime.turn")  # a retry is told of with its turn


def deliver(result: RunResult, sink: Callable[[Event], None] | None, feed: Any) -> None:
    """Give a retried request's reader the first request's stored events."""
    if feed is not None:
        feed.events.extend(result.events)
        if feed.waiter is not None:
            feed.wake()
    elif sink is not None:
        for event in result.events:
            sink(event)


async def outcome(runner: Host, session_id: str, seen: Seen) -> RunResult:
    """The result of the turn `seen` names (the turn that answered its message), its
    stored events bound to it."""
    kept = runner.store_features.events
    if kept is None:
        raise HandoffsError(
            f"{type(runner.store).__name__} keeps no events, so a retried request cannot "
            "be given its first outcome; use MemoryStore, SQLiteStore or PostgresStore.",
            code="idempotency_unsupported")
    after = seen.seq - 1
    events: list[Event] = []
    turn = -1
    while True:
        page = await kept.events_after(session_id, after, PAGE)
        for d in page:
            after = d["seq"]
            if d.get("turn", 0) < seen.turn:
                continue
            if d["turn"] != turn:  # a turn that died, then the one that answered it
                turn, events = d["turn"], []
            event = StoredEvent.from_dict(d)
            events.append(event)
            if event.type in TERMINAL_EVENTS:
                agent = runner.team.get(d["result"].get("agent", ""))
                result = RunResult.from_dict(
                    d["result"], None if agent is None else agent.output_type)
                event.result = result
                result.bind_events(events)
                log.info("turn %d of %s: a retry (the same idempotency key) was given "
                         "its stored outcome", result.turn, session_id,
                         extra=fields(session_id, result.turn, result.agent))
                return result
        if len(page) < PAGE:
            break
    raise HandoffsError(
        f"This request was already made on session {session_id!r} (the same idempotency "
        "key), but its outcome is no longer in the session's event log; read the "
        "session's transcript for its answer.", code="idempotency_outcome_lost")
