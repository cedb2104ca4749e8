"""A front desk whose support is another server's team, reached over A2A: `desk` hands
the first message to `support`, a RemoteAgent at $HANDOFFS_REMOTE_URL (a `handoffs serve
--a2a`), which answers from then on. Served by test_two_servers.py."""

from __future__ import annotations

import os

from handoffs import Agent, RemoteAgent, Runner, Team
from handoffs.testing import ScriptedModel, transfer


def make_runner() -> Runner:
    desk = Agent("desk", description="The front desk.", instructions="Send to support.",
                 handoffs=["support"], icon="🛎️")
    support = RemoteAgent("support", os.environ["HANDOFFS_REMOTE_URL"],
                          display_name="Support (remote)", icon="🌐", color="#0f766e")
    model = ScriptedModel([transfer("support", reason="The customer needs support.")])
    return Runner(Team([desk, support]), model=model)
