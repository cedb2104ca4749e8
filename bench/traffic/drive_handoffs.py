"""handoffs on the traffic scenario: `Runner` with our own `OpenAIModel` at the server's URL.

Every route (triage -> billing, triage -> shipping, billing -> triage, shipping -> triage) is a
`Handoff(..., history=<view>)`, one view per run (`--view own_tools|full|conversation|last_user|
summary`; `own_tools` is the default view);
`summary` makes its summary with the source agent's model (the same server), once per handoff.
Tools are `@tool` over the scenario's functions. The session lives in the default in-memory
store; the active agent sticks from turn to turn. Checks read `RunResult.output` and
`RunResult.agent`.

    PYTHONPATH=src .venv/bin/python bench/traffic/drive_handoffs.py \
        --base-url http://127.0.0.1:PORT/c{conv}/v1 --view own_tools
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver
import scenario

import handoffs
from handoffs import Agent, Handoff, Runner, Team, tool
from handoffs.models.openai import OpenAIModel

VIEWS = ("own_tools", "full", "conversation", "last_user", "summary")


def build_team(view: str) -> Team:
    tools = {name: tool(fn) for name, fn in scenario.TOOL_FUNCTIONS.items()}
    agents = [
        Agent(a.name, instructions=a.instructions, description=a.description,
              tools=[tools[t] for t in a.tools],
              handoffs=[Handoff(h, history=view) for h in a.handoffs])  # type: ignore[arg-type]
        for a in scenario.AGENTS
    ]
    return Team(agents, entry=scenario.ENTRY)


class HandoffsDriver(driver.Driver):
    framework = "handoffs"
    version = handoffs.__version__

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(args)
        self.team = build_team(args.view)

    def label(self) -> str:
        return f"handoffs ({self.args.view})"

    async def conversation(self, base_url: str, conv: int) -> Any:
        model = OpenAIModel(scenario.MODEL, base_url=base_url, api_key=driver.API_KEY)
        return {"runner": Runner(self.team, model=model), "session": f"conv-{conv}"}

    async def turn(self, conv: Any, text: str) -> Any:
        return await conv["runner"].run(conv["session"], text)

    async def outcome(self, conv: Any, result: Any) -> driver.Answer:
        if result.error is not None:
            raise driver.CheckFailed(f"run failed: {result.error}")
        return driver.Answer(result.output, result.agent)


if __name__ == "__main__":
    driver.main(HandoffsDriver, views=VIEWS)
