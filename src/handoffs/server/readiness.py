"""Whether the server can serve turns now (`/readyz`), answered within `WITHIN` seconds
whatever its store is doing: a database that black-holes packets, refuses connections,
answers slowly or is locked by another writer.

One probe of the store runs at a time (`Store.check_ready` where the store has one,
else a one-row listing); every `/readyz` that comes while it runs waits for that same
probe, at most `WITHIN` seconds, so probes never pile up on a store that hangs. A probe
still running when the time is up goes on in the background; the answer is then that
the store did not answer in time. `/healthz` never touches the store.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from ..errors import HandoffsError
from ..stores.features import ReadyCheck

log = logging.getLogger("handoffs.server.readiness")

WITHIN = 1.2
"""Seconds a `/readyz` waits for the store's probe before it answers that the store did
not answer in time (the answer then comes well within the 2 s a probe allows, on a
loaded machine too)."""

_KINDS = {"PostgresStore": "postgresql", "SQLiteStore": "sqlite", "MemoryStore": "memory"}
_LABELS = {"postgresql": "PostgreSQL", "sqlite": "SQLite"}

_REASONS = {
    "store_unavailable": "cannot be reached",
    "store_busy": "is locked by another writer",
    "store_full": "refuses writes: its disk is full",
    "store_write_failed": "refuses writes",
    "store_read_only": "refuses writes: it is read-only",
    "store_corrupt": "reported damaged data",
    "store_closed": "is closed",
}


@dataclass(frozen=True, slots=True)
class Verdict:
    """What `/readyz` answers: whether the store can serve turns, and if not, why."""

    store: str
    """The store's class: `PostgresStore`, `SQLiteStore`, `MemoryStore`, ..."""
    kind: str
    """What it is: `postgresql`, `sqlite`, `memory` (its class's name for another)."""
    code: str | None = None
    """The store's error code (`store_unavailable`, `store_busy`, ...); None: ready."""
    reason: str = ""
    """A sentence saying what is wrong (no host, port, path or database name)."""

    @property
    def ready(self) -> bool:
        return self.code is None


def kind(store: Any) -> str:
    """The name `/readyz` gives a store."""
    name = type(store).__name__
    return _KINDS.get(name, name)


class Readiness:
    """The store's probe for `/readyz`: one at a time, answered within `within`."""

    def __init__(self, store: Any, within: float = WITHIN) -> None:
        self.store = store
        self.within = within
        self._probe: asyncio.Task[None] | None = None

    async def check(self) -> Verdict:
        """The store's state, within `within` seconds."""
        store, name = type(self.store).__name__, kind(self.store)
        label = _LABELS.get(name, name)
        probe = self._probe
        if probe is None or probe.done():
            probe = self._probe = asyncio.get_running_loop().create_task(self._run())
            probe.add_done_callback(_retrieved)
        try:
            async with asyncio.timeout(self.within):
                await asyncio.shield(probe)
        except TimeoutError:
            return Verdict(store, name, "store_unavailable",
                           f"The {label} store did not answer within {self.within:g} s.")
        except HandoffsError as exc:
            if not exc.code.startswith("store_"):
                log.error("the readiness probe of the store failed (%s): %s", exc.code, exc)
            return Verdict(store, name, _code(exc.code),
                           f"The {label} store {_REASONS.get(exc.code, 'failed')}.")
        except Exception as exc:
            log.error("the readiness probe of the store failed", exc_info=exc)
            return Verdict(store, name, "store_unavailable", f"The {label} store failed.")
        return Verdict(store, name)

    async def _run(self) -> None:
        if isinstance(self.store, ReadyCheck):
            await self.store.check_ready()
        else:
            await self.store.list_sessions(1)


def _code(code: str) -> str:
    return code if code.startswith("store_") else "store_unavailable"


def _retrieved(task: asyncio.Task[None]) -> None:
    """Take a finished probe's exception, so none is reported as never retrieved (the
    `/readyz` that waited for it has answered, or stopped waiting)."""
    if not task.cancelled() and task.exception() is not None:
        log.warning("the store's readiness probe failed: %s", task.exception())
