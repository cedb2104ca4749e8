"""AutoGen AgentChat `Swarm` on the traffic scenario, through autogen-ext's OpenAI client.

Model: `OpenAIChatCompletionClient(model, base_url=<server>, api_key=...)`, shared by the
agents. Agents: `AssistantAgent(name, model_client, tools=[fn], handoffs=[Handoff(target,
description=...)], system_message=instructions, description=...)`; the two agents with tools
have `reflect_on_tool_use=True`, so that the model writes the answer after the tool's result
(AgentChat's default without it is to return the raw tool result as the agent's reply).
Team: `Swarm(agents, termination_condition=TextMessageTermination(<each agent>) | ...)`: a
turn ends at the first text answer of any agent. `team.run(task=text)` per turn on the same
team: AgentChat teams keep the thread and the current speaker between runs. Checks read
the last `TextMessage` of `TaskResult.messages` (`content`, `source`).

Run inside .bench-venvs/autogen.
"""

from __future__ import annotations

import os
import sys
from functools import reduce
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ["AUTOGEN_DISABLE_RUNTIME_TRACING"] = "true"
os.environ["OTEL_SDK_DISABLED"] = "true"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver
import scenario
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.base import Handoff
from autogen_agentchat.conditions import TextMessageTermination
from autogen_agentchat.messages import TextMessage
from autogen_agentchat.teams import Swarm
from autogen_ext.models.openai import OpenAIChatCompletionClient


class AutogenDriver(driver.Driver):
    framework = "autogen"
    version = f"{version('autogen-agentchat')} (autogen-ext {version('autogen-ext')})"

    async def conversation(self, base_url: str, conv: int) -> Any:
        client = OpenAIChatCompletionClient(model=scenario.MODEL, base_url=base_url,
                                            api_key=driver.API_KEY)
        agents = [
            AssistantAgent(
                a.name, model_client=client, system_message=a.instructions,
                description=a.description,
                tools=[scenario.TOOL_FUNCTIONS[t] for t in a.tools],
                reflect_on_tool_use=bool(a.tools),
                handoffs=[Handoff(target=h, description=f"Hand the conversation to {h}: "
                                  f"{scenario.AGENT[h].description}") for h in a.handoffs],
            )
            for a in scenario.AGENTS
        ]
        stop = reduce(lambda x, y: x | y,
                      [TextMessageTermination(source=a.name) for a in scenario.AGENTS])
        return {"team": Swarm(agents, termination_condition=stop, max_turns=20),
                "client": client}

    async def turn(self, conv: Any, text: str) -> Any:
        return await conv["team"].run(task=text)

    async def outcome(self, conv: Any, result: Any) -> driver.Answer:
        last = result.messages[-1]
        if not isinstance(last, TextMessage):
            raise driver.CheckFailed(f"last message is {type(last).__name__}: "
                                     f"{result.stop_reason}")
        return driver.Answer(last.content, last.source)

    async def close(self, conv: Any) -> None:
        await conv["client"].close()


if __name__ == "__main__":
    driver.main(AutogenDriver)
