"""A team in two deploys (`$DEPLOY_VERSION` 1 or 2), for the deploy test: version 2
renames the tool (`lookup` becomes `find_order`), changes the instructions and adds an
agent. Its model calls the first tool it is offered, then answers with the version and
the tool it used (`handoffs worker tests/temporal/deploy_team.py:runner ...`)."""

from __future__ import annotations

import json
import os

from handoffs import Agent, Handoff, Runner, Team, tool
from handoffs.core.messages import ToolCall, ToolResult, UserMessage
from handoffs.models.base import ModelRequest, ModelResponse, Usage

VERSION = os.environ.get("DEPLOY_VERSION", "1")


@tool(name="lookup" if VERSION == "1" else "find_order")
def lookup(order: str) -> str:
    """Find an order.

    Args:
        order: The order number.
    """
    return f"order {order}: shipped"


class DeployModel:
    """Calls the first tool (not a handoff) offered once per user message, then answers."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        messages = list(request.messages)
        last = max(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
        used = [m.name for m in messages[last + 1:] if isinstance(m, ToolResult)]
        own = [s.name for s in request.tools if not s.name.startswith("transfer_to_")]
        if not used and own:
            name = own[0]
            return ModelResponse("", (ToolCall(f"c-{len(messages)}", name,
                                               json.dumps({"order": "7"})),),
                                 Usage(1, 1, 1), "deploy")
        return ModelResponse(f"v{VERSION} used {','.join(used)}", (), Usage(1, 1, 1),
                             "deploy")


agents = [Agent("desk", instructions=f"Help with orders (deploy {VERSION}).",
                tools=[lookup], handoffs=[Handoff("refunds")] if VERSION == "2" else [])]
if VERSION == "2":
    agents.append(Agent("refunds", instructions="Refund orders."))
team = Team(agents)


def runner() -> Runner:
    """The team on its model, with the store `$FLOW_STORE`."""
    return Runner(team, model=DeployModel(), store=os.environ.get("FLOW_STORE"))
