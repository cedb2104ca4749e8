"""The support team with one of issue 23's routing changes turned off, for ablations on a
real model (docs/benchmarks.md, "Routing on a real small model"):

    .venv/bin/python bench/eval_real.py --team bench/eval_variants.py:no_narration --sample 16

- `no_instructions`: no handoff instructions in the system text
  (`Team(handoff_instructions=False)`);
- `no_narration`: a turn whose model only says it will hand off is not nudged to call the
  tool (`HandoffPolicy(narrated_handoffs=False)`);
- `no_convergence`: no limit on steps that make no progress
  (`HandoffPolicy(max_failed_steps=None)`): a stuck turn runs to `max_steps`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from handoffs import Team
from handoffs.examples.support import build_team


def _rebuilt(**changes: Any) -> Team:
    team = build_team()
    args: dict[str, Any] = {"agents": team.agents, "entry": team.entry,
                            "fallback": team.fallback, "policy": team.policy}
    args.update(changes)
    return Team(**args)


no_instructions = _rebuilt(handoff_instructions=False)
no_narration = _rebuilt(policy=replace(build_team().policy, narrated_handoffs=False))
no_convergence = _rebuilt(policy=replace(build_team().policy, max_failed_steps=None))
