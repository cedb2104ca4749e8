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


async def stats_command(url: str, since: str | None, as_json: bool,
                        prices: str | None = None, guardrails: bool = False) -> int:
    """Print the per-route handoff statistics of the store at `url`; with a price
    table (`prices`, a JSON file), what each conversation cost; with `guardrails`, each
    guardrail's checks, trips and replies."""
    from ..models.prices import Prices
    from ..stores import open_store
    from ..stores.costs import conversation_costs
    from ..stores.stats import format_stats

    table = Prices.load(prices) if prices is not None else None  # a bad one: before anything
    start = parse_since(since)
    store = open_store(url)
    try:
        stats = await store.handoff_stats(since=start)
        costs = None if table is None else await conversation_costs(store, table, start)
        checks = None
        if guardrails:
            from ..stores.guardrail_counts import guardrail_counts

            checks = await guardrail_counts(store, start)
    finally:
        await store.close()
    if as_json:
        data = stats.to_dict()
        if costs is not None:
            data["cost"] = costs.to_dict()
        if checks is not None:
            data["guardrails"] = checks.to_dict()
        print(json.dumps(data, indent=2))
    else:
        print(format_stats(stats))
        if costs is not None:
            print()
            print(costs.text())
        if checks is not None:
            print()
            print(checks.text())
    return 0
