"""The processes of the approval crash test (a test kills the second one).

    python approval_crash.py STORE_URL pause [delegated]
        pauses session "s" on `refund` and prints its status and call id
    python approval_crash.py STORE_URL approve CALL_ID [delegated]
        approves the call: `refund` runs (appending "refund <order> call <call id>" to
        $APPROVAL_MARKS), then the agent's next model call hangs for a minute

triage hands off to billing (one-way), or delegates to it (`delegated`); billing's
`refund` needs a person's approval.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from handoffs import Agent, Handoff, RunContext, Runner, Team, tool
from handoffs.models.base import ModelRequest, ModelResponse
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool(needs_approval=True)
def refund(ctx: RunContext, order_id: str) -> str:
    """Refund an order."""
    with Path(os.environ["APPROVAL_MARKS"]).open("a") as f:
        f.write(f"refund {order_id} call {getattr(ctx, 'call_id', None)}\n")
    return f"refunded {order_id}"


def team(delegated: bool) -> Team:
    route = Handoff("billing", returns=True) if delegated else "billing"
    return Team([Agent("triage", handoffs=[route]),
                 Agent("billing", tools=[refund], handoffs=[] if delegated else ["triage"])])


class Hangs:
    """Every model call waits a minute."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.sleep(60)
        return await ScriptedModel([reply("too late")]).complete(request)

    async def stream(self, request: ModelRequest) -> Any:
        yield await self.complete(request)


class Answers:
    """Every model call answers at once, saying what it read last."""

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await ScriptedModel([reply(f"{request.agent} carries on")]).complete(request)

    async def stream(self, request: ModelRequest) -> Any:
        yield await self.complete(request)


async def main(url: str, what: str, args: list[str]) -> None:
    delegated = "delegated" in args
    if what == "pause":
        model: Any = ScriptedModel({"triage": [transfer("billing", task="refund A-1")],
                                    "billing": [call("refund", order_id="A-1")]})
        runner = Runner(team(delegated), model=model, store=url)
        result = await runner.run("s", "refund A-1 please")
        asked = [e for e in result.events if e.type == "approval_requested"]
        print(result.status.value, asked[0]["call_id"], flush=True)
    else:
        runner = Runner(team(delegated), model=Hangs(), store=url)
        await runner.approve("s", args[0])
    await runner.store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3:]))
    os._exit(0)
