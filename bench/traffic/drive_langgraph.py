"""LangGraph + langgraph-swarm on the traffic scenario, through `langchain_openai.ChatOpenAI`.

Model: `ChatOpenAI(model, base_url=<server>, api_key=...)`, shared by the agents (each binds
its own tools). Agents: `langchain.agents.create_agent(model, tools=[tool(fn),
create_handoff_tool(agent_name=target, description=...)], system_prompt=instructions,
name=...)`, in `create_swarm(..., default_active_agent="triage")`, compiled with an
`InMemorySaver` checkpointer and one `thread_id` per conversation (the swarm keeps the
messages and `active_agent` there, so the agent that took over answers the next turn).
The handoff tool's description is the target's description, worded as handoffs words it.
Checks read the last message (an `AIMessage` named for the active agent) and
`result["active_agent"]`.

Run inside .bench-venvs/langgraph.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import driver
import scenario
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph_swarm import create_handoff_tool, create_swarm


class LangGraphDriver(driver.Driver):
    framework = "langgraph"
    version = (f"langgraph {version('langgraph')}, langgraph-swarm {version('langgraph-swarm')}, "
               f"langchain-openai {version('langchain-openai')}")

    def __init__(self, args: argparse.Namespace) -> None:
        super().__init__(args)
        self.tools = {name: tool(fn) for name, fn in scenario.TOOL_FUNCTIONS.items()}

    async def conversation(self, base_url: str, conv: int) -> Any:
        model = ChatOpenAI(model=scenario.MODEL, base_url=base_url, api_key=driver.API_KEY)
        agents = []
        for a in scenario.AGENTS:
            handoffs = [
                create_handoff_tool(
                    agent_name=h,
                    description=f"Hand the conversation to {h}: {scenario.AGENT[h].description}")
                for h in a.handoffs
            ]
            agents.append(create_agent(model, tools=[*(self.tools[t] for t in a.tools), *handoffs],
                                       system_prompt=a.instructions, name=a.name))
        app = create_swarm(agents, default_active_agent=scenario.ENTRY).compile(
            checkpointer=InMemorySaver())
        return {"app": app, "config": {"configurable": {"thread_id": f"conv-{conv}"}}}

    async def turn(self, conv: Any, text: str) -> Any:
        return await conv["app"].ainvoke({"messages": [{"role": "user", "content": text}]},
                                         conv["config"])

    async def outcome(self, conv: Any, result: Any) -> driver.Answer:
        last = result["messages"][-1]
        active = result.get("active_agent") or scenario.ENTRY
        if not isinstance(last, AIMessage) or last.name != active:
            raise driver.CheckFailed(f"last message {type(last).__name__} from "
                                     f"{getattr(last, 'name', None)!r}, active {active!r}")
        return driver.Answer(str(last.content), active)


if __name__ == "__main__":
    driver.main(LangGraphDriver)
