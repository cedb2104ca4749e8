"""What a store offers beyond `SessionStore`, as protocols, resolved once per store
(`StoreFeatures.of`): a runner does so when it is built and when its store is replaced,
so no turn probes its store for a method.

Every built-in store has all of them; a store of one's own may leave any out, and what
needs it says so (`idempotency_unsupported` for a retried request's first outcome,
`invalid_store` for the server).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .marks import MarkedStore


@runtime_checkable
class EventLog(Protocol):
    """A store that keeps each session's events, numbered: what the server replays to
    clients, what a retried request's first outcome, a fork and the inspector read."""

    async def event_count(self, session_id: str) -> int:
        """The number the session's next stored event gets (0: no such session)."""
        ...

    async def events_after(self, session_id: str, after: int = -1,
                           limit: int = 1000) -> list[dict[str, Any]]:
        """The stored events numbered above `after`, oldest first, at most `limit`;
        each is its `Event.to_dict()` plus `seq`."""
        ...


@runtime_checkable
class ReadyCheck(Protocol):
    """A store that can tell whether it is ready to serve (`/readyz`) more cheaply, or
    more truly, than by listing a session."""

    async def check_ready(self) -> None:
        """Return when ready; raise `HandoffsError` (`store_...`) when not."""
        ...


@dataclass(frozen=True, slots=True)
class StoreFeatures:
    """A store's optional parts, each the store itself or None when it lacks it."""

    events: EventLog | None = None
    """Its event log (None: it keeps no events)."""
    marks: MarkedStore | None = None
    """Its turn marks, for going back in a session (None: it keeps none)."""
    ready: ReadyCheck | None = None
    """Its own readiness probe (None: listing one session is the probe)."""

    @classmethod
    def of(cls, store: object) -> StoreFeatures:
        """What `store` offers, checked once."""
        return cls(store if isinstance(store, EventLog) else None,
                   store if isinstance(store, MarkedStore) else None,
                   store if isinstance(store, ReadyCheck) else None)
