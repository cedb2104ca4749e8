"""A separate OS process that runs one turn on a shared store (for the cross-process tests).

    python worker.py STORE_URL SESSION_ID TEXT MODE READY_FILE

MODE `slow`: the turn's tool creates READY_FILE, sleeps 0.5 s, and the agent answers
"answer to TEXT". MODE `hang`: the tool creates READY_FILE and sleeps for a minute, so
the test can kill the process mid-turn. Prints the answer on success. With
`$IDEMPOTENCY_KEY` set, the message is sent with that idempotency key.
"""

from __future__ import annotations

import asyncio
import os
import pathlib
import sys

from handoffs import Agent, Runner, Team, tool
from handoffs.testing import ScriptedModel, call, reply


async def main(url: str, session_id: str, text: str, mode: str, ready: str) -> None:
    @tool
    async def work() -> str:
        """Do the slow part of the job."""
        pathlib.Path(ready).touch()
        await asyncio.sleep(0.5 if mode == "slow" else 60)
        return "worked"

    team = Team([Agent("triage", tools=[work], handoffs=["billing"]), Agent("billing")])
    model = ScriptedModel([call("work"), reply(f"answer to {text}")])
    runner = Runner(team, model=model, store=url)
    try:
        result = await runner.run(session_id, text,
                                  idempotency_key=os.environ.get("IDEMPOTENCY_KEY"))
        print(result.output, flush=True)
    finally:
        await runner.store.close()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
