"""The team of the approval restart test, shared by the test and the process it kills.

    python approval_team.py STORE_URL     # pauses session "s" and prints the call id
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from handoffs import Agent, Handoff, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    marks = Path(os.environ.get("APPROVAL_MARKS", "approval-marks"))  # read per call
    with marks.open("a") as f:
        f.write(f"refund {order_id} in {os.getpid()}\n")
    return f"refunded {order_id}"


def team(delegated: bool = False) -> Team:
    """triage hands off to billing (one-way), or delegates to it (`delegated`)."""
    route = Handoff("billing", returns=True) if delegated else "billing"
    return Team([Agent("triage", handoffs=[route]),
                 Agent("billing", tools=[refund], handoffs=[] if delegated else ["triage"])])


async def pause(url: str, delegated: bool) -> None:
    model = ScriptedModel({"triage": [transfer("billing", task="refund A-1")],
                           "billing": [call("refund", order_id="A-1")]})
    runner = Runner(team(delegated), model=model, store=url)
    result = await runner.run("s", "refund A-1 please")
    asked = [e for e in result.events if e.type == "approval_requested"]
    print(result.status.value, asked[0]["call_id"], flush=True)
    await runner.store.close()


def continued_model(delegated: bool = False) -> ScriptedModel:
    if delegated:  # the delegate answers its caller, which answers the user
        return ScriptedModel({"billing": [reply("Done: A-1.")],
                              "triage": [reply("A-1 is refunded.")]})
    return ScriptedModel([reply("A-1 is refunded.")])


if __name__ == "__main__":
    asyncio.run(pause(sys.argv[1], sys.argv[2:] == ["delegated"]))
    os._exit(0)  # like a process that is stopped: no clean-up of anything else
