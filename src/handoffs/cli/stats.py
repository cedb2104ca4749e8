"""`handoffs stats`: which routes fail and why, from what the store already holds."""

from __future__ import annotations

import json
import time


def parse_since(text: str | None) -> float | None:
    """`--since 24h` / `7d` / `30m` ago, or a Unix time; None: unbounded."""
    if text is None:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    if text[-1:] in units and text[:-1].replace(".", "", 1).isdigit():
        return time.time() - float(text[:-1]) * units[text[-1]]
    try:
        return float(text)
    except ValueError:
        from ..errors import HandoffsError

        raise HandoffsError(f"--since takes a duration (30m, 24h, 7d) or a Unix time, not "
                            f"{text!r}.", code="invalid_argument") from None


async def stats_command(url: str, since: str | None, as_json: bool) -> int:
    """Print the per-route handoff statistics of the store at `url`."""
    from ..stores import open_store
    from ..stores.stats import format_stats

    store = open_store(url)
    try:
        stats = await store.handoff_stats(since=parse_since(since))
    finally:
        await store.close()
    print(json.dumps(stats.to_dict(), indent=2) if as_json else format_stats(stats))
    return 0
