"""An optional limit per client on what costs the server most: new sessions and turns.

A token bucket per client address: `Rate(30, 60)` lets a client start 30 sessions or
turns at once, then one every 2 seconds. The operator key is never limited. The address
is the connection's peer, or the `X-Forwarded-For` of a proxy that uvicorn trusts
(`--forwarded-allow-ips`); each server process keeps its own buckets.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from ..errors import HandoffsError

_PERIODS = {"s": 1.0, "sec": 1.0, "second": 1.0, "seconds": 1.0, "m": 60.0, "min": 60.0,
            "minute": 60.0, "minutes": 60.0, "h": 3600.0, "hour": 3600.0, "hours": 3600.0}
_FORM = re.compile(r"^(\d+)/(\d+(?:\.\d+)?)?([a-z]+)$")

MAX_CLIENTS = 10_000
"""Buckets kept at most: beyond, the full ones (clients idle for a whole period) are
dropped, then, if that is not enough, the oldest quarter (those clients start afresh)."""


@dataclass(slots=True, frozen=True)
class Rate:
    """At most `count` requests per `per` seconds, with bursts of up to `count`."""

    count: int
    per: float

    @classmethod
    def parse(cls, text: str) -> Rate:
        """`"30/min"`, `"5/s"`, `"1000/h"`, `"10/30s"`; `invalid_argument` otherwise."""
        m = _FORM.match(text.replace(" ", "").lower())
        unit = _PERIODS.get(m.group(3)) if m else None
        if m is None or unit is None or int(m.group(1)) < 1 or \
                (m.group(2) is not None and float(m.group(2)) <= 0):
            raise HandoffsError(f"Invalid rate limit {text!r}: write N/PERIOD with PERIOD "
                                "s, min or h (e.g. 30/min, 5/s, 10/30s).",
                                code="invalid_argument")
        return cls(int(m.group(1)), unit * float(m.group(2) or 1))


class RateLimiter:
    """The buckets of every client of one process."""

    def __init__(self, rate: Rate) -> None:
        self.rate = rate
        self._buckets: dict[str, tuple[float, float]] = {}
        """Per client: tokens left, and when they were counted."""

    def take(self, client: str) -> float:
        """Spend one token of `client`'s bucket: 0.0 when it had one, else the seconds
        until it has one again (and nothing is spent)."""
        now = time.monotonic()
        count, per = self.rate.count, self.rate.per
        tokens, then = self._buckets.get(client, (float(count), now))
        tokens = min(float(count), tokens + (now - then) * count / per)
        if tokens < 1.0:
            self._buckets[client] = (tokens, now)
            return (1.0 - tokens) * per / count
        if client not in self._buckets and len(self._buckets) >= MAX_CLIENTS:
            self._forget_full(now)
        self._buckets[client] = (tokens - 1.0, now)
        return 0.0

    def _forget_full(self, now: float) -> None:
        """Drop the buckets that have refilled: those clients start afresh anyway."""
        count, per = self.rate.count, self.rate.per
        buckets = self._buckets
        full = [c for c, (t, then) in buckets.items() if t + (now - then) * count / per >= count]
        for c in full:
            del buckets[c]
        if len(buckets) >= MAX_CLIENTS:  # a flood of addresses: bounded all the same
            for c in list(buckets)[:MAX_CLIENTS // 4]:
                del buckets[c]
