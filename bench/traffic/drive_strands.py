"""Strands Agents `multiagent.Swarm` on the traffic scenario, through its `OpenAIModel`.

Model: `strands.models.openai.OpenAIModel(client_args={"base_url": <server>, ...},
model_id=...)`, one per agent (it always streams). Agents: `Agent(name=..., model=...,
system_prompt=instructions, description=..., tools=[tool(fn)], callback_handler=None)`, in
`Swarm(agents)`; the Swarm gives every agent its `handoff_to_agent` tool (any agent may hand
to any other: Strands has no declared routes) and lists the other agents and their
descriptions in each agent's input. One Swarm per conversation, `invoke_async(text)` per turn.

What Strands does differently, as designed: every invocation starts at the entry agent
(triage) and resets every agent's messages, so a Swarm has no memory of earlier turns and
triage routes each turn again; and an agent that hands off is asked once more after the
handoff tool's result, and ends its turn with a short text, before the Swarm moves on.

Checks read the `SwarmResult`: `status == COMPLETED`, the last node of `node_history` (the
answering agent) and the text of its `AgentResult`.

Run inside .bench-venvs/strands.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ["OTEL_SDK_DISABLED"] = "true"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver
import scenario
from strands import Agent, tool
from strands.models.openai import OpenAIModel
from strands.multiagent import Swarm
from strands.multiagent.base import Status


class StrandsDriver(driver.Driver):
    framework = "strands"
    version = version("strands-agents")

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(args)
        self.tools = {name: tool(fn) for name, fn in scenario.TOOL_FUNCTIONS.items()}

    async def conversation(self, base_url: str, conv: int) -> Any:
        agents = [
            Agent(name=a.name, description=a.description, system_prompt=a.instructions,
                  model=OpenAIModel(client_args={"base_url": base_url,
                                                 "api_key": driver.API_KEY},
                                    model_id=scenario.MODEL),
                  tools=[self.tools[t] for t in a.tools],
                  callback_handler=None)  # the default handler prints every streamed chunk
            for a in scenario.AGENTS
        ]
        return Swarm(agents)

    async def turn(self, conv: Any, text: str) -> Any:
        return await conv.invoke_async(text)

    async def outcome(self, conv: Any, result: Any) -> driver.Answer:
        if result.status != Status.COMPLETED:
            raise driver.CheckFailed(f"swarm status {result.status}")
        last = result.node_history[-1].node_id
        message = result.results[last].result.message
        text = "".join(block.get("text", "") for block in message["content"])
        return driver.Answer(text, last)


if __name__ == "__main__":
    driver.main(StrandsDriver)
