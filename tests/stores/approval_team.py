"""The team of the approval restart test, shared by the test and the process it kills.

    python approval_team.py STORE_URL     # pauses session "s" and prints the call id
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from handoffs import Agent, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply, transfer


@tool(needs_approval=True)
def refund(order_id: str) -> str:
    """Refund an order."""
    marks = Path(os.environ.get("APPROVAL_MARKS", "approval-marks"))  # read per call
    with marks.open("a") as f:
        f.write(f"refund {order_id} in {os.getpid()}\n")
    return f"refunded {order_id}"


def team() -> Team:
    return Team([Agent("triage", handoffs=["billing"]),
                 Agent("billing", tools=[refund], handoffs=["triage"])])


async def pause(url: str) -> None:
    model = ScriptedModel({"triage": [transfer("billing")],
                           "billing": [call("refund", order_id="A-1")]})
    runner = Runner(team(), model=model, store=url)
    result = await runner.run("s", "refund A-1 please")
    asked = [e for e in result.events if e.type == "approval_requested"]
    print(result.status.value, asked[0]["call_id"], flush=True)
    await runner.store.close()


def continued_model() -> ScriptedModel:
    return ScriptedModel([reply("A-1 is refunded.")])


if __name__ == "__main__":
    asyncio.run(pause(sys.argv[1]))
    os._exit(0)  # like a process that is stopped: no clean-up of anything else
