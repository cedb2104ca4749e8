"""OpenAI Agents SDK on the traffic scenario, through its own Chat Completions model class.

Model: `OpenAIChatCompletionsModel(model, openai_client=AsyncOpenAI(base_url=<server>))` on
every agent. Agents: `Agent(name, instructions, handoff_description=description,
tools=[function_tool(fn)], handoffs=[...])`. Conversation: one in-memory `SQLiteSession` (the
SDK's session), and each turn starts at the previous turn's `result.last_agent` (the SDK's
documented way to keep talking to the agent that took over). Checks read
`result.final_output` and `result.last_agent.name`. Tracing is off.

Run inside .bench-venvs/openai-agents.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver
import scenario
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    SQLiteSession,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI


class OpenAIAgentsDriver(driver.Driver):
    framework = "openai-agents"
    version = version("openai-agents")

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(args)
        set_tracing_disabled(True)  # nothing to export to; we measure the model traffic
        self.tools = {name: function_tool(fn) for name, fn in scenario.TOOL_FUNCTIONS.items()}

    async def conversation(self, base_url: str, conv: int) -> Any:
        client = AsyncOpenAI(base_url=base_url, api_key=driver.API_KEY)
        model = OpenAIChatCompletionsModel(model=scenario.MODEL, openai_client=client)
        agents: dict[str, Agent[Any]] = {
            a.name: Agent(name=a.name, instructions=a.instructions,
                          handoff_description=a.description,
                          tools=[self.tools[t] for t in a.tools], model=model)
            for a in scenario.AGENTS
        }
        for a in scenario.AGENTS:  # routes point both ways, so they are set afterwards
            agents[a.name].handoffs = [agents[h] for h in a.handoffs]
        return {"agent": agents[scenario.ENTRY], "session": SQLiteSession(f"conv-{conv}"),
                "client": client}

    async def turn(self, conv: Any, text: str) -> Any:
        result = await Runner.run(conv["agent"], text, session=conv["session"])
        conv["agent"] = result.last_agent
        return result

    async def outcome(self, conv: Any, result: Any) -> driver.Answer:
        return driver.Answer(str(result.final_output), result.last_agent.name)

    async def close(self, conv: Any) -> None:
        conv["session"].close()
        await conv["client"].close()


if __name__ == "__main__":
    driver.main(OpenAIAgentsDriver)
