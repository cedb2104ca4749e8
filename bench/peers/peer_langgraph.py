"""LangGraph peer: ``langgraph_swarm.create_swarm`` over ``langchain.agents.create_agent`` agents.

Handoff trigger: each agent gets ``create_handoff_tool(agent_name="agent_{i+1}")`` as its tool;
its scripted ``BaseChatModel`` returns an ``AIMessage`` with one tool call to that tool
(``transfer_to_agent_{i+1}``, a name it takes from the tools bound by ``create_agent``). The tool
returns langgraph-swarm's ``Command(goto=..., graph=Command.PARENT)``. Checks read the swarm's
output state: ``active_agent``, the last message, and the handoff ``ToolMessage``s.

Figures ``per_handoff`` / ``turn`` compile the swarm without a checkpointer (orchestration only);
``persisted_turn`` uses ``AsyncSqliteSaver`` on a temp file; ``memory`` uses ``InMemorySaver``
with one ``thread_id`` per conversation.

Run inside .bench-venvs/langgraph: ``python bench/peers/peer_langgraph.py --figure turn``.
"""

from __future__ import annotations

import itertools
import os
import sys
from contextlib import AsyncExitStack
from importlib.metadata import version
from typing import Any

# No LangSmith tracing (network is closed; we measure orchestration only).
os.environ["LANGSMITH_TRACING"] = "false"
os.environ["LANGCHAIN_TRACING_V2"] = "false"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from common import ANSWER, Adapter, Turn, agent_name, expect, main
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph_swarm import create_handoff_tool, create_swarm

_ids = itertools.count()


class ScriptedChatModel(BaseChatModel):
    """Zero-latency chat model: call the handoff tool to ``target``, or answer."""

    target: str | None = None
    tool_names: tuple[str, ...] = ()

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.model_copy(update={"tool_names": tuple(t.name for t in tools)})

    def _reply(self) -> ChatResult:
        if self.target is None:
            msg = AIMessage(content=ANSWER)
        else:
            (name,) = [n for n in self.tool_names if n == f"transfer_to_{self.target}"]
            msg = AIMessage(
                content="", tool_calls=[{"name": name, "args": {}, "id": f"call_{next(_ids)}"}]
            )
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return self._reply()

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        return self._reply()


class LangGraphSwarmAdapter(Adapter):
    framework = "langgraph-swarm"
    version = f"langgraph {version('langgraph')}, langgraph-swarm {version('langgraph-swarm')}"
    import_module = "langgraph_swarm, langchain.agents"

    def _workflow(self, hops: int) -> Any:
        agents = []
        for i in range(hops + 1):
            target = agent_name(i + 1) if i < hops else None
            tools = [create_handoff_tool(agent_name=target)] if target else []
            agents.append(
                create_agent(
                    ScriptedChatModel(target=target),
                    tools=tools,
                    system_prompt=f"You are {agent_name(i)}.",
                    name=agent_name(i),
                )
            )
        return create_swarm(agents, default_active_agent=agent_name(0))

    async def build(self, hops: int, persisted: str | None = None) -> Any:
        stack = AsyncExitStack()
        checkpointer: Any = None
        if persisted is not None:
            checkpointer = await stack.enter_async_context(
                AsyncSqliteSaver.from_conn_string(persisted)
            )
        app = self._workflow(hops).compile(checkpointer=checkpointer)
        return {"app": app, "stack": stack, "checkpointed": checkpointer is not None}

    async def close(self, team: Any) -> None:
        await team["stack"].aclose()

    async def conversation(self, shared: Any, hops: int, conv: int) -> Any:
        # Memory figure: one in-memory checkpointer shared by the server, one thread per
        # conversation (compiled once, as a server would).
        if "memory_app" not in shared:
            shared["memory_app"] = self._workflow(hops).compile(checkpointer=InMemorySaver())
        return {"app": shared["memory_app"], "checkpointed": True, "thread": f"conv-{conv}"}

    async def turn(self, team: Any, conv: int) -> Any:
        config = {"recursion_limit": 1000}
        if team["checkpointed"]:
            config["configurable"] = {"thread_id": team.get("thread", f"conv-{conv}")}
        return await team["app"].ainvoke({"messages": [{"role": "user", "content": "go"}]}, config)

    async def inspect(self, team: Any, result: Any, conv: int) -> Turn:
        msgs = result["messages"]
        transfers = [
            m for m in msgs if isinstance(m, ToolMessage) and m.name.startswith("transfer_to_")
        ]
        for k, m in enumerate(transfers):
            expect(m.name == f"transfer_to_{agent_name(k + 1)}", f"handoff {k} used {m.name}")
        last = msgs[-1]
        expect(isinstance(last, AIMessage), f"last message is {type(last).__name__}")
        # Without any handoff the swarm never writes ``active_agent``: its router then runs
        # ``default_active_agent`` (agent_0), so that is the framework's own answer for H=0.
        active = result.get("active_agent") or agent_name(0)
        expect(last.name == active, f"last message from {last.name!r}, active {active!r}")
        return Turn(str(last.content), active, len(transfers))


if __name__ == "__main__":
    main(
        LangGraphSwarmAdapter,
        figures=("per_handoff", "turn", "memory", "import", "persisted_turn"),
    )
