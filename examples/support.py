"""Run the support team (triage, billing, policy desk, refunds, technical, a human operator).

    python examples/support.py                          # scripted model, offline
    python examples/support.py openai:gpt-4.1-mini      # a real provider (needs its key)

The team itself is defined in `handoffs.examples.support` (so `handoffs demo` ships it);
read that module to see the agents, routes, tools and payloads.
"""

from __future__ import annotations

import asyncio
import sys

from handoffs.demo import run_demo

if __name__ == "__main__":
    model = sys.argv[1] if len(sys.argv) > 1 else None
    raise SystemExit(asyncio.run(run_demo(model=model, scripted=model is None)))
